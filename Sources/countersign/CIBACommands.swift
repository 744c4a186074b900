import ArgumentParser
import CountersignCore
import CountersignKit
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// `countersign ciba`: a relying party of the server's CIBA endpoints (OpenID Connect CIBA Core
/// 1.0, poll mode), for trying a server out and for scripted demonstrations.
struct CIBACommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "ciba", abstract: "Act as a relying party: ask a user to approve a sign-in.",
        subcommands: [Auth.self])

    struct Auth: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Send a backchannel authentication request, and optionally wait for the tokens.",
            discussion: """
                Authenticates with client_secret_basic. With --wait, polls the token endpoint at the interval \
                the server asks for until the user approves or denies, or the request expires.
                """)

        @Option(help: "The server's URL (COUNTERSIGN_SERVER). Default http://127.0.0.1:8080.") var server: String?
        @Option(name: .customLong("client-id")) var clientID: String
        @Option(name: .customLong("client-secret"),
                help: "The client's secret (prefer COUNTERSIGN_CLIENT_SECRET: flags show up in process lists).")
        var clientSecret: String?
        @Option(help: "The user to ask (login_hint).") var user: String
        @Option(name: .customLong("binding-message"), help: "Text shown on both screens.") var bindingMessage: String?
        @Option(help: "Space-separated scopes.") var scope = "openid"
        @Option(name: .customLong("acr-values")) var acrValues: String?
        @Option(name: .customLong("requested-expiry"), help: "Seconds the request may stay open.") var requestedExpiry: Int?
        @Option(name: .customLong("authorization-details"),
                help: "RFC 9396 authorization details: a JSON array of objects, each of a type the client is registered for.")
        var authorizationDetails: String?
        @Flag(help: "Poll the token endpoint until the request is decided.") var wait = false

        func run() async throws {
            // SwiftNIO rather than URLSession: on Linux, URLSession never completes a request
            // answered 401 with a Basic challenge, which is how a wrong secret is answered.
            let transport = NIOTransport(connections: 2)
            do {
                try await authenticate(over: transport)
                try await transport.shutdown()
            } catch let refusal as RelyingPartyClient.Refusal {
                try? await transport.shutdown()
                FileHandle.standardError.write(Data((refusal.description + "\n").utf8))
                throw ExitCode.failure
            } catch {
                try? await transport.shutdown()
                throw error
            }
        }

        private func authenticate(over transport: any HTTPTransport) async throws {
            let client = try relyingParty(transport)
            var form = ["scope": scope, "login_hint": user]
            form["binding_message"] = bindingMessage
            form["acr_values"] = acrValues
            form["requested_expiry"] = requestedExpiry.map(String.init)
            form["authorization_details"] = authorizationDetails
            let started = try await client.post("/bc-authorize", form)
            guard let authReqID = started["auth_req_id"] as? String, let expiresIn = started["expires_in"] as? Int else {
                throw TerminalFailure("the server's answer lacks auth_req_id or expires_in")
            }
            // CIBA Core §7.3: a client polls every 5 seconds unless told otherwise.
            var interval = started["interval"] as? Int ?? 5
            if let number = started["match_number"] as? Int {
                // The user picks this number on their device: it must stand out from the rest.
                print("")
                print("    Number to match: \(number)")
                print("")
            }
            print("auth_req_id  \(authReqID)")
            print("expires_in   \(expiresIn)")
            print("interval     \(interval)")
            guard wait else { return }

            print("Waiting for \(user) to answer…")
            fflush(nil)
            while true {
                try await Task.sleep(for: .seconds(interval))
                do {
                    let tokens = try await client.post(
                        "/token", ["grant_type": RelyingPartyClient.cibaGrantType, "auth_req_id": authReqID])
                    print(prettyJSON(tokens))
                    if let idToken = tokens["id_token"] as? String {
                        print("ID token claims:")
                        print(try Self.claims(of: idToken))
                    }
                    return
                } catch let refusal as RelyingPartyClient.Refusal where refusal.code == "authorization_pending" {
                    continue
                } catch let refusal as RelyingPartyClient.Refusal where refusal.code == "slow_down" {
                    // CIBA Core §11: every slow_down adds five seconds to the interval, for good.
                    interval += 5
                    print("slow_down: polling every \(interval)s")
                    fflush(nil)
                }
            }
        }

        private func relyingParty(_ transport: any HTTPTransport) throws -> RelyingPartyClient {
            guard let secret = setting(clientSecret, "COUNTERSIGN_CLIENT_SECRET") else {
                throw ValidationError("a client secret is required: set COUNTERSIGN_CLIENT_SECRET or pass --client-secret")
            }
            var base = setting(server, "COUNTERSIGN_SERVER") ?? "http://127.0.0.1:8080"
            guard let url = URL(string: base), url.host != nil else { throw ValidationError("\(base) is not a URL") }
            while base.hasSuffix("/") { base.removeLast() }
            return RelyingPartyClient(base: base, clientID: clientID, clientSecret: secret, transport: transport)
        }

        /// The payload of a JWT, indented; the signature is the relying party's to check, not
        /// this tool's.
        static func claims(of jwt: String) throws -> String {
            let parts = jwt.split(separator: ".", omittingEmptySubsequences: false)
            guard parts.count == 3, let payload = Data(base64URLEncoded: String(parts[1])),
                  let claims = try? JSONSerialization.jsonObject(with: payload) else {
                throw TerminalFailure("the ID token is not a JWT")
            }
            return prettyJSON(claims)
        }
    }
}

