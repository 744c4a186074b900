import Foundation

/// What the claims of a trusted issuer's token must say, read once its signature has verified:
/// the issuer's `iss` exactly, the configured audience among `aud`, a usable time window, a `jti`
/// (each token enrolls one phone), the required scope, and the user's name in the configured
/// claim.
///
/// Another provider's clock is further away than a client's, so its tokens get 60 seconds of
/// skew either way (`JWTTimeRules` gives clients 30). The lifetime is the provider's business:
/// unlike a client assertion, a sign-in's token may live an hour or more, and its `jti` is
/// remembered for exactly as long.
struct TrustedIssuerTokenClaims: Sendable, Equatable {
    static let clockSkew: TimeInterval = 60

    let jwtID: String
    /// The last moment the token is accepted: `exp` plus the skew.
    let acceptedUntil: Date
    let username: String

    init(_ claims: JWTClaims, of issuer: TrustedIssuer, at now: Date) throws(TrustedIssuerTokenRejection) {
        guard try Self.read({ () throws(JWTClaimError) in try claims.requiredString("iss") }) == issuer.issuer else {
            throw .wrongIssuer
        }
        guard try Self.read({ () throws(JWTClaimError) in try claims.audience() }).contains(issuer.audience) else {
            throw .wrongAudience
        }
        let expiry = try Self.read { () throws(JWTClaimError) in try claims.requiredDate("exp") }
        guard expiry.timeIntervalSince(now) > -Self.clockSkew else { throw .expired }
        if let notBefore = try Self.read({ () throws(JWTClaimError) in try claims.date("nbf") }),
           notBefore.timeIntervalSince(now) > Self.clockSkew {
            throw .notYetValid
        }
        if let issuedAt = try Self.read({ () throws(JWTClaimError) in try claims.date("iat") }),
           issuedAt.timeIntervalSince(now) > Self.clockSkew {
            throw .issuedInFuture
        }
        jwtID = try Self.read { () throws(JWTClaimError) in try claims.requiredString("jti") }
        guard jwtID.count <= JWTIDLedger.maximumLength else { throw .longJWTID }
        if !issuer.requiredScope.isEmpty,
           !(try Self.read { () throws(JWTClaimError) in try Self.scopes(claims) }).contains(issuer.requiredScope) {
            throw .insufficientScope(issuer.requiredScope)
        }
        username = try Self.read { () throws(JWTClaimError) in try claims.requiredString(issuer.usernameClaim) }
        acceptedUntil = expiry.addingTimeInterval(Self.clockSkew)
    }

    private static func read<Value>(_ claim: () throws(JWTClaimError) -> Value) throws(TrustedIssuerTokenRejection) -> Value {
        do { return try claim() } catch { throw .claim(error) }
    }

    /// The scopes granted: `scope`, space-separated (RFC 9068 §2.2.3, RFC 8693 §4.2), and `scp`,
    /// which some providers send instead, as an array or as a space-separated string.
    static func scopes(_ claims: JWTClaims) throws(JWTClaimError) -> Set<String> {
        func words(_ text: String) -> [String] { text.split(separator: " ").map(String.init) }
        var scopes = Set<String>()
        if let scope = claims["scope"] {
            guard let text = scope.stringValue else { throw .wrongType("scope", "a space-separated string") }
            scopes.formUnion(words(text))
        }
        switch claims["scp"] {
        case nil: break
        case .string(let text)?: scopes.formUnion(words(text))
        case .array(let values)? where values.allSatisfy({ $0.stringValue != nil }):
            scopes.formUnion(values.compactMap(\.stringValue))
        default: throw .wrongType("scp", "an array of strings or a space-separated string")
        }
        return scopes
    }
}
