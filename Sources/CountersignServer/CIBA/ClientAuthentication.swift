import Foundation
import HTTPTypes

/// Authenticates a relying party at the OAuth endpoints with its client secret, sent either
/// as HTTP Basic (`client_secret_basic`, RFC 6749 §2.3.1: id and secret each form-encoded,
/// then joined with `:`) or as the form parameters `client_id` and `client_secret`
/// (`client_secret_post`). A client uses one method per request (RFC 6749 §2.3).
///
/// A client of another tenant is unknown here: clients are looked up within the tenant whose
/// endpoint was called. The secret is compared with its stored hash in constant time.
struct ClientAuthentication: Sendable {
    let services: ServerServices

    /// The credentials a request carries, before they are checked.
    enum Credentials: Equatable {
        case basic(id: String, secret: String)
        case post(id: String, secret: String)

        var id: String {
            switch self {
            case .basic(let id, _), .post(let id, _): id
            }
        }

        var secret: String {
            switch self {
            case .basic(_, let secret), .post(_, let secret): secret
            }
        }
    }

    /// The authenticated client of the request.
    func authenticate(authorization: String?, form: FormParameters, tenant: Tenant) async throws -> Client {
        let credentials = try Self.credentials(authorization: authorization, form: form)
        guard let (client, storedHash) = try await services.repositories.clients.findWithSecretHash(
            id: credentials.id, tenantID: tenant.id, on: services.database),
            Secrets.matches(credentials.secret, storedHash: storedHash) else {
            throw ClientAuthenticationError.failed
        }
        return client
    }

    /// Reads the one set of credentials a request may carry.
    static func credentials(authorization: String?, form: FormParameters) throws -> Credentials {
        let postedID = form["client_id"]
        let postedSecret = form["client_secret"]
        if let authorization {
            guard postedSecret == nil else { throw ClientAuthenticationError.severalMethods }
            let basic = try basic(authorization)
            // A client may repeat its id in the body; it must be the same one.
            if let postedID, postedID != basic.id { throw ClientAuthenticationError.conflictingClientID }
            return basic
        }
        guard let postedID, let postedSecret else { throw ClientAuthenticationError.missing }
        return .post(id: postedID, secret: postedSecret)
    }

    private static func basic(_ header: String) throws -> Credentials {
        let parts = header.split(separator: " ", maxSplits: 1, omittingEmptySubsequences: true)
        guard parts.count == 2, parts[0].lowercased() == "basic" else { throw ClientAuthenticationError.unsupportedScheme }
        guard let decoded = Data(base64Encoded: String(parts[1]).trimmingCharacters(in: .whitespaces)),
              let colon = decoded.firstIndex(of: UInt8(ascii: ":")),
              let id = try? FormParameters.decoded(decoded[decoded.startIndex..<colon]),
              let secret = try? FormParameters.decoded(decoded[decoded.index(after: colon)...]),
              !id.isEmpty, !secret.isEmpty else {
            throw ClientAuthenticationError.malformedBasic
        }
        return .basic(id: id, secret: secret)
    }
}

/// Why a client was not authenticated. Every failure to prove who the client is is
/// `invalid_client` (401); a request that tries two methods at once is malformed.
enum ClientAuthenticationError: OAuthFailure, Equatable {
    case missing
    case unsupportedScheme
    case malformedBasic
    case failed
    case severalMethods
    case conflictingClientID

    var oauthError: OAuthError {
        switch self {
        case .missing:
            OAuthError(.invalidClient, "client authentication is required: client_secret_basic or client_secret_post")
        case .unsupportedScheme:
            OAuthError(.invalidClient, "clients authenticate with the Basic scheme or with client_id and client_secret")
        case .malformedBasic:
            OAuthError(.invalidClient, "the Basic credentials are not base64 of form-encoded client_id:client_secret")
        case .failed:
            // One answer for an unknown client and a wrong secret: the difference is nobody's business.
            OAuthError(.invalidClient, "client authentication failed")
        case .severalMethods:
            OAuthError(.invalidRequest, "use one client authentication method, not both Basic and client_secret")
        case .conflictingClientID:
            OAuthError(.invalidRequest, "client_id names another client than the Authorization header")
        }
    }
}
