/// How Countersign reaches a directory: its servers in order of preference, how the connection is
/// protected, the service account that searches it, and how long to wait.
///
/// The initializer checks everything that can be checked without a network, so a configuration
/// that exists can only fail at the directory: a `ldaps://` server with StartTLS, or `ldap://`
/// without saying how it is protected, is refused with a message naming the server.
///
/// ```swift
/// let configuration = try LDAPConfiguration(
///     servers: ["ldaps://dc1.example.com", "ldaps://dc2.example.com"],
///     security: .ldaps,
///     caCertificatesPEM: corporateRootPEM,
///     bindDN: "CN=svc-countersign,OU=Service Accounts,DC=example,DC=com",
///     bindPassword: password)
/// ```
public struct LDAPConfiguration: Sendable, CustomStringConvertible {
    /// How the connection to each server is protected. There is no default that sends passwords
    /// in the clear: `plain` must be chosen, and then only `ldap://` servers take it.
    public enum Security: String, Sendable {
        /// TLS from the first byte (`ldaps://`, port 636 by default).
        case ldaps
        /// A plain connection upgraded with the StartTLS operation (RFC 4511 §4.14) before any
        /// bind (`ldap://`, port 389 by default); refused when the server does not upgrade.
        case startTLS
        /// No TLS: the service account's password and every user's pass over the network as they
        /// are. Only for a directory on the same host or a network that is itself protected.
        case plain
    }

    /// The servers, tried in this order on every operation.
    public let servers: [LDAPServerAddress]
    public let security: Security
    /// The CAs that may sign the servers' certificates, in PEM, trusted instead of the system's;
    /// nil trusts the system's CA bundle. The certificate is always verified, and its name must
    /// match the server's host (a subjectAltName when it has one).
    public let caCertificatesPEM: String?
    /// The service account that searches the directory; nil binds anonymously.
    public let bindDN: String?
    let bindPassword: Password?
    /// How long to wait for a server to accept a connection and complete the TLS handshake,
    /// before trying the next.
    public let connectTimeout: Duration
    /// How long to wait for each answer (a bind, StartTLS, one page of a search); a search also
    /// asks the server to stop after this many seconds.
    public let operationTimeout: Duration

    public init(
        servers: [String],
        security: Security = .ldaps,
        caCertificatesPEM: String? = nil,
        bindDN: String? = nil,
        bindPassword: String? = nil,
        connectTimeout: Duration = .seconds(5),
        operationTimeout: Duration = .seconds(30)
    ) throws(LDAPError) {
        guard !servers.isEmpty else { throw .configuration("no directory server is configured") }
        var addresses: [LDAPServerAddress] = []
        for text in servers {
            let address = try LDAPServerAddress(parsing: text)
            switch (address.scheme, security) {
            case (.ldaps, .ldaps), (.ldap, .startTLS), (.ldap, .plain):
                break
            case (.ldaps, _):
                throw .configuration("\(text) is an ldaps:// server, which needs security ldaps (not \(security.rawValue))")
            case (.ldap, .ldaps):
                throw .configuration("\(text) is an ldap:// server: use an ldaps:// URL for security ldaps, "
                    + "or choose startTLS (or plain, to send passwords unencrypted)")
            }
            addresses.append(address)
        }
        if let pem = caCertificatesPEM, !pem.contains("-----BEGIN CERTIFICATE-----") {
            throw .configuration("the CA certificates are not PEM (no -----BEGIN CERTIFICATE----- line)")
        }
        switch (bindDN, bindPassword) {
        case (nil, nil):
            break
        case (let dn?, let password?):
            do {
                _ = try DistinguishedName(parsing: dn)
            } catch {
                throw .configuration("the bind DN \(dn) is not a distinguished name: \(error)")
            }
            // An empty password makes a simple bind an unauthenticated one (RFC 4513 §5.1.2),
            // which many directories accept as anonymous: the service account would seem to work.
            guard !password.isEmpty else { throw .configuration("the bind password is empty") }
        case (nil, _?):
            throw .configuration("a bind password is set without a bind DN")
        case (_?, nil):
            throw .configuration("a bind DN is set without a bind password")
        }
        guard connectTimeout > .zero, operationTimeout > .zero else {
            throw .configuration("the timeouts must be longer than zero")
        }
        self.servers = addresses
        self.security = security
        self.caCertificatesPEM = caCertificatesPEM
        self.bindDN = bindDN
        self.bindPassword = bindPassword.map(Password.init)
        self.connectTimeout = connectTimeout
        self.operationTimeout = operationTimeout
    }

