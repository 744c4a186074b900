import Foundation

/// Why a trusted issuer's token does not enroll a phone. The descriptions tell the token's holder
/// nothing it could not read in the token itself: not the audience expected, nor why the keys
/// could not be fetched (that goes to the log). `EnrollmentService` turns each into one wire
/// error: the user cases into their own codes, the scope into `insufficient_scope`, the rest
/// into `invalid_token`.
enum TrustedIssuerTokenRejection: Error, Sendable, Equatable, CustomStringConvertible {
    case malformed
    case algorithmRefused(String)
    case keysUnavailable
    case unknownKey
    case badSignature
    case wrongIssuer
    case wrongAudience
    case claim(JWTClaimError)
    case expired
    case notYetValid
    case issuedInFuture
    case longJWTID
    case insufficientScope(String)
    /// The username claim names nobody in the tenant; users are never created from a token.
    case unknownUser(claim: String)
    case userNotActive

    var description: String {
        switch self {
        case .malformed: "the token is not a JWT signed with ES256 or RS256"
        case .algorithmRefused(let alg): "the token is signed with \(alg); a trusted issuer's tokens must be ES256 or RS256"
        case .keysUnavailable: "the issuer's keys could not be fetched"
        case .unknownKey: "the token is not signed with a key of its issuer (kid, alg)"
        case .badSignature: "the token's signature does not verify with its issuer's key"
        case .wrongIssuer: "the token's iss is not its trusted issuer's"
        case .wrongAudience: "the token's aud does not name the audience this tenant expects from its issuer"
        case .claim(let error): "the token\(error.description)"
        case .expired: "the token has expired (exp)"
        case .notYetValid: "the token is not valid yet (nbf)"
        case .issuedInFuture: "the token was issued in the future (iat)"
        case .longJWTID: "the token has a jti longer than \(JWTIDLedger.maximumLength) characters"
        case .insufficientScope(let scope): "the token must carry the scope \(scope)"
        case .unknownUser(let claim): "the token's \(claim) names no user of this tenant"
        case .userNotActive: "the user the token names is not active"
        }
    }
}
