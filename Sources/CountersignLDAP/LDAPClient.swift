@_exported import CountersignLDAPNames
import CLDAP
import NIOPosix
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// How much of the tree under the base a search covers.
public enum LDAPSearchScope: Sendable {
    /// The base entry alone.
    case base
    /// The base's immediate children.
    case oneLevel
    /// The base and everything under it.
    case subtree

    var value: Int32 {
        switch self {
        case .base: cldap_scope_base
        case .oneLevel: cldap_scope_one_level
        case .subtree: cldap_scope_subtree
        }
    }
}

/// A client of one directory (OpenLDAP, Active Directory, 389, FreeIPA) for the directory user
/// source: search it as the service account, check a user's password by binding as them.
///
/// Every call opens its own connection to the first configured server that answers, in order:
/// a server that refuses the connection, does not answer within the connect timeout or fails TLS
/// is passed over for the next; a server that answers and refuses a bind is not (the next would
/// refuse it too, and trying every server with a user's wrong password could lock the account
/// faster). libldap blocks, so each call runs on `DirectoryThreads`, never on Swift's
/// concurrency pool.
///
/// ```swift
/// let directory = LDAPClient(configuration: configuration)
/// try await directory.check()
/// let users = try await directory.search(
///     base: "ou=People,dc=example,dc=com", filter: LDAPFilter("(objectClass=inetOrgPerson)"),
///     attributes: ["uid", "mail", "memberOf", "entryUUID"])
/// let accepted = try await directory.verifyPassword(dn: users[0].dn, password: typed)
/// ```
public struct LDAPClient: Sendable {
    public let configuration: LDAPConfiguration

    public init(configuration: LDAPConfiguration) {
        self.configuration = configuration
    }

    /// Connects and binds as the service account, as a search would: for the console's "test
    /// connection".
    public func check() async throws(LDAPError) {
        let configuration = configuration
        try await DirectoryThreads.run { () throws(LDAPError) in
            _ = try Self.serviceConnection(configuration)
        }
    }

    /// Every entry under `base` that matches `filter`, with `attributes` (all user attributes when
    /// empty; operational ones such as `memberOf` and `entryUUID` only when named), fetched
    /// `pageSize` at a time with the paged results control (RFC 2696) until the directory says
    /// there are no more. Directories cap a single answer (Active Directory at 1,000 entries,
    /// OpenLDAP at its `sizelimit`), so a page size at or under that cap reads any number.
    public func search(
        base: String, scope: LDAPSearchScope = .subtree, filter: LDAPFilter, attributes: [String], pageSize: Int = 500
    ) async throws(LDAPError) -> [LDAPEntry] {
        guard let pageSize = Int32(exactly: pageSize), pageSize > 0 else {
            throw .configuration("the page size must be between 1 and \(Int32.max)")
        }
        let configuration = configuration
        return try await DirectoryThreads.run { () throws(LDAPError) in
            let connection = try Self.serviceConnection(configuration)
            var entries: [LDAPEntry] = []
            var cookie: [UInt8] = []
            repeat {
                let page = connection.searchPage(
                    base: base, scope: scope.value, filter: filter.text, attributes: attributes, pageSize: pageSize,
                    cookie: cookie)
                switch page.code {
                case LDAP_SUCCESS: break
                case LDAP_SIZELIMIT_EXCEEDED: throw .sizeLimit
                case LDAP_TIMELIMIT_EXCEEDED, LDAP_TIMEOUT: throw .timeout
                case LDAP_NO_SUCH_OBJECT: throw .noSuchObject(base: base)
                case LDAP_FILTER_ERROR: throw .configuration("\(filter) is not an LDAP filter (RFC 4515)")
                case let code: throw .protocol(code: code, message: page.message ?? String(cString: ldap_err2string(code)))
                }
                entries += page.entries
                cookie = page.cookie
            } while !cookie.isEmpty
            return entries
        }
    }

    /// Whether `password` is the password of the user at `dn`: a simple bind as them on a
    /// connection of its own. False when the directory refuses it (result code 49: wrong
    /// password, or, in Active Directory, a disabled, locked or expired account); an empty
    /// password is false without asking, since a simple bind with one is an unauthenticated bind
    /// (RFC 4513 §5.1.2) that many directories accept. Throws when no server answers or the
    /// directory answers anything else.
    public func verifyPassword(dn: String, password: String) async throws(LDAPError) -> Bool {
        guard !password.isEmpty, !dn.isEmpty else { return false }
        let configuration = configuration
        return try await DirectoryThreads.run { () throws(LDAPError) in
            try Self.connection(configuration, bindingAs: (dn: dn, password: password)) != nil
        }
    }