    /// Everything but the password.
    public var description: String {
        "LDAPConfiguration(servers: \(servers.map(\.url)), security: \(security.rawValue), "
            + "bindDN: \(bindDN ?? "anonymous"), CA: \(caCertificatesPEM == nil ? "system" : "configured"), "
            + "connectTimeout: \(connectTimeout), operationTimeout: \(operationTimeout))"
    }
}

/// A password kept out of `description`, `dump` and the debugger's summaries.
struct Password: Sendable, CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    let text: String

    var description: String { "<password>" }
    var debugDescription: String { "<password>" }
    var customMirror: Mirror { Mirror(self, children: []) }
}

/// One server's URL: `ldap://` or `ldaps://`, a host name or IP address (IPv6 in brackets) and
/// an optional port, nothing after it (a base DN or filter in the URL would be ignored silently
/// by libldap, so it is refused instead).
public struct LDAPServerAddress: Sendable, Hashable {
    public enum Scheme: String, Sendable {
        case ldap
        case ldaps
    }

    public let scheme: Scheme
    /// The host as written, without brackets; libldap checks the certificate against it.
    public let host: String
    public let port: Int

    /// `scheme://host:port`, as libldap takes it and errors name the server.
    public var url: String {
        "\(scheme.rawValue)://\(host.contains(":") ? "[\(host)]" : host):\(port)"
    }

    public init(parsing text: String) throws(LDAPError) {
        let lowered = text.lowercased()
        let rest: Substring
        if lowered.hasPrefix("ldaps://") {
            scheme = .ldaps
            rest = text.dropFirst("ldaps://".count)
        } else if lowered.hasPrefix("ldap://") {
            scheme = .ldap
            rest = text.dropFirst("ldap://".count)
        } else {
            throw .configuration("\(text) is not an ldap:// or ldaps:// URL")
        }
        var authority = rest
        if authority.hasSuffix("/") { authority = authority.dropLast() }
        guard !authority.contains("/"), !authority.contains("?"), !authority.contains("@") else {
            throw .configuration("\(text) has more than a host and port (a DN, filter or user belongs elsewhere)")
        }
        var portText: Substring?
        if authority.hasPrefix("[") {
            guard let close = authority.firstIndex(of: "]") else { throw .configuration("\(text) has an unclosed [") }
            host = String(authority[authority.index(after: authority.startIndex)..<close])
            let after = authority[authority.index(after: close)...]
            if !after.isEmpty {
                guard after.hasPrefix(":") else { throw .configuration("\(text) has text after its IPv6 address") }
                portText = after.dropFirst()
            }
            guard !host.isEmpty, host.allSatisfy({ $0.isHexDigit || $0 == ":" || $0 == "." }) else {
                throw .configuration("\(text) does not hold an IPv6 address in brackets")
            }
        } else {
            let parts = authority.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false)
            host = String(parts[0])
            if parts.count == 2 { portText = parts[1] }
            guard !host.isEmpty, host.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-" || $0 == "." || $0 == "_") }) else {
                throw .configuration("\(text) does not name a host")
            }
        }
        if let portText {
            guard let port = Int(portText), (1...65535).contains(port) else {
                throw .configuration("\(text) has an invalid port")
            }
            self.port = port
        } else {
            port = scheme == .ldaps ? 636 : 389
        }
    }
}
