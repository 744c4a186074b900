import CountersignCore
import Foundation

/// Everything that can go wrong in `CountersignKit`, in terms an app can act on.
///
/// ```swift
/// do {
///     _ = try await authenticator.deviceStatus(enrollment.id)
/// } catch .deviceDeregistered {
///     // The server removed this device; the local enrollment is already gone.
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
    /// The device is online but the server could not be reached (refused, unknown host, timeout,
    /// TLS failure, or a gateway that could not reach it).
    case serverNotReachable
    /// The device itself has no usable network connection.
    case networkConnectivityFailure
    /// The request was cancelled before an answer arrived.
    case cancelled
    /// The enrollment URI (usually from a QR code) is not one this SDK accepts.
    case invalidEnrollmentURI(String)
    /// The device name is empty, too long or contains control characters.
    case invalidDeviceName
    /// The arguments do not make a valid request (for example, an empty or over-long push token).
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
    case approvalExpired
    /// The approval request was already approved or denied, on this device or another
    /// (`already_decided`).
    case alreadyDecided
}

extension CountersignError: CustomStringConvertible, LocalizedError {
    public var description: String {
        switch self {
        case .notEnrolled:
            "this device has no such enrollment"
        case .deviceDeregistered:
            "the server no longer knows this device; it has been removed locally and must be enrolled again"
        case .serverNotReachable:
            "the server could not be reached"
        case .networkConnectivityFailure:
            "the device is not connected to the network"
        case .cancelled:
            "the request was cancelled"
        case .invalidEnrollmentURI(let why):
            "invalid enrollment URI: \(why)"
        case .invalidDeviceName:
            "the device name must be 1 to \(DeviceName.maximumLength) characters without control characters"
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
        case .approvalExpired:
            "the request has expired"
        case .alreadyDecided:
            "the request was already answered"
        }
    }

    public var errorDescription: String? { description }
}
