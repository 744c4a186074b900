import Foundation

/// The `error` codes of the device protocol and the administration API. Each is a stable
/// string on the wire; `docs/protocol.md` and `docs/api.md` list the status each comes with.
public struct DeviceErrorCode: RawRepresentable, Codable, Sendable, Hashable, CustomStringConvertible {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }
    public var description: String { rawValue }

    // Request shape (400, 404, 413, 415).
    public static let invalidRequest = DeviceErrorCode(rawValue: "invalid_request")
    public static let notFound = DeviceErrorCode(rawValue: "not_found")
    public static let payloadTooLarge = DeviceErrorCode(rawValue: "payload_too_large")
    public static let unsupportedMediaType = DeviceErrorCode(rawValue: "unsupported_media_type")
    public static let conflict = DeviceErrorCode(rawValue: "conflict")
    public static let serverError = DeviceErrorCode(rawValue: "server_error")
    /// The database cannot be reached; `Retry-After` says when to try again (503).
    public static let temporarilyUnavailable = DeviceErrorCode(rawValue: "temporarily_unavailable")

    // Enrollment (400).
    public static let invalidTicket = DeviceErrorCode(rawValue: "invalid_ticket")
    public static let ticketExpired = DeviceErrorCode(rawValue: "ticket_expired")
    public static let ticketUsed = DeviceErrorCode(rawValue: "ticket_used")
    public static let ticketRevoked = DeviceErrorCode(rawValue: "ticket_revoked")
    public static let invalidKey = DeviceErrorCode(rawValue: "invalid_key")
    public static let invalidProof = DeviceErrorCode(rawValue: "invalid_proof")
    public static let userNotActive = DeviceErrorCode(rawValue: "user_not_active")
    /// RFC 6750 §3.1: the access token lacks the scope `countersign:enroll`.
    public static let insufficientScope = DeviceErrorCode(rawValue: "insufficient_scope")

    // Device request signatures (401).
    public static let missingSignature = DeviceErrorCode(rawValue: "missing_signature")
    public static let malformedSignature = DeviceErrorCode(rawValue: "malformed_signature")
    public static let unknownDevice = DeviceErrorCode(rawValue: "unknown_device")
    public static let deviceDeregistered = DeviceErrorCode(rawValue: "device_deregistered")
    public static let invalidSignature = DeviceErrorCode(rawValue: "invalid_signature")
    public static let requestMismatch = DeviceErrorCode(rawValue: "request_mismatch")
    public static let requestExpired = DeviceErrorCode(rawValue: "request_expired")
    public static let replayedRequest = DeviceErrorCode(rawValue: "replayed_request")
    public static let bodyMismatch = DeviceErrorCode(rawValue: "body_mismatch")

    // Approvals (400, 404, 409, 410).
    /// The request does not exist, or was not addressed to this device (404).
    public static let unknownRequest = DeviceErrorCode(rawValue: "unknown_request")
    /// The request was already approved or denied, on this device or another (409).
    public static let alreadyDecided = DeviceErrorCode(rawValue: "already_decided")
    /// The request expired before the answer arrived (410).
    public static let approvalExpired = DeviceErrorCode(rawValue: "approval_expired")
    /// The signed response is malformed, or not signed by this device's key (400).
    public static let invalidResponse = DeviceErrorCode(rawValue: "invalid_response")
    /// The response signs a digest other than that of the details sealed for this device (400).
    public static let detailsMismatch = DeviceErrorCode(rawValue: "details_mismatch")
    /// The response repeats another challenge, or names another request (400).
    public static let challengeMismatch = DeviceErrorCode(rawValue: "challenge_mismatch")

    // Factors (400, 403, 502).
    /// The answer does not use the factor the request requires, nor one allowed instead (403).
    public static let factorRequired = DeviceErrorCode(rawValue: "factor_required")
    /// The PIN was wrong; `attempts_remaining` says how many are left (403).
    public static let wrongPIN = DeviceErrorCode(rawValue: "wrong_pin")
    /// That was the last wrong PIN: the enrollment has been removed (403).
    public static let userDeregistered = DeviceErrorCode(rawValue: "user_deregistered")
    /// The device has no key for the factor it used (`pin`, `biometric`) (400).
    public static let factorNotEnrolled = DeviceErrorCode(rawValue: "factor_not_enrolled")
    /// The biometric key's signature does not verify (400).
    public static let invalidFactorProof = DeviceErrorCode(rawValue: "invalid_factor_proof")
    /// The tenant's custom verifier asks for the PIN instead (403).
    public static let pinFallbackRequired = DeviceErrorCode(rawValue: "pin_fallback_required")
    /// The tenant's custom verifier failed or did not answer in time; nothing was decided (502).
    public static let verifierUnavailable = DeviceErrorCode(rawValue: "verifier_unavailable")

    // Security notices (404, 409, 410).
    /// No such notice was shown to this device (404).
    public static let unknownNotice = DeviceErrorCode(rawValue: "unknown_notice")
    /// The notice was already answered "not me", by this device or another (409).
    public static let alreadyReported = DeviceErrorCode(rawValue: "already_reported")
    /// The notice is more than a week old and can no longer be answered (410).
    public static let noticeExpired = DeviceErrorCode(rawValue: "notice_expired")

    // Handing over to a new device (403, 404, 409, 410).
    /// This device was enrolled with a handover ticket and waits for the approval of the device
    /// that issued it: it may only read and remove itself (403).
    public static let handoverPending = DeviceErrorCode(rawValue: "handover_pending")
    /// No such handover was started by this device (404).
    public static let unknownHandover = DeviceErrorCode(rawValue: "unknown_handover")
    /// The handover was approved or refused already, or has no new device to approve yet (409).
    public static let handoverClosed = DeviceErrorCode(rawValue: "handover_closed")
    /// The handover's time ran out (410).
    public static let handoverExpired = DeviceErrorCode(rawValue: "handover_expired")
    /// The number given is not the one the new device shows; the handover is refused and the new
    /// device removed (403).
    public static let wrongNumber = DeviceErrorCode(rawValue: "wrong_number")

    // Administration (401, 403).
    public static let invalidToken = DeviceErrorCode(rawValue: "invalid_token")
    public static let insufficientRights = DeviceErrorCode(rawValue: "insufficient_rights")
}

/// The error body of every non-2xx answer of the device protocol and the administration API:
/// `{"error": "...", "error_description": "..."}`, the shape of RFC 6749 §5.2.
public struct ErrorBody: Codable, Sendable, Equatable {
    public var error: String
    public var errorDescription: String?
    /// For `insufficient_rights`: the right the key lacks.
    public var missingRight: String?
    /// For `unknown_device` and `device_deregistered`: a signed `DeregistrationNotice`.
    public var deregistration: String?
    /// For `wrong_pin`: how many more wrong PINs the server accepts before it removes the enrollment.
    public var attemptsRemaining: Int?

    public init(error: String, errorDescription: String? = nil, missingRight: String? = nil, deregistration: String? = nil,
                attemptsRemaining: Int? = nil) {
        self.error = error
        self.errorDescription = errorDescription
        self.missingRight = missingRight
        self.deregistration = deregistration
        self.attemptsRemaining = attemptsRemaining
    }

    enum CodingKeys: String, CodingKey {
        case error, deregistration
        case errorDescription = "error_description"
        case missingRight = "missing_right"
        case attemptsRemaining = "attempts_remaining"
    }
}
