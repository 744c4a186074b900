import CountersignCore
import Foundation

/// The protocol side of `GET|POST /authorize` (OpenID Connect Core §3.1.2) and of
/// `POST /par` (RFC 9126): reading and checking a request, and writing the redirect that
/// answers it. The pages between the two (sign-in, waiting for the phone) are `SignInFlow`'s.
///
/// Reading a request at `/authorize`, in order:
/// 1. the parameters are one form each (a repeated one is malformed);
/// 2. the client (`client_id`) is one of the tenant's;
/// 3. with `request_uri`, the request is the one the client pushed (unused, unexpired) and
///    every other parameter is ignored (RFC 9126 §4); a client that must push gets
///    `invalid_request` without it (§5);
/// 4. the redirect URI is registered (`AuthorizationTarget`);
/// 5. the rest (`AuthorizationRequest`).
///
/// Failures of 1–4 are `AuthorizationPageError`s, shown on a page; from 5 on, and for a
/// client that must push, they are `AuthorizationRedirect`s to the client.
struct AuthorizationEndpoint: Sendable {
    static let requestURIPrefix = "urn:ietf:params:oauth:request_uri:"
    /// How long a pushed request waits for the browser (RFC 9126 §2.2 suggests 5 to 600 s).
    static let pushedLifetime = 90

    let store: any AuthorizationStore
    let now: @Sendable () -> Date

    /// The checked request of `parameters` with its client.
    func request(_ parameters: FormParameters, tenant: Tenant, issuer: Issuer) async throws
        -> (request: AuthorizationRequest, client: Client) {
        guard let clientID = parameters["client_id"] else { throw AuthorizationPageError.missingClientID }
        guard let client = try await store.client(id: clientID, tenantID: tenant.id) else {
            throw AuthorizationPageError.unknownClient
        }
        if let requestURI = parameters["request_uri"] {
            guard requestURI.hasPrefix(Self.requestURIPrefix),
                  let pushed = try await store.takePushed(
                    handleHash: Secrets.hash(String(requestURI.dropFirst(Self.requestURIPrefix.count))),
                    clientID: client.id, tenantID: tenant.id, at: now()) else {
                throw AuthorizationPageError.invalidRequestURI
            }
            // A request pushed before the client's redirect URIs changed is checked again.
            _ = try AuthorizationTarget(client: client, redirectURI: pushed.redirectURI)
            return (pushed, client)
        }
        let target = try AuthorizationTarget(client: client, redirectURI: parameters["redirect_uri"])
        do {
            if client.requirePushedAuthorizationRequests {
                throw AuthorizationError.invalidRequest("this client must push its authorization requests to the pushed authorization request endpoint first (RFC 9126)")
            }
            return (try AuthorizationRequest(parameters, target: target), client)
        } catch let error as AuthorizationError {
            throw AuthorizationRedirect(
                redirectURI: target.redirectURI, state: parameters["state"], issuer: issuer.identifier, outcome: .error(error))
        }
    }

    /// `POST /par`: checks the request as `/authorize` would, for the authenticated client, and
    /// keeps it under a new `request_uri`.
    func push(_ form: FormParameters, client: Client) async throws -> PushedAuthorizationResponse {
        if form.contains("request_uri") {
            throw OAuthError(.invalidRequest, "request_uri must not be pushed (RFC 9126 §2.1)")
        }
        if let postedID = form["client_id"], postedID != client.id {
            throw OAuthError(.invalidRequest, "client_id names another client than the client's credentials")
        }
        let target: AuthorizationTarget
        do {
            target = try AuthorizationTarget(client: client, redirectURI: form["redirect_uri"])
        } catch {
            throw OAuthError(.invalidRequest, error.description)
        }
        let request: AuthorizationRequest
        do { request = try AuthorizationRequest(form, target: target) } catch {
            throw OAuthError(error.code, error.description)
        }
        let handle = Secrets.randomBytes(32).base64URLEncodedString
        let date = now()
        try await store.push(request, handleHash: Secrets.hash(handle), tenantID: client.tenantID, at: date,
                             expiresAt: date.addingTimeInterval(TimeInterval(Self.pushedLifetime)))
        return PushedAuthorizationResponse(requestURI: Self.requestURIPrefix + handle, expiresIn: Self.pushedLifetime)
    }

    /// A new code for `request`, stored, and the redirect that delivers it.
    func issueCode(for request: AuthorizationRequest, tenant: Tenant, issuer: Issuer, userID: String, authTime: Date,
                   context: AuthenticationContext, sessionID: String?) async throws -> AuthorizationRedirect {
        let (code, record) = AuthorizationCode.issue(
            for: request, tenantID: tenant.id, userID: userID, authTime: authTime, context: context,
            sessionID: sessionID, at: now())
        try await store.insert(record)
        return AuthorizationRedirect(redirectURI: request.redirectURI, state: request.state, issuer: issuer.identifier,
                                     outcome: .code(code))
    }
}

extension AuthorizationPageError: CustomStringConvertible {
    var description: String { message }
}

/// RFC 9126 §2.2: the pushed request's handle.
struct PushedAuthorizationResponse: Encodable, Sendable {
    let requestURI: String
    let expiresIn: Int

    enum CodingKeys: String, CodingKey {
        case requestURI = "request_uri"
        case expiresIn = "expires_in"
    }
}

/// The answer to an authorization request, sent to the client's redirect URI in the query
/// (RFC 6749 §4.1.2): the code or the error, `state` as the client sent it, and `iss`
/// (RFC 9207), so that a client talking to several providers knows which one answered.
struct AuthorizationRedirect: Error, Sendable, Equatable {
    enum Outcome: Sendable, Equatable {
        case code(String)
        case error(AuthorizationError)
    }

    let redirectURI: String
    let state: String?
    let issuer: String
    let outcome: Outcome

    /// The redirect URI with the answer's parameters added to its query.
    var location: String {
        var pairs: [(String, String)] = []
        switch outcome {
        case .code(let code):
            pairs.append(("code", code))
        case .error(let error):
            pairs.append(("error", error.code.rawValue))
            pairs.append(("error_description", error.description))
        }
        if let state { pairs.append(("state", state)) }
        pairs.append(("iss", issuer))
        let query = pairs.map { "\(Self.encoded($0.0))=\(Self.encoded($0.1))" }.joined(separator: "&")
        // A registered URI has no fragment; its own query, if any, is kept (RFC 6749 §3.1.2).
        return redirectURI + (redirectURI.contains("?") ? "&" : "?") + query
    }

    /// Form encoding of a value: every byte but the unreserved ones escaped, so that `+`, `&`
    /// and `=` in a `state` come back as they were sent.
    static func encoded(_ text: String) -> String {
        text.addingPercentEncoding(withAllowedCharacters: unreserved) ?? ""
    }

    private static let unreserved = CharacterSet(charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")
}
