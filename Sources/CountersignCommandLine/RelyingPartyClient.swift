import CountersignCore
import CountersignKit
import Crypto
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Sends form posts to the server as a confidential client, authenticated with
/// `client_secret_basic`, or with `private_key_jwt` (a JWT signed with the client's key for each
/// request, RFC 7523 §2.2).
package struct RelyingPartyClient: Sendable {
    package static let cibaGrantType = "urn:openid:params:grant-type:ciba"
    package static let assertionType = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"

    /// How the client proves who it is.
    package enum Credentials: Sendable {
        case secret(String)
        /// Its P-256 key (raw representation) and the `kid` of its public half.
        case privateKey(Data, keyID: String)
    }

    package let base: String
    let clientID: String
    let credentials: Credentials
    let transport: any HTTPTransport

    package init(base: String, clientID: String, clientSecret: String, transport: any HTTPTransport) {
        self.init(base: base, clientID: clientID, credentials: .secret(clientSecret), transport: transport)
    }

    package init(base: String, clientID: String, credentials: Credentials, transport: any HTTPTransport) {
        self.base = base
        self.clientID = clientID
        self.credentials = credentials
        self.transport = transport
    }

    /// An OAuth error answer: `error` and `error_description`. Shown as `error: <code>: <text>`.
    package struct Refusal: Error, CustomStringConvertible {
        package let status: Int
        package let code: String
        package let text: String?

        package var description: String { "error: \(code)" + (text.map { ": \($0)" } ?? "") }

        /// A 5xx: the server could not answer now (a database outage, a proxy without its
        /// upstream), which says nothing of the request itself.
        package var isServerTrouble: Bool { status >= 500 }
    }

    /// Posts `form` to `path` and returns the JSON object of a 2xx answer; any other answer
    /// throws a `Refusal`, and no answer at all a `ConnectionFailure`.
    package func post(_ path: String, _ form: [String: String]) async throws -> [String: Any] {
        guard let url = URL(string: base + path) else { throw TerminalFailure("cannot make a URL of \(base + path)") }
        var request = URLRequest(url: url)
        request.httpMethod = "POST"
        request.setValue("application/x-www-form-urlencoded", forHTTPHeaderField: "Content-Type")
        request.setValue("application/json", forHTTPHeaderField: "Accept")
        var form = form
        switch credentials {
        case .secret(let secret):
            request.setValue(Self.basic(clientID, secret), forHTTPHeaderField: "Authorization")
        case .privateKey(let key, let keyID):
            form["client_id"] = clientID
            form["client_assertion_type"] = Self.assertionType
            form["client_assertion"] = try assertion(key: key, keyID: keyID)
        }
        request.httpBody = Data(Self.formEncoded(form).utf8)
        let data: Data
        let response: HTTPURLResponse
        do {
            (data, response) = try await transport.send(request)
        } catch {
            throw ConnectionFailure(server: base, error: error)
        }
        let status = response.statusCode
        let object = (try? JSONSerialization.jsonObject(with: data)) as? [String: Any]
        guard (200..<300).contains(status) else {
            throw Refusal(
                status: status, code: object?["error"] as? String ?? "http_\(status)",
                text: object?["error_description"] as? String ?? (object == nil ? String(decoding: data, as: UTF8.self) : nil))
        }
        guard let object else { throw TerminalFailure("the answer to \(path) is not a JSON object") }
        return object
    }

    /// RFC 6749 §2.3.1: the id and the secret are each form-urlencoded before they are joined.
    private static func basic(_ clientID: String, _ secret: String) -> String {
        let credentials = formEncoded(clientID) + ":" + formEncoded(secret)
        return "Basic " + Data(credentials.utf8).base64EncodedString()
    }

    /// A client assertion (RFC 7523 §3): `iss` and `sub` the client, `aud` the issuer (the
    /// server's base), a minute's lifetime and a fresh `jti`.
    private func assertion(key: Data, keyID: String) throws -> String {
        let signer = try P256.Signing.PrivateKey(rawRepresentation: key)
        let now = Int64(Date().timeIntervalSince1970)
        let claims: JSONValue = .object([
            "iss": .string(clientID), "sub": .string(clientID), "aud": .string(base),
            "jti": .string(Data((0..<16).map { _ in UInt8.random(in: 0...255) }).base64URLEncodedString),
            "iat": .integer(now), "exp": .integer(now + 60),
        ])
        return try CompactJWS.sign(
            header: ["typ": .string("JWT"), "kid": .string(keyID)], payload: claims.canonicalData, signer: signer
        ).serialized
    }

    /// `application/x-www-form-urlencoded`, keys sorted so that requests are reproducible.
    static func formEncoded(_ form: [String: String]) -> String { FormEncoding.encode(form) }

    /// One name or value, form-encoded.
    static func formEncoded(_ text: String) -> String { FormEncoding.encode(text) }
}
