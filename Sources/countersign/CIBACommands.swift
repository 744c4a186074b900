import ArgumentParser
import CountersignCommandLine
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
        subcommands: [Auth.self, Poll.self])

    /// Who the relying party is, and which server it asks.
    struct ClientOptions: ParsableArguments {
        @Option(help: "The server's URL (COUNTERSIGN_SERVER). Default http://localhost:8080.") var server: String?
        @Option(name: .customLong("client-id")) var clientID: String
        @Option(name: .customLong("client-secret"),
                help: "The client's secret (prefer COUNTERSIGN_CLIENT_SECRET: flags show up in process lists).")
        var clientSecret: String?

        func relyingParty(_ transport: any HTTPTransport) throws -> RelyingPartyClient {
            guard let secret = setting(clientSecret, "COUNTERSIGN_CLIENT_SECRET") else {
                throw ValidationError("a client secret is required: set COUNTERSIGN_CLIENT_SECRET or pass --client-secret")
            }
            var base = setting(server, "COUNTERSIGN_SERVER") ?? "http://localhost:8080"
            guard let url = URL(string: base), url.host != nil else { throw ValidationError("\(base) is not a URL") }
            while base.hasSuffix("/") { base.removeLast() }
            return RelyingPartyClient(base: base, clientID: clientID, clientSecret: secret, transport: transport)
        }

        /// Runs `body` with a client over a transport of its own, and prints a refusal as
        /// `error: <code>: <text>` on standard error, ending with status 1.
        func withRelyingParty(_ body: (RelyingPartyClient) async throws -> Void) async throws {
            // SwiftNIO rather than URLSession: on Linux, URLSession never completes a request
            // answered 401 with a Basic challenge, which is how a wrong secret is answered. A
            // refused connection fails at once, so that the poll can say so and try again later.
            let transport = NIOTransport(connections: 2, retryingRefusedConnections: false)
            do {
                try await body(try relyingParty(transport))
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
    }

    struct Auth: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Send a backchannel authentication request, and optionally wait for the tokens.",
            discussion: """
                Authenticates with client_secret_basic. With --wait, polls the token endpoint at the interval \
                the server asks for until the user approves or denies, or the request expires. A server that \
                cannot be reached meanwhile (a restart) is tried again with a growing delay while the request \
                can still be answered. `countersign ciba poll <auth_req_id>` resumes the wait.
                """)

        @OptionGroup var client: ClientOptions
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
            try await client.withRelyingParty(authenticate)
        }

        private func authenticate(_ client: RelyingPartyClient) async throws {
            var form = ["scope": scope, "login_hint": user]
            form["binding_message"] = bindingMessage
            form["acr_values"] = acrValues
            form["requested_expiry"] = requestedExpiry.map(String.init)
            form["authorization_details"] = authorizationDetails
            let sent = Date()
            let started = try await client.post("/bc-authorize", form)
            guard let authReqID = started["auth_req_id"] as? String, let expiresIn = started["expires_in"] as? Int else {
                throw TerminalFailure("the server's answer lacks auth_req_id or expires_in")
            }
            // CIBA Core §7.3: a client polls every 5 seconds unless told otherwise.
            let interval = started["interval"] as? Int ?? 5
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
            var poll = TokenPoll(
                client: client, authReqID: authReqID, interval: interval,
                lastChance: sent.addingTimeInterval(TimeInterval(expiresIn + interval)), waitingFor: user)
            try Self.show(try await poll.tokens())
        }

        /// The token response, then the ID token's claims.
        static func show(_ tokens: [String: Any]) throws {
            print(prettyJSON(tokens))
            if let idToken = tokens["id_token"] as? String {
                print("ID token claims:")
                print(try claims(of: idToken))
            }
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

    struct Poll: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Wait for the tokens of a request already sent (an auth_req_id from `ciba auth`).",
            discussion: """
                Polls the token endpoint as `ciba auth --wait` does, for a request sent earlier: after `ciba auth` \
                without --wait, or when its wait was stopped. The client must be the one that sent the request. \
                A request lives at most 300 seconds, so a server that cannot be reached is tried again for that \
                long at most.
                """)

        @OptionGroup var client: ClientOptions
        @Argument(help: "The auth_req_id `ciba auth` printed.") var authReqID: String
        @Option(help: "Seconds between polls: the interval `ciba auth` printed.") var interval = 5

        func validate() throws {
            guard (1...300).contains(interval) else { throw ValidationError("--interval must be 1 to 300 seconds") }
        }

        func run() async throws {
            try await client.withRelyingParty { client in
                print("Waiting for the user to answer…")
                fflush(nil)
                var poll = TokenPoll(
                    client: client, authReqID: authReqID, interval: interval,
                    lastChance: Date().addingTimeInterval(TimeInterval(Self.longestLife + interval)), waitingFor: "the user")
                try Auth.show(try await poll.tokens())
            }
        }

        /// The longest a request can live: `requested_expiry` is 1 to 300 seconds.
        static let longestLife = 300
    }
}
