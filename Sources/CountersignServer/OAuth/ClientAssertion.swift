import Foundation

/// A `private_key_jwt` client assertion (OpenID Connect Core §9; RFC 7523 §2.2, §3): a JWT the
/// client signs with a key it registered, sent as `client_assertion` with
/// `client_assertion_type=urn:ietf:params:oauth:client-assertion-type:jwt-bearer`.
///
/// Parsing checks everything that depends on the assertion alone, in this order: a compact
/// JWS signed ES256 or RS256; `iss` and `sub` both the client's id; `aud` naming this
/// provider; the times of `JWTTimeRules.clientAssertion`, within the tenant's maximum lifetime; a `jti`. What depends on the
/// client's registration — its key, its signature, the `jti` not used before — is
/// `ClientAuthentication`'s to check, once it has found the client.
///
/// ```swift
/// let assertion = try ClientAssertion(form["client_assertion"]!, audiences: issuer.clientAssertionAudiences,
///                                     maximumLifetime: tenant.policy.clientAssertionMaximumLifetime, at: now)
/// try await assertion.jwt.verify(with: client.jwks)
/// ```
struct ClientAssertion: Sendable {
    static let type = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"

    let jwt: ClientSignedJWT
    let clientID: String
    let jwtID: String
    let expiresAt: Date

    init(_ text: String, audiences: Set<String>, maximumLifetime: Int, at now: Date) throws(ClientAssertionError) {
        do {
            jwt = try ClientSignedJWT(parsing: text)
        } catch ClientJWTError.algorithmRefused(let alg) {
            throw .algorithmRefused(alg)
        } catch {
            throw .malformed
        }
        do {
            let issuer = try jwt.claims.requiredString("iss")
            guard try jwt.claims.requiredString("sub") == issuer else { throw ClientAssertionError.subjectNotIssuer }
            guard try jwt.claims.audience().contains(where: audiences.contains) else { throw ClientAssertionError.wrongAudience }
            expiresAt = try JWTTimeRules.clientAssertion(maximumLifetime: maximumLifetime).check(jwt.claims, at: now)
            jwtID = try jwt.claims.requiredString("jti")
            guard jwtID.count <= JWTIDLedger.maximumLength else { throw ClientAssertionError.longJWTID }
            clientID = issuer
        } catch let error as JWTClaimError {
            throw .claim(error.description)
        } catch let error as JWTTimeError {
            throw .claim(error.description)
        } catch let error as ClientAssertionError {
            throw error
        } catch {
            throw .malformed
        }
    }
}

/// Why a client assertion does not authenticate its client. Every case is `invalid_client`
/// (RFC 7521 §4.2.1). Until the signature has verified, no description depends on whether the
/// client exists: an unknown client, a client that does not use `private_key_jwt` and a `kid`
/// it never registered are the same answer.
enum ClientAssertionError: Error, Sendable, Equatable, CustomStringConvertible {
    case malformed
    case algorithmRefused(String)
    case subjectNotIssuer
    case wrongAudience
    case claim(String)
    case longJWTID
    case unknownKey
    case badSignature
    case replayed

    var description: String {
        switch self {
        case .malformed:
            "client_assertion is not a compact JWS with a JSON header and JSON claims"
        case .algorithmRefused(let alg):
            "client_assertion must be signed with ES256 or RS256, not \(alg)"
        case .subjectNotIssuer:
            "client_assertion must name the client_id as both iss and sub"
        case .wrongAudience:
            "client_assertion's aud must name this issuer or one of its endpoints"
        case .claim(let why):
            "client_assertion\(why)"
        case .longJWTID:
            "client_assertion has a jti longer than \(JWTIDLedger.maximumLength) characters"
        case .unknownKey:
            "client_assertion is not signed with a key the client registered for private_key_jwt (kid, alg)"
        case .badSignature:
            "client_assertion's signature does not verify with the client's key"
        case .replayed:
            "client_assertion was already used (jti)"
        }
    }
}
