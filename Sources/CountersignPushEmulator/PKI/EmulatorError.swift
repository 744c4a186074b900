import Foundation

/// Why an emulator could not be set up.
///
/// Each case carries what a person needs to fix the environment, and never a password or a
/// private key: certificates are made by the `openssl` command, so its standard error is the
/// most useful thing to show when it refuses.
public enum EmulatorError: Error, Sendable, Equatable, CustomStringConvertible {
    /// No `openssl` executable was found on `PATH`.
    case openSSLUnavailable
    /// `openssl` ran and failed. `arguments` never hold a password (those go through the
    /// environment), so the whole command can be shown.
    case openSSLFailed(arguments: [String], status: Int32, standardError: String)
    /// A file the emulator wrote, or was given, could not be read or written.
    case file(path: String, reason: String)
    /// A certificate or key could not be loaded into the TLS stack.
    case tlsConfiguration(String)

    /// What went wrong and what to do about it, without secrets.
    public var description: String {
        switch self {
        case .openSSLUnavailable:
            "the openssl command is not on PATH; the push emulators make their certificates with it"
        case .openSSLFailed(let arguments, let status, let standardError):
            "openssl \(arguments.joined(separator: " ")) exited with status \(status): \(standardError)"
        case .file(let path, let reason):
            "\(path): \(reason)"
        case .tlsConfiguration(let reason):
            "TLS configuration refused: \(reason)"
        }
    }
}
