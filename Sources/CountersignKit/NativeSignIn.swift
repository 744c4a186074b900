import CountersignCore
import Crypto
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Signs the app's user in as a native app does (RFC 8252): the authorization code flow with
/// PKCE (RFC 7636, `S256`) for a public client, whose access token, with the scope
/// `countersign:enroll`, enrolls the device without an administrator's ticket
/// (`CountersignAuthenticator.enroll(accessToken:server:…)`). The person signs in in a browser:
/// an `ASWebAuthenticationSession` on iOS, the system's browser on a terminal.
///
/// ```swift
/// let signIn = NativeSignIn(server: server, clientID: "authenticator-app")
/// let attempt = try await signIn.begin(redirectURI: "com.example.authenticator:/signed-in")
/// let callback = try await browser.open(attempt.url)   // the URL the browser was sent back to
/// let token = try await signIn.accessToken(from: callback, for: attempt)
/// ```
public struct NativeSignIn: Sendable {
    /// What the provider or its answer got wrong, in words.
    public struct Failure: Error, Sendable, Equatable, CustomStringConvertible {
        public let description: String

        public init(_ description: String) {
            self.description = description
        }
    }

    /// One sign-in under way: the URL to open, and what checks the answer.
    public struct Attempt: Sendable, Equatable {
        /// The authorization request, to open in the browser.
        public let url: URL
        /// Where the provider sends the browser back.
        public let redirectURI: String
        let state: String
        let verifier: String
        let issuer: String
        let tokenEndpoint: String
    }

    /// The tenant's issuer: its base URL.
    public let server: URL
    public let clientID: String
    public let scope: String
    let transport: any HTTPTransport

    public init(
        server: URL, clientID: String, scope: String = "openid countersign:enroll",
        transport: any HTTPTransport = URLSessionTransport()
    ) {
        self.server = server
        self.clientID = clientID
        self.scope = scope
        self.transport = transport
    }

    /// Reads the provider's metadata and makes the authorization request: a fresh PKCE verifier
    /// (256 bits) and `state` (128 bits) for each attempt.
    ///
    /// Throws `Failure` when the metadata is missing or names another issuer, and the
    /// transport's error when no answer came.
    public func begin(redirectURI: String) async throws -> Attempt {
        let metadata = try await discover()
        let verifier = Self.randomText(bytes: 32)
        let challenge = Data(SHA256.hash(data: Data(verifier.utf8))).base64URLEncodedString
        let state = Self.randomText(bytes: 16)
        guard var components = URLComponents(string: metadata.authorizationEndpoint), components.scheme != nil else {
            throw Failure("authorization_endpoint is not a URL")
        }
        components.percentEncodedQuery = FormEncoding.encode([
            "response_type": "code", "client_id": clientID, "redirect_uri": redirectURI, "scope": scope, "state": state,
            "code_challenge": challenge, "code_challenge_method": "S256",
        ])
        guard let url = components.url else { throw Failure("the authorization URL could not be built") }
        return Attempt(url: url, redirectURI: redirectURI, state: state, verifier: verifier, issuer: metadata.issuer,
                       tokenEndpoint: metadata.tokenEndpoint)
    }

    /// Checks the provider's answer (the URL the browser was sent back to) and exchanges its
    /// code for an access token. The answer must carry this attempt's `state` and name the
    /// issuer (RFC 9207); an `error` in it is reported as it came.
    public func accessToken(from callback: URL, for attempt: Attempt) async throws -> String {
        var answer: [String: String] = [:]
        for item in URLComponents(url: callback, resolvingAgainstBaseURL: false)?.queryItems ?? [] {
            answer[item.name] = item.value ?? ""
        }
        guard answer["state"] == attempt.state else {
            throw Failure("the answer's state is not this sign-in's; nothing was exchanged")
        }
        guard answer["iss"] == attempt.issuer else {
            throw Failure("the answer came from \(answer["iss"] ?? "an unnamed issuer"), not \(attempt.issuer)")
        }
        if let error = answer["error"] {
            throw Failure("sign-in failed: \(error)\(answer["error_description"].map { ": \($0)" } ?? "")")
        }
        guard let code = answer["code"] else { throw Failure("the answer holds neither a code nor an error") }
        return try await exchange(code, attempt: attempt)
    }

    private struct Metadata: Decodable {
        let issuer: String
        let authorizationEndpoint: String
        let tokenEndpoint: String

        enum CodingKeys: String, CodingKey {
            case issuer
            case authorizationEndpoint = "authorization_endpoint"
            case tokenEndpoint = "token_endpoint"
        }
    }

    /// The provider's metadata, whose issuer must be the server named (Discovery §4.3).
    private func discover() async throws -> Metadata {
        let url = server.appendingPathComponent(".well-known/openid-configuration")
        let (data, response) = try await transport.send(URLRequest(url: url))
        guard response.statusCode == 200, let metadata = try? JSONDecoder().decode(Metadata.self, from: data) else {
            throw Failure("\(url.absoluteString) answered \(response.statusCode), not OpenID Provider metadata")
        }
        guard metadata.issuer == server.absoluteString else {
            throw Failure("the metadata names the issuer \(metadata.issuer), not \(server.absoluteString)")
        }
        return metadata
    }

    private func exchange(_ code: String, attempt: Attempt) async throws -> String {
        guard let endpoint = URL(string: attempt.tokenEndpoint) else { throw Failure("token_endpoint is not a URL") }
        var request = URLRequest(url: endpoint)
        request.httpMethod = "POST"
        request.setValue("application/x-www-form-urlencoded", forHTTPHeaderField: "Content-Type")
        request.httpBody = Data(FormEncoding.encode([
            "grant_type": "authorization_code", "code": code, "redirect_uri": attempt.redirectURI,
            "code_verifier": attempt.verifier, "client_id": clientID,
        ]).utf8)
        let (data, response) = try await transport.send(request)
        let body = (try? JSONSerialization.jsonObject(with: data)) as? [String: Any]
        guard response.statusCode == 200, let token = body?["access_token"] as? String else {
            let error = body?["error"] as? String ?? "HTTP \(response.statusCode)"
            throw Failure("the token endpoint refused the code: \(error)\((body?["error_description"] as? String).map { ": \($0)" } ?? "")")
        }
        return token
    }

    private static func randomText(bytes: Int) -> String {
        var generator = SystemRandomNumberGenerator()
        return Data((0..<bytes).map { _ in UInt8.random(in: 0...255, using: &generator) }).base64URLEncodedString
    }
}
