import Foundation
import HTTPTypes

/// Authenticates a relying party at the OAuth endpoints by the method it registered (OpenID
/// Connect Core §9):
///
/// - with its secret, as HTTP Basic (`client_secret_basic`, RFC 6749 §2.3.1: id and secret
///   each form-encoded, then joined with `:`) or as the form parameters `client_id` and
///   `client_secret` (`client_secret_post`); either is accepted for a secret client;
/// - with a JWT signed by a key it registered (`private_key_jwt`, `ClientAssertion`);
/// - a public client (`none`) by its `client_id` alone, at the endpoints that admit one: the
///   token endpoint, where PKCE proves the code is its own, and revocation (RFC 7009 §2.1).
///
/// A client uses one method per request (RFC 6749 §2.3), and only the one it is registered
/// for: a `private_key_jwt` client's secret proves nothing, and neither does a secret client's
/// assertion. A client of another tenant is unknown here: clients are looked up within the
/// tenant whose endpoint was called. Secrets are compared with their stored hash in constant
/// time.
struct ClientAuthentication: Sendable {
    let store: any ClientAuthenticationStore
    let origin: PublicOrigin
    let throttle: FailedAuthenticationThrottle
    let metrics: ServerMetrics
    let jwtIDs: JWTIDLedger
    let now: @Sendable () -> Date

    /// The credentials a request carries, before they are checked.
    enum Credentials: Equatable {
        case basic(id: String, secret: String)
        case post(id: String, secret: String)
        /// A client assertion, with the `client_id` sent beside it, if any.
        case assertion(String, postedID: String?)
        /// A `client_id` and nothing else: a public client, or none at all.
        case publicClient(id: String)
    }

    /// The authenticated client of the request; a public client only where `admittingPublic`.
    func authenticate(authorization: String?, form: FormParameters, tenant: Tenant,
                      admittingPublic: Bool = false) async throws -> Client {
        switch try Self.credentials(authorization: authorization, form: form) {
        case .basic(let id, let secret), .post(let id, let secret):
            return try await client(id: id, secret: secret, tenant: tenant)
        case .publicClient(let id):
            guard admittingPublic else { throw ClientAuthenticationError.missing }
            return try await publicClient(id: id, tenant: tenant)
        case .assertion(let text, let postedID):
            let issuer = Issuer(tenant: tenant, origin: origin)
            return try await client(asserting: text, postedID: postedID, audiences: issuer.clientAssertionAudiences, tenant: tenant)
        }
    }

    private func client(id: String, secret: String, tenant: Tenant) async throws -> Client {
        guard let (client, storedHash) = try await store.clientWithSecretHash(id: id, tenantID: tenant.id),
            Secrets.matches(secret, storedHash: storedHash), client.authenticationMethod.usesSecret else {
            // Counted by the id presented, known or not, so that the answer says nothing more
            // about an unknown id than about a wrong secret.
            let key = FailedAuthenticationThrottle.client(tenantID: tenant.id, clientID: id)
            if let wait = throttle.retryAfter(key) {
                metrics.authenticationThrottled(limit: "client")
                throw ClientAuthenticationError.throttled(retryAfter: wait)
            }
            throttle.recordFailure(key)
            throw ClientAuthenticationError.failed
        }
        return client
    }

    /// A public client is who its id says; a confidential client that sends its id alone has
    /// not authenticated, and gets the answer of a wrong secret.
    private func publicClient(id: String, tenant: Tenant) async throws -> Client {
        guard let client = try await store.client(id: id, tenantID: tenant.id), client.isPublic else {
            throw ClientAuthenticationError.failed
        }
        return client
    }

    private func client(asserting text: String, postedID: String?, audiences: Set<String>, tenant: Tenant) async throws -> Client {
        let assertion: ClientAssertion
        do {
            assertion = try ClientAssertion(
                text, audiences: audiences, maximumLifetime: tenant.policy.clientAssertionMaximumLifetime, at: now())
        } catch {
            throw ClientAuthenticationError.assertion(error)
        }
        if let postedID, postedID != assertion.clientID { throw ClientAuthenticationError.conflictingClientID }
        guard let client = try await store.client(id: assertion.clientID, tenantID: tenant.id),
            client.authenticationMethod == .privateKeyJWT else {
            throw ClientAuthenticationError.assertion(.unknownKey)
        }
        do {
            try await assertion.jwt.verify(with: client.jwks)
        } catch .unknownKey {
            throw ClientAuthenticationError.assertion(.unknownKey)
        } catch {
            throw ClientAuthenticationError.assertion(.badSignature)
        }
        guard try await jwtIDs.use(
            assertion.jwtID, clientID: client.id, purpose: .clientAssertion, expiresAt: assertion.expiresAt) else {
            throw ClientAuthenticationError.assertion(.replayed)
        }
        return client
    }

