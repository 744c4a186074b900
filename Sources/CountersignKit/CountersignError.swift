import CountersignCore
import Foundation

/// Everything that can go wrong in `CountersignKit`, in terms an app can act on.
///
/// ```swift
/// do {
///     _ = try await authenticator.respond(to: request, with: handler)
/// } catch .deviceDeregistered, .userDeregistered, .userDisenrolled {
///     // The server removed this enrollment; the local data is already gone.
/// } catch .actionCancelled {
///     // The user backed out; the request was denied as cancelled.
/// } catch .networkConnectivityFailure {
///     // Offer to retry once the device is online again.
/// } catch {
///     print(error)
/// }
/// ```
public enum CountersignError: Error, Sendable, Equatable {
    /// No enrollment with this id is stored on the device.
    case notEnrolled
    /// The server no longer knows this device (it was removed by an administrator or the user).
    /// The local enrollment has been deleted.
    case deviceDeregistered
    /// Too many wrong PINs: the server removed the enrollment. The local enrollment has been
    /// deleted; the user must enroll again.
    case userDeregistered
    /// The user was removed at the server, and with them this enrollment. The local enrollment
    /// has been deleted.
    case userDisenrolled
    /// The device is online but the server could not be reached (refused, unknown host, timeout,
    /// TLS failure, or a gateway that could not reach it).
    case serverNotReachable
    /// The device itself has no usable network connection.
    case networkConnectivityFailure
    /// The user cancelled (a challenge, or the task waiting for the server). A cancelled
    /// challenge has already been answered with a denial whose reason is `cancelled`.
    case actionCancelled
    /// The enrollment URI (usually from a QR code) is not one this SDK accepts.
    case invalidEnrollmentURI(String)
    /// The device name is empty, too long or contains control characters.
    case invalidDeviceName
    /// The arguments do not make a valid request (for example, an empty or over-long push token,
    /// or a PIN that is not 4 to 12 digits).
    case invalidRequest(String)
    /// The server refused the enrollment, with the protocol's `error` code
    /// (`invalid_ticket`, `ticket_expired`, `ticket_used`, …).
    case enrollmentRejected(code: String, description: String?)
    /// The enrollment receipt was signed by a key other than the one the enrollment URI names:
    /// the URI may point at an impostor server.
    case serverKeyMismatch
    /// The server answered something this SDK cannot accept; the text says what.
    case invalidServerResponse(String)
    /// The server refused a request, with the HTTP status and the protocol's `error` code.
    case server(status: Int, code: String, description: String?)
    /// The device's key store failed; the text says how.
    case keyStore(String)
    /// The details of an approval request could not be opened with this device's key, or are
    /// not the details of that request for this enrollment; the text says which. Nothing from
    /// them may be shown or answered.
    case invalidRequestDetails(String)
    /// The approval request expired before it could be answered (`approval_expired`).
    case expired
    /// The approval request was already approved or denied, on this device or another
    /// (`already_decided`).
    case alreadyAnswered
    /// The server has no such request for this device (`unknown_request`).
    case requestNotFound
    /// The request asks for a factor this enrollment cannot give (no PIN, no biometric key, a
    /// factor this SDK does not know), or the server wants a stronger one (`factor_required`).
    case requestNotHandleable
    /// The request can be approved only with factors this enrollment lacks: these, for the
    /// alternative that lacks fewest ("enroll another authenticator"). Nothing was sent.
    case factorsNotEnrolled([Factor])
    /// The tenant's verifier of custom authenticator data failed or did not answer; nothing was
    /// decided and the request can be answered again (`verifier_unavailable`).
    case verifierUnavailable
    /// The PIN was wrong; the server accepts `attemptsRemaining` more before it removes the
    /// enrollment. Thrown by `changePIN`; answering a request asks the handler again instead.
    case wrongPIN(attemptsRemaining: Int?)
    /// The biometric check failed and the request does not allow the PIN instead. Nothing was
    /// sent; the request can be answered again.
    case biometricFailed
    /// This enrollment has no PIN.
    case pinNotEnrolled
    /// This enrollment has no TOTP seed.
    case totpNotEnrolled
    /// The server showed no such security notice to this device (`unknown_notice`).
    case noticeNotFound
    /// The notice was already answered "not me", on this device or another
    /// (`already_reported`).
    case noticeAlreadyReported
    /// The notice is more than a week old and can no longer be answered (`notice_expired`).
    case noticeExpired
    /// This enrollment was made with another device's handover URI and waits for that device's
    /// approval; until then it can do nothing but read or remove itself (`handover_pending`).
    case handoverPending
    /// This device started no such handover (`unknown_handover`).
    case handoverNotFound
    /// The handover was approved or refused already, or no new device has enrolled with it yet
    /// (`handover_closed`).
    case handoverClosed
    /// The handover's ten minutes ran out (`handover_expired`).
    case handoverExpired
    /// The number picked is not the one the new device shows: the handover was refused and the
    /// new device removed (`wrong_number`).
    case wrongNumber
}

