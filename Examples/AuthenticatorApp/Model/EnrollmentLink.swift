import CountersignCore
import CountersignKit
import Foundation

/// A scanned QR code or pasted text, checked before anything is sent: the confirmation screen
/// names the server ("Set up approvals for id.example.com?") before the phone enrolls.
///
/// ```swift
/// switch EnrollmentLink.read(scannedText) {
/// case .success(let link): confirm(link.serverName)
/// case .failure(let problem): show(problem)
/// }
/// ```
public struct EnrollmentLink: Sendable, Equatable {
    /// The enrollment URI, as the SDK takes it.
    public let uri: String
    /// The server's host (and port when it is not the default), to show before enrolling.
    public let serverName: String

    /// Reads text from the camera or the clipboard: surrounding white space is ignored.
    public static func read(_ text: String) -> Result<EnrollmentLink, ProblemMessage> {
        let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
        do {
            let parsed = try EnrollmentURI(parsing: trimmed)
            let host = parsed.server.host ?? parsed.server.absoluteString
            let name = parsed.server.port.map { "\(host):\($0)" } ?? host
            return .success(EnrollmentLink(uri: trimmed, serverName: name))
        } catch {
            return .failure(ProblemMessage(.invalidEnrollmentURI(error.description)))
        }
    }

    /// The name a new enrollment gives this phone: the device's name, or "iPhone".
    public static func deviceName(from systemName: String) -> String {
        DeviceName.validate(systemName) ?? "iPhone"
    }
}
