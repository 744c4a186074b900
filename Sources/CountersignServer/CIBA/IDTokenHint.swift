import CountersignCore
import Foundation

/// An `id_token_hint` (CIBA §7.1): an ID token this tenant issued to this client, naming the
/// user by `sub`. Its signature must verify with one of the tenant's published keys, its `typ`
/// must be that of an ID token (an access token is not a hint), `iss` must be the tenant and
/// `aud` must include the client. Its expiry does not matter: it is a hint about who, not a
/// credential. Any failure is `invalid_request` (decision of the standards checklist, 1.4.6).
struct IDTokenHint: Sendable, Equatable {
    let subject: String

    init(_ token: String, keys: TokenSigningKeySet, issuer: String, clientID: String) throws {
        guard let jwt = TenantSignedJWT(parsing: token) else { throw Self.invalid("is not an ES256 or RS256 JWS") }
        guard jwt.type?.uppercased() == TokenIssuer.idTokenType else { throw Self.invalid("is not an ID token") }
        guard jwt.isSigned(by: keys) else { throw Self.invalid("is not signed by a key of this issuer") }
        guard let claims = jwt.claims else { throw Self.invalid("has no JSON claims") }
        guard claims["iss"]?.stringValue == issuer else { throw Self.invalid("was issued by another issuer") }
        let audience: [String] = switch claims["aud"] {
        case .string(let single): [single]
        case .array(let values): values.compactMap(\.stringValue)
        default: []
        }
        guard audience.contains(clientID) else { throw Self.invalid("was issued to another client") }
        guard let subject = claims["sub"]?.stringValue, !subject.isEmpty else { throw Self.invalid("names no subject") }
        self.subject = subject
    }

    private static func invalid(_ why: String) -> BackchannelAuthenticationError {
        .invalidIDTokenHint("id_token_hint \(why)")
    }
}
