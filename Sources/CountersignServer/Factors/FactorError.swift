import CountersignCore

/// Why an answer's factors were refused. Each case is one error of the device protocol.
enum FactorError: Error, Sendable, Equatable, APIFailure {
    /// The answer uses neither the factor the request requires nor one allowed instead.
    case factorRequired(Factor)
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
}
