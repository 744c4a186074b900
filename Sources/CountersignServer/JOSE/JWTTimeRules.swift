import Foundation

/// When a client's JWT may be used (RFC 7519 §4.1.4–4.1.6): `exp` is required and in the
/// future, `nbf` and `iat`, when present (or when `required`), not in the future, and the JWT
/// is valid for at most `maximumLifetime`, counted from `lifetimeStart` (`iat` or `nbf`) and,
/// however those are set, from now. Clocks may disagree by `clockSkew` either way.
///
/// A short lifetime is what makes a single-use `jti` affordable: each one is remembered only
/// until its JWT expires.
struct JWTTimeRules: Sendable {
    static let clockSkew: TimeInterval = 30

    let maximumLifetime: TimeInterval
    let required: Set<String>
    let lifetimeStart: String

    /// `private_key_jwt` assertions: minted for one request, so five minutes is plenty by default
    /// (`AuthenticationPolicy.clientAssertionMaximumLifetime`); a tenant whose clients mint them
    /// for longer (Authlib's default is an hour) may allow up to a day.
    static func clientAssertion(maximumLifetime: Int) -> JWTTimeRules {
        JWTTimeRules(maximumLifetime: TimeInterval(maximumLifetime), required: [], lifetimeStart: "iat")
    }
    /// Signed authentication requests (CIBA §7.1.1 requires `iat` and `nbf`; FAPI-CIBA bounds
    /// `exp - nbf` by 60 minutes).
    static let requestObject = JWTTimeRules(maximumLifetime: 3600, required: ["iat", "nbf"], lifetimeStart: "nbf")

    /// Checks the times of `claims` at `now` and answers `exp`.
    func check(_ claims: JWTClaims, at now: Date) throws(JWTTimeError) -> Date {
        let expiry = try claim { () throws(JWTClaimError) in try claims.requiredDate("exp") }
        guard expiry.timeIntervalSince(now) > -Self.clockSkew else { throw .expired }
        let notBefore = try claim { () throws(JWTClaimError) in try claims.date("nbf") }
        let issuedAt = try claim { () throws(JWTClaimError) in try claims.date("iat") }
        for (name, value) in [("nbf", notBefore), ("iat", issuedAt)] {
            guard let value else {
                if required.contains(name) { throw .claim(.missing(name)) }
                continue
            }
            guard value.timeIntervalSince(now) <= Self.clockSkew else { throw name == "nbf" ? .notYetValid : .issuedInFuture }
        }
        let start = (lifetimeStart == "nbf" ? notBefore : issuedAt) ?? now
        guard expiry.timeIntervalSince(start) <= maximumLifetime,
              expiry.timeIntervalSince(now) <= maximumLifetime + Self.clockSkew else {
            throw .tooLong(Int(maximumLifetime), from: lifetimeStart)
        }
        return expiry
    }

    private func claim<Value>(_ read: () throws(JWTClaimError) -> Value) throws(JWTTimeError) -> Value {
        do { return try read() } catch { throw .claim(error) }
    }
}

/// Why a JWT is not usable now. The description continues the name of the JWT.
enum JWTTimeError: Error, Sendable, Equatable, CustomStringConvertible {
    case claim(JWTClaimError)
    case expired
    case notYetValid
    case issuedInFuture
    case tooLong(Int, from: String)

    var description: String {
        switch self {
        case .claim(let error): error.description
        case .expired: " has expired (exp)"
        case .notYetValid: " is not valid yet (nbf)"
        case .issuedInFuture: " was issued in the future (iat)"
        case .tooLong(let seconds, let start): " may be valid for at most \(seconds) seconds (exp - \(start))"
        }
    }
}
