/// Why a directory operation failed. Each case is one thing an administrator can act on (the
/// console's "test connection" shows `description`); none carries a password, the service
/// account's or a user's.
public enum LDAPError: Error, Sendable, Equatable, CustomStringConvertible {
    /// No configured server could be reached: each server, in order, and why.
    case unreachable([ServerFailure])
    /// A server answered but TLS could not be set up with it: its certificate is not signed by
    /// a trusted CA, has expired or names another host, or it refused StartTLS.
    case tls(String)
    /// The directory refused the service account's DN and password (result code 49).
    case invalidCredentials
    /// The directory did not answer within the operation timeout, or stopped a search at its
    /// own time limit.
    case timeout
    /// The search base does not exist (result code 32).
    case noSuchObject(base: String)
    /// The directory stopped a search at its size limit (result code 4): the search needs
    /// paging, or a smaller page size than the directory's limit.
    case sizeLimit
    /// The task waiting for the operation was cancelled before it started.
    case cancelled
    /// Any other result: the LDAP result code (RFC 4511 §4.1.9, or libldap's negative local
    /// codes) and the directory's diagnostic message.
    case `protocol`(code: Int32, message: String)
    /// The configuration cannot work as written (a server URL, its security, a filter).
    case configuration(String)

    /// One server that could not be used, and why.
    public struct ServerFailure: Sendable, Equatable, CustomStringConvertible {
        /// The server's URL, as `ldaps://host:port`.
        public let server: String
        public let reason: String

        public init(server: String, reason: String) {
            self.server = server
            self.reason = reason
        }

        public var description: String { "\(server): \(reason)" }
    }

    public var description: String {
        switch self {
        case .unreachable(let failures):
            "no directory server could be reached (" + failures.map(\.description).joined(separator: "; ") + ")"
        case .tls(let message): "TLS failed: \(message)"
        case .invalidCredentials: "the directory refused the service account's DN or password"
        case .timeout: "the directory did not answer in time"
        case .noSuchObject(let base): "the search base \(base) does not exist"
        case .sizeLimit: "the directory's size limit stopped the search"
        case .cancelled: "cancelled"
        case .protocol(let code, let message): "the directory answered \(code)" + (message.isEmpty ? "" : ": \(message)")
        case .configuration(let message): "invalid directory configuration: \(message)"
        }
    }
}
