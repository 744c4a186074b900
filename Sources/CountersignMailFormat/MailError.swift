/// Why a message was not built or not sent.
public enum MailError: Error, Sendable, Equatable, CustomStringConvertible {
    /// An address that cannot be used in an SMTP envelope or a header.
    case invalidAddress(String, String)
    /// A header value that cannot be written (a line break in a subject).
    case invalidHeader(String, String)
    /// The server's settings cannot be used (a URL of the wrong scheme, a bad certificate).
    case invalidServer(String)
    /// The server could not be reached, or the connection broke: worth another try.
    case connection(String)
    /// TLS could not be set up: the certificate was not trusted, or STARTTLS was not offered.
    case tls(String)
    /// The server refused the credentials.
    case authentication(String)
    /// The server answered with an SMTP error: a 4xx is temporary, a 5xx permanent.
    case refused(code: Int, String)
    /// The whole exchange took longer than the timeout.
    case timeout(String)

    /// Whether sending again later cannot help: the server said no for good, or the settings or
    /// message are wrong. A refused login is not final: its password may be corrected.
    public var isPermanent: Bool {
        switch self {
        case .invalidAddress, .invalidHeader, .invalidServer: true
        case .refused(let code, _): (500..<600).contains(code)
        case .connection, .tls, .authentication, .timeout: false
        }
    }

    public var description: String {
        switch self {
        case .invalidAddress(let address, let why): "the address \"\(address)\" \(why)"
        case .invalidHeader(let name, let why): "the \(name) \(why)"
        case .invalidServer(let why): "the mail server's settings cannot be used: \(why)"
        case .connection(let why): "the mail server could not be reached: \(why)"
        case .tls(let why): "TLS with the mail server failed: \(why)"
        case .authentication(let why): "the mail server refused the login: \(why)"
        case .refused(let code, let why): "the mail server answered \(code): \(why)"
        case .timeout(let why): "the mail server did not finish in time: \(why)"
        }
    }
}
