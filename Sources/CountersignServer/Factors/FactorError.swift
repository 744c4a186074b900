import CountersignCore

/// Why an answer's factors were refused. Each case is one error of the device protocol.
enum FactorError: Error, Sendable, Equatable, APIFailure {
    /// The answer uses neither the factor the request requires nor one allowed instead.
    case factorRequired(Factor)
    /// The answer's factors meet none of the request's alternatives, or not the one it names.
    case alternativeNotMet(offered: [[Factor]?], named: Int64?)
    /// A wrong PIN, counted; this many more are allowed.
    case wrongPIN(attemptsRemaining: Int)
    /// The last wrong PIN allowed: the enrollment has been removed.
    case userDeregistered
    /// The device has no key for a factor its answer claims.
    case factorNotEnrolled(Factor)
    /// The biometric key's signature does not verify.
    case invalidFactorProof(Factor)
    /// The custom verifier asks for the PIN instead.
    case pinFallbackRequired
    /// The custom verifier failed or did not answer; nothing was decided.
    case verifierUnavailable

    var apiError: APIError {
        switch self {
        case .factorRequired(let factor):
            APIError(.forbidden, .factorRequired, "this request must be approved with the \(factor.rawValue) factor")
        case .alternativeNotMet(let offered, let named):
            APIError(.forbidden, .factorRequired, Self.describe(offered, named: named))
        case .wrongPIN(let remaining):
            APIError(.forbidden, .wrongPIN,
                     "the PIN is wrong; \(remaining) more \(remaining == 1 ? "attempt" : "attempts") before the enrollment is removed",
                     attemptsRemaining: remaining)
        case .userDeregistered:
            APIError(.forbidden, .userDeregistered,
                     "too many wrong PINs: the enrollment has been removed and the device must enroll again",
                     attemptsRemaining: 0)
        case .factorNotEnrolled(let factor):
            APIError(.badRequest, .factorNotEnrolled, "this device has no \(factor.rawValue) key enrolled")
        case .invalidFactorProof(let factor):
            APIError(.badRequest, .invalidFactorProof, "the \(factor.rawValue) signature does not verify with the enrolled key")
        case .pinFallbackRequired:
            APIError(.forbidden, .pinFallbackRequired, "the verifier asks for the PIN instead; answer again with the pin factor")
        case .verifierUnavailable:
            APIError(.badGateway, .verifierUnavailable,
                     "the tenant's verifier did not give a verdict; nothing was decided, the request is still pending")
        }
    }

    /// "the factors do not meet alternative 2 of this request ([pin, number_match])", or which
    /// alternatives there are.
    private static func describe(_ offered: [[Factor]?], named: Int64?) -> String {
        func list(_ factors: [Factor]?) -> String {
            "[" + (factors?.map(\.rawValue).joined(separator: ", ") ?? "?") + "]"
        }
        if let named, named >= 0, named < offered.count {
            return "the answer's factors are not those of alternative \(named) of this request \(list(offered[Int(named)]))"
        }
        if let named {
            return "this request has no alternative \(named); it offers \(offered.count)"
        }
        return "the answer's factors meet none of this request's alternatives: " + offered.map(list).joined(separator: " or ")
    }
}