extension CountersignError: CustomStringConvertible, LocalizedError {
    public var description: String {
        switch self {
        case .notEnrolled:
            "this device has no such enrollment"
        case .deviceDeregistered:
            "the server no longer knows this device; it has been removed locally and must be enrolled again"
        case .userDeregistered:
            "too many wrong PINs: the enrollment was removed, here and at the server, and must be enrolled again"
        case .userDisenrolled:
            "the user was removed at the server; the enrollment has been removed locally"
        case .serverNotReachable:
            "the server could not be reached"
        case .networkConnectivityFailure:
            "the device is not connected to the network"
        case .actionCancelled:
            "the action was cancelled"
        case .invalidEnrollmentURI(let why):
            "invalid enrollment URI: \(why)"
        case .invalidDeviceName:
            "the device name must be 1 to \(DeviceName.maximumLength) characters without control or format characters"
        case .invalidRequest(let why):
            "invalid request: \(why)"
        case .enrollmentRejected(let code, let description):
            "the server refused the enrollment (\(code))" + (description.map { ": \($0)" } ?? "")
        case .serverKeyMismatch:
            "the server's key does not match the fingerprint in the enrollment URI"
        case .invalidServerResponse(let why):
            "unexpected answer from the server: \(why)"
        case .server(let status, let code, let description):
            "the server refused the request (HTTP \(status), \(code))" + (description.map { ": \($0)" } ?? "")
        case .keyStore(let why):
            "key store failure: \(why)"
        case .invalidRequestDetails(let why):
            "the request details cannot be trusted: \(why)"
        case .expired:
            "the request has expired"
        case .alreadyAnswered:
            "the request was already answered"
        case .requestNotFound:
            "the server has no such request for this device"
        case .requestNotHandleable:
            "the request asks for a factor this enrollment cannot give"
        case .factorsNotEnrolled(let factors):
            "the request needs factors this enrollment lacks: \(factors.map(\.policyName).joined(separator: ", "))"
        case .verifierUnavailable:
            "the tenant's verifier is unavailable; nothing was decided, try again"
        case .wrongPIN(let remaining):
            "wrong PIN" + (remaining.map { "; \($0) attempt\($0 == 1 ? "" : "s") left" } ?? "")
        case .biometricFailed:
            "the biometric check failed"
        case .pinNotEnrolled:
            "this enrollment has no PIN"
        case .totpNotEnrolled:
            "this enrollment has no one-time code seed"
        case .noticeNotFound:
            "the server showed no such notice to this device"
        case .noticeAlreadyReported:
            "the notice was already reported"
        case .noticeExpired:
            "the notice is more than a week old and can no longer be answered"
        case .handoverPending:
            "this device waits for the approval of the device that handed over to it"
        case .handoverNotFound:
            "this device started no such handover"
        case .handoverClosed:
            "the handover was closed already, or no new device has enrolled with it yet"
        case .handoverExpired:
            "the handover's time ran out; start a new one"
        case .wrongNumber:
            "that is not the number the new device shows; the handover was refused and the new device removed"
        }
    }

    public var errorDescription: String? { description }
}

extension CountersignError {
    /// Whether the server removed the enrollment, so that its local data must go too.
    var removesEnrollment: Bool {
        switch self {
        case .deviceDeregistered, .userDeregistered, .userDisenrolled: true
        default: false
        }
    }
}