    /// A connection bound as the service account (or anonymous when none is configured).
    private static func serviceConnection(_ configuration: LDAPConfiguration) throws(LDAPError) -> LDAPConnection {
        let credentials = configuration.bindDN.flatMap { dn in configuration.bindPassword.map { (dn: dn, password: $0.text) } }
        guard let connection = try connection(configuration, bindingAs: credentials) else { throw .invalidCredentials }
        return connection
    }

    /// A connection to the first server that answers, bound as `credentials` when given; nil
    /// when the directory refused them (result code 49).
    private static func connection(
        _ configuration: LDAPConfiguration, bindingAs credentials: (dn: String, password: String)?
    ) throws(LDAPError) -> LDAPConnection? {
        var failures: [(server: LDAPServerAddress, failure: ConnectionFailure)] = []
        for server in configuration.servers {
            let connection: LDAPConnection
            do {
                connection = try LDAPConnection.open(server, configuration)
            } catch {
                if case .configuration(let message) = error { throw .configuration(message) }
                failures.append((server: server, failure: error))
                continue
            }
            guard let credentials else { return connection }
            let status = connection.bind(dn: credentials.dn, password: credentials.password)
            switch status {
            case LDAP_SUCCESS:
                return connection
            case LDAP_INVALID_CREDENTIALS:
                return nil
            case LDAP_TIMEOUT:
                failures.append((server: server, failure: .timeout))
            case LDAP_SERVER_DOWN, LDAP_UNAVAILABLE, LDAP_BUSY:
                failures.append((server: server, failure: .unreachable("the server did not answer the bind: "
                    + (connection.diagnostic() ?? String(cString: ldap_err2string(status))))))
            case LDAP_INVALID_DN_SYNTAX:
                throw .configuration("\(credentials.dn) is not a DN the directory accepts")
            default:
                throw .protocol(code: status, message: connection.diagnostic() ?? String(cString: ldap_err2string(status)))
            }
        }
        throw exhausted(failures)
    }

    /// What to report when no server could be used: a TLS failure first (a certificate or CA
    /// to fix, whatever the other servers did), a timeout when every server timed out, else each
    /// server's reason.
    private static func exhausted(_ failures: [(server: LDAPServerAddress, failure: ConnectionFailure)]) -> LDAPError {
        let tls = failures.compactMap { entry -> String? in
            if case .tls(let message) = entry.failure { return "\(entry.server.url): \(message)" }
            return nil
        }
        if !tls.isEmpty { return .tls(tls.joined(separator: "; ")) }
        if failures.allSatisfy({ if case .timeout = $0.failure { true } else { false } }) { return .timeout }
        return .unreachable(failures.map { entry in
            let reason = switch entry.failure {
            case .unreachable(let message), .tls(let message), .configuration(let message): message
            case .timeout: "no answer within the operation timeout"
            }
            return LDAPError.ServerFailure(server: entry.server.url, reason: reason)
        })
    }
}

/// The threads libldap's blocking calls run on. A call waits for a TCP connect, a TLS handshake
/// and the directory's answers, up to the configured timeouts: on Swift's concurrency pool (one
/// thread per core) two such waits would stall every task of the server, and on NIO's shared
/// blocking pool (also one per core) they would stall file I/O. Eight threads of their own bound
/// how many directory operations run at once; more wait their turn.
enum DirectoryThreads {
    static let pool: NIOThreadPool = {
        // libldap writes to its socket with write(2) (liblber's, under TLS too), which raises
        // SIGPIPE when the directory has closed its end: that must not end Countersign. SwiftNIO ignores
        // SIGPIPE the same way, process-wide, once it opens its first socket; this does it for
        // a process that talks to a directory before that.
        signal(SIGPIPE, SIG_IGN)
        let pool = NIOThreadPool(numberOfThreads: 8)
        pool.start()
        return pool
    }()

    static func run<T: Sendable>(_ body: @escaping @Sendable () throws(LDAPError) -> T) async throws(LDAPError) -> T {
        let result: Result<T, LDAPError>
        do {
            result = try await pool.runIfActive { Result { () throws(LDAPError) in try body() } }
        } catch {
            // runIfActive throws only when the task was cancelled before its turn came (the pool
            // is never shut down).
            throw .cancelled
        }
        return try result.get()
    }
}
