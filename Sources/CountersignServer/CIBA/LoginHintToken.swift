import CountersignCore
import Foundation

/// A `login_hint_token` (CIBA §7.1) in the one format Countersign defines: a JWT the client
/// signs with a key it registered (ES256 or RS256), naming the user with a subject identifier
/// of RFC 9493 in the claim `sub_id`:
///
/// - `{"format": "opaque", "id": "<user id or username>"}`, looked up as `login_hint` is;
/// - `{"format": "iss_sub", "iss": "<this issuer>", "sub": "<user id>"}`, the `iss` and `sub`
///   of an ID token this tenant issued.
///
/// `iss` is the client's id and `aud` names the issuer. `exp` is required; a token past it is
/// `expired_login_hint_token` (CIBA §13), said only once the signature has verified, since an
/// unverified token's times mean nothing. `nbf` and `iat`, when present, are not in the
/// future, and the token is valid for at most a day. It is a hint, not a credential: it may be
/// used more than once. Every other failure is `invalid_request`.
struct LoginHintToken: Sendable, Equatable {
    enum Subject: Sendable, Equatable {
        case loginHint(String)
        case userID(String)
    }

    static let timeRules = JWTTimeRules(maximumLifetime: 86_400, required: [], lifetimeStart: "iat")

    let subject: Subject

    init(_ token: String, client: Client, issuer: String, at now: Date) async throws(BackchannelAuthenticationError) {
        guard client.jwks != nil else { throw Self.invalid(" must be signed with a key the client registered, and it has none (jwks)") }
        let jwt: ClientSignedJWT
        do {
            jwt = try ClientSignedJWT(parsing: token)
            try await jwt.verify(with: client.jwks)
        } catch ClientJWTError.algorithmRefused(let alg) {
            throw Self.invalid(" must be signed with ES256 or RS256, not \(alg)")
        } catch ClientJWTError.unknownKey {
            throw Self.invalid(" is not signed with a key the client registered (kid, alg)")
        } catch ClientJWTError.badSignature {
            throw Self.invalid(" has a signature that does not verify with the client's key")
        } catch {
            throw Self.invalid(" is not a compact JWS with a JSON header and JSON claims")
        }
        do {
            guard try jwt.claims.requiredString("iss") == client.id else { throw Self.invalid(" must have the client_id as iss") }
            guard try jwt.claims.audience().contains(issuer) else { throw Self.invalid(" must name the issuer \(issuer) in aud") }
            _ = try Self.timeRules.check(jwt.claims, at: now)
        } catch JWTTimeError.expired {
            throw .expiredLoginHintToken
        } catch let error as JWTTimeError {
            throw Self.invalid(error.description)
        } catch let error as JWTClaimError {
            throw Self.invalid(error.description)
        } catch let error as BackchannelAuthenticationError {
            throw error
        } catch {
            throw Self.invalid(" is not a compact JWS with a JSON header and JSON claims")
        }
        subject = try Self.subject(jwt.claims["sub_id"], issuer: issuer)
    }

    private static func subject(_ value: JSONValue?, issuer: String) throws(BackchannelAuthenticationError) -> Subject {
        guard let value else { throw invalid(" has no sub_id") }
        switch value["format"]?.stringValue {
        case "opaque":
            guard let id = value["id"]?.stringValue, !id.isEmpty else { throw invalid(" has an opaque sub_id without an id") }
            return .loginHint(id)
        case "iss_sub":
            guard value["iss"]?.stringValue == issuer else { throw invalid(" has an iss_sub sub_id of another issuer") }
            guard let sub = value["sub"]?.stringValue, !sub.isEmpty else { throw invalid(" has an iss_sub sub_id without a sub") }
            return .userID(sub)
        default:
            throw invalid(" must name the user with a sub_id of format opaque or iss_sub")
        }
    }

    private static func invalid(_ why: String) -> BackchannelAuthenticationError {
        .invalidLoginHintToken("login_hint_token\(why)")
    }
}
