import CountersignCore
import Foundation
import JWTKit

/// An `id_token_hint` (CIBA §7.1): an ID token this tenant issued to this client, naming the
/// user by `sub`. Its signature must verify with one of the tenant's published keys, its `typ`
/// must be that of an ID token (an access token is not a hint), `iss` must be the tenant and
/// `aud` must include the client. Its expiry does not matter: it is a hint about who, not a
/// credential. Any failure is `invalid_request` (decision of the standards checklist, 1.4.6).
struct IDTokenHint: Sendable, Equatable {
    let subject: String

    init(_ token: String, keys: TokenSigningKeySet, issuer: String, clientID: String) async throws {
        guard let header = TenantJWTHeader(of: token) else { throw Self.invalid("is not an ES256 or RS256 JWS") }
        guard header.type?.uppercased() == TokenIssuer.idTokenType else { throw Self.invalid("is not an ID token") }
        let claims: Claims
        do {
            claims = try await keys.verify(token, header: header, as: Claims.self)
        } catch TenantJWTError.notSigned {
            throw Self.invalid("is not signed by a key of this issuer")
        } catch {
            throw Self.invalid("has no JSON claims")
        }
        guard claims.iss?.value == issuer else { throw Self.invalid("was issued by another issuer") }
        guard let audience = claims.aud, (try? audience.verifyIntendedAudience(includes: clientID)) != nil else {
            throw Self.invalid("was issued to another client")
        }
        guard let subject = claims.sub?.value, !subject.isEmpty else { throw Self.invalid("names no subject") }
        self.subject = subject
    }

    /// The claims a hint is read for; `exp` is not among them.
    struct Claims: JWTPayload {
        let iss: IssuerClaim?
        let aud: AudienceClaim?
        let sub: SubjectClaim?

        func verify(using _: some JWTAlgorithm) {}
    }

    private static func invalid(_ why: String) -> BackchannelAuthenticationError {
        .invalidIDTokenHint("id_token_hint \(why)")
    }
}