/// Sends form posts to the server as a confidential client, authenticated with
/// `client_secret_basic`.
struct RelyingPartyClient {
    static let cibaGrantType = "urn:openid:params:grant-type:ciba"

    let base: String
    let clientID: String
    let clientSecret: String
    let transport: any HTTPTransport

    /// An OAuth error answer: `error` and `error_description`. Shown as `error: <code>: <text>`.
    struct Refusal: Error, CustomStringConvertible {
        let code: String
        let text: String?

        var description: String { "error: \(code)" + (text.map { ": \($0)" } ?? "") }
    }

    /// Posts `form` to `path` and returns the JSON object of a 2xx answer; anything else throws
    /// a `Refusal`.
    func post(_ path: String, _ form: [String: String]) async throws -> [String: Any] {
        guard let url = URL(string: base + path) else { throw TerminalFailure("cannot make a URL of \(base + path)") }
        var request = URLRequest(url: url)
        request.httpMethod = "POST"
        request.setValue("application/x-www-form-urlencoded", forHTTPHeaderField: "Content-Type")
        request.setValue("application/json", forHTTPHeaderField: "Accept")
        request.setValue(authorization, forHTTPHeaderField: "Authorization")
        request.httpBody = Data(Self.formEncoded(form).utf8)
        let data: Data
        let response: HTTPURLResponse
        do {
            (data, response) = try await transport.send(request)
        } catch {
            throw TerminalFailure("cannot reach \(base): \(error)")
        }
        let status = response.statusCode
        let object = (try? JSONSerialization.jsonObject(with: data)) as? [String: Any]
        guard (200..<300).contains(status) else {
            throw Refusal(
                code: object?["error"] as? String ?? "http_\(status)",
                text: object?["error_description"] as? String ?? (object == nil ? String(decoding: data, as: UTF8.self) : nil))
        }
        guard let object else { throw TerminalFailure("the answer to \(path) is not a JSON object") }
        return object
    }

    /// RFC 6749 §2.3.1: the id and the secret are each form-urlencoded before they are joined.
    private var authorization: String {
        let credentials = Self.formEncoded(clientID) + ":" + Self.formEncoded(clientSecret)
        return "Basic " + Data(credentials.utf8).base64EncodedString()
    }

    /// `application/x-www-form-urlencoded`, keys sorted so that requests are reproducible.
    static func formEncoded(_ form: [String: String]) -> String {
        form.sorted { $0.key < $1.key }.map { formEncoded($0.key) + "=" + formEncoded($0.value) }.joined(separator: "&")
    }

    /// The WHATWG urlencoded serializer: letters, digits and `*-._` stay, a space becomes `+`,
    /// every other byte of the UTF-8 is percent-encoded.
    static func formEncoded(_ text: String) -> String {
        var encoded = ""
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                 UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "*"), UInt8(ascii: "-"), UInt8(ascii: "."),
                 UInt8(ascii: "_"):
                encoded.unicodeScalars.append(Unicode.Scalar(byte))
            case UInt8(ascii: " "):
                encoded += "+"
            default:
                encoded += String(format: "%%%02X", byte)
            }
        }
        return encoded
    }
}
