import CountersignCore
import Foundation

/// A trusted issuer's token, checked: whom it names, and what makes it single-use.
struct TrustedIssuerToken: Sendable, Equatable {
    let trustedIssuerID: String
    let issuer: String
    /// The `jti`, spent (`TrustedIssuerTokenVerifier.spend`) once the enrollment is otherwise sound.
    let jwtID: String
    /// Until when the `jti` must be remembered: the token is refused after that by its `exp`.
    let acceptedUntil: Date
    let userID: String
}

/// Checks a token of one of the tenant's trusted issuers (an access token or an ID token of the
/// bank's own identity provider) as `EnrollmentService` needs it: the signature with the
/// issuer's key (ES256 or RS256, through jwt-kit with the one key the `kid` names), then the
/// claims (`TrustedIssuerTokenClaims`), then the user the username claim names, who must exist
/// in the tenant and be active.
///
/// ```swift
/// if let iss = TrustedIssuerTokenVerifier.claimedIssuer(of: token),
///    let issuer = try await verifier.trustedIssuer(iss, tenantID: tenant.id) {
///     let checked = try await verifier.verify(token, issuer: issuer)
/// }
/// ```
struct TrustedIssuerTokenVerifier: Sendable {
    let store: any TrustedIssuerTokenStore
    let keys: TrustedIssuerKeyCache
    let now: @Sendable () -> Date

    /// The `iss` a JWT claims, unverified: it only chooses whose keys check the token. Read with
    /// the strict JSON parser that reads the claims later, so that both see the same `iss`.
    static func claimedIssuer(of token: String) -> String? {
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, let payload = Data(base64URLEncoded: parts[1]),
              case .object(let claims)? = try? JSONValue(parsing: payload) else { return nil }
        return claims["iss"]?.stringValue
    }

    func trustedIssuer(_ issuer: String, tenantID: String) async throws -> TrustedIssuer? {
        try await store.trustedIssuer(issuer, tenantID: tenantID)
    }

    func verify(_ token: String, issuer: TrustedIssuer) async throws -> TrustedIssuerToken {
        let jwt: ClientSignedJWT
        do { jwt = try ClientSignedJWT(parsing: token) } catch {
            if case .algorithmRefused(let alg) = error { throw TrustedIssuerTokenRejection.algorithmRefused(alg) }
            throw TrustedIssuerTokenRejection.malformed
        }
        let keySet: ClientJWKS
        switch issuer.keys {
        case .inline(let registered): keySet = registered
        case .uri(let uri):
            let (kid, algorithm) = (jwt.keyID, jwt.algorithm)
            keySet = try await keys.keys(of: issuer, at: uri, lacksKey: { $0.key(id: kid, algorithm: algorithm) == nil })
        }
        do { try await jwt.verify(with: keySet) } catch {
            throw error == .unknownKey ? TrustedIssuerTokenRejection.unknownKey : TrustedIssuerTokenRejection.badSignature
        }
        let claims = try TrustedIssuerTokenClaims(jwt.claims, of: issuer, at: now())
        guard let user = try await store.user(username: claims.username, tenantID: issuer.tenantID) else {
            throw TrustedIssuerTokenRejection.unknownUser(claim: issuer.usernameClaim)
        }
        guard user.status == .active else { throw TrustedIssuerTokenRejection.userNotActive }
        return TrustedIssuerToken(
            trustedIssuerID: issuer.id, issuer: issuer.issuer, jwtID: claims.jwtID, acceptedUntil: claims.acceptedUntil,
            userID: user.id)
    }

    /// Spends the token: false when its `jti` enrolled a phone already. Called only once
    /// everything else about the enrollment checked out, so a refused request leaves the token
    /// usable for a corrected one.
    func spend(_ token: TrustedIssuerToken) async throws -> Bool {
        try await store.spend(jti: token.jwtID, issuer: token.issuer, until: token.acceptedUntil, at: now())
    }
}