    /// Reads the one set of credentials a request may carry. An assertion and its type come
    /// together; one without the other is no credential.
    static func credentials(authorization: String?, form: FormParameters) throws -> Credentials {
        let postedID = form["client_id"]
        let postedSecret = form["client_secret"]
        let assertion = form["client_assertion"]
        let assertionType = form["client_assertion_type"]
        let assertionSent = assertion != nil || assertionType != nil
        if let authorization {
            guard postedSecret == nil, !assertionSent else { throw ClientAuthenticationError.severalMethods }
            let basic = try basic(authorization)
            // A client may repeat its id in the body; it must be the same one.
            if let postedID, case .basic(let id, _) = basic, postedID != id { throw ClientAuthenticationError.conflictingClientID }
            return basic
        }
        if assertionSent {
            guard postedSecret == nil else { throw ClientAuthenticationError.severalMethods }
            guard let assertion, let assertionType else { throw ClientAuthenticationError.incompleteAssertion }
            guard assertionType == ClientAssertion.type else { throw ClientAuthenticationError.unsupportedAssertionType }
            return .assertion(assertion, postedID: postedID)
        }
        guard let postedID, !postedID.isEmpty else { throw ClientAuthenticationError.missing }
        guard let postedSecret else { return .publicClient(id: postedID) }
        return .post(id: postedID, secret: postedSecret)
    }

    private static func basic(_ header: String) throws -> Credentials {
        let parts = header.split(separator: " ", maxSplits: 1, omittingEmptySubsequences: true)
        guard parts.count == 2, parts[0].lowercased() == "basic" else { throw ClientAuthenticationError.unsupportedScheme }
        guard let decoded = Data(base64Encoded: String(parts[1]).trimmingCharacters(in: .whitespaces)),
              let colon = decoded.firstIndex(of: UInt8(ascii: ":")),
              let id = try? FormParameters.decoded(decoded[decoded.startIndex..<colon]),
              let secret = try? FormParameters.decoded(decoded[decoded.index(after: colon)...]),
              !id.isEmpty, !secret.isEmpty,
              !id.unicodeScalars.contains("\0"), !secret.unicodeScalars.contains("\0") else {
            throw ClientAuthenticationError.malformedBasic
        }
        return .basic(id: id, secret: secret)
    }
}

extension Issuer {
    /// What a client assertion's `aud` may name: the issuer, or the URL of any endpoint that
    /// takes client authentication. CIBA §7.1 has the backchannel endpoint accept the issuer,
    /// the token endpoint and itself; all of them name this one provider, so all are accepted
    /// at every endpoint.
    var clientAssertionAudiences: Set<String> {
        [identifier, tokenEndpoint, backchannelAuthenticationEndpoint, receiptEndpoint, revocationEndpoint,
         introspectionEndpoint, pushedAuthorizationRequestEndpoint, identifier + "/totp/verify"]
    }
}

/// Why a client was not authenticated. Every failure to prove who the client is is
/// `invalid_client` (401); a request that tries two methods at once, or names two clients, is
/// malformed.
enum ClientAuthenticationError: OAuthFailure, Equatable {
    case missing
    case unsupportedScheme
    case malformedBasic
    case failed
    case incompleteAssertion
    case unsupportedAssertionType
    case assertion(ClientAssertionError)
    case severalMethods
    case conflictingClientID
    /// Another wrong secret for a client id that failed too often this minute.
    case throttled(retryAfter: Int)

    var oauthError: OAuthError {
        switch self {
        case .missing:
            OAuthError(.invalidClient, "client authentication is required: client_secret_basic, client_secret_post or private_key_jwt")
        case .unsupportedScheme:
            OAuthError(.invalidClient, "clients authenticate with the Basic scheme, with client_id and client_secret, or with client_assertion")
        case .malformedBasic:
            OAuthError(.invalidClient, "the Basic credentials are not base64 of form-encoded client_id:client_secret")
        case .failed:
            // One answer for an unknown client, a wrong secret and a client without a secret
            // method: the difference is nobody's business.
            OAuthError(.invalidClient, "client authentication failed")
        case .incompleteAssertion:
            OAuthError(.invalidClient, "client_assertion and client_assertion_type are sent together")
        case .unsupportedAssertionType:
            OAuthError(.invalidClient, "client_assertion_type must be \(ClientAssertion.type)")
        case .assertion(let error):
            OAuthError(.invalidClient, error.description)
        case .severalMethods:
            OAuthError(.invalidRequest, "use one client authentication method: Basic, client_secret or client_assertion")
        case .conflictingClientID:
            OAuthError(.invalidRequest, "client_id names another client than the client's credentials")
        case .throttled(let wait):
            OAuthError(.slowDown, "too many failed authentications for this client_id; try again in \(wait) seconds",
                       status: .tooManyRequests, retryAfter: wait)
        }
    }

    var wireError: WireError {
        var error = oauthError.wireError
        error.credentialsAbsent = self == .missing
        return error
    }
}
