import CLDAP
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// One libldap handle on one connection to one server, TLS set up as configured, used by one
/// thread at a time (a `DirectoryThreads` thread) and closed when released. Every call blocks.
///
/// Options are set on the handle, never libldap's global ones, and every option that matters is
/// set: libldap starts each handle from /etc/ldap/ldap.conf, ~/.ldaprc and `LDAPTLS_*`
/// variables, where a `TLS_REQCERT never` or `TLS_REQSAN allow` would otherwise weaken the checks
/// without Countersign knowing.
final class LDAPConnection {
    let server: LDAPServerAddress
    private let handle: OpaquePointer
    private let configuration: LDAPConfiguration

    private init(server: LDAPServerAddress, handle: OpaquePointer, configuration: LDAPConfiguration) {
        self.server = server
        self.handle = handle
        self.configuration = configuration
    }

    deinit {
        ldap_unbind_ext_s(handle, nil, nil)
    }

    /// Connects to `server` and sets up TLS as `configuration` says; throws why the server
    /// cannot be used. The connect timeout covers the TCP connection and the TLS handshake
    /// together (StartTLS's request included).
    static func open(_ server: LDAPServerAddress, _ configuration: LDAPConfiguration) throws(ConnectionFailure) -> LDAPConnection {
        let deadline = ContinuousClock.now + configuration.connectTimeout
        let socket = try TCPConnection.connect(host: server.host, port: server.port, until: deadline)
        var handle: OpaquePointer?
        let status = ldap_init_fd(ber_socket_t(socket), LDAP_PROTO_TCP, server.url, &handle)
        guard status == LDAP_SUCCESS, let handle else {
            close(socket)
            throw .unreachable("libldap did not take the connection: \(String(cString: ldap_err2string(status)))")
        }
        // From here the handle owns the socket: unbinding closes it.
        let connection = LDAPConnection(server: server, handle: handle, configuration: configuration)
        try connection.setOptions()
        guard configuration.security != .plain else { return connection }
        let watch = SocketDeadline(descriptor: socket, at: deadline)
        var failure: ConnectionFailure?
        do {
            try connection.startTLS(upgrading: configuration.security == .startTLS)
        } catch {
            failure = error
        }
        // The watch ends before `connection` can be released and its socket closed.
        if watch.end() {
            throw .unreachable("no TLS handshake within the connect timeout (\(configuration.connectTimeout))")
        }
        if let failure { throw failure }
        return connection
    }

    private func setOptions() throws(ConnectionFailure) {
        let operation = configuration.operationTimeout.components
        var failed = false
        failed = cldap_set_int(handle, LDAP_OPT_PROTOCOL_VERSION, LDAP_VERSION3) != LDAP_OPT_SUCCESS || failed
        // A referral would send the service account's password to whichever server it names.
        failed = cldap_set_off(handle, LDAP_OPT_REFERRALS) != LDAP_OPT_SUCCESS || failed
        failed = cldap_set_int(handle, LDAP_OPT_DEREF, LDAP_DEREF_NEVER) != LDAP_OPT_SUCCESS || failed
        failed = cldap_set_int(handle, LDAP_OPT_SIZELIMIT, 0) != LDAP_OPT_SUCCESS || failed
        failed = cldap_set_int(handle, LDAP_OPT_TIMELIMIT, 0) != LDAP_OPT_SUCCESS || failed
        // No limit of libldap's on the TLS handshake (-1 is none): with one it makes the socket
        // non-blocking and, with GnuTLS, spins on a server that never answers. `SocketDeadline`
        // ends the handshake at the connect timeout instead.
        failed = cldap_set_timeval(handle, LDAP_OPT_NETWORK_TIMEOUT, -1, 0) != LDAP_OPT_SUCCESS || failed
        // Every synchronous call's wait for its answer: bind, StartTLS, each page of a search.
        failed = cldap_set_timeval(handle, LDAP_OPT_TIMEOUT, Int(operation.seconds), Int(operation.attoseconds / 1_000_000_000_000)) != LDAP_OPT_SUCCESS || failed
        guard !failed else { throw .configuration("libldap refused a connection option") }
        guard configuration.security != .plain else { return }
        try setTLSOptions()
    }

    /// Certificate and host name always checked; the configured CAs, or the system's, and no
    /// others; TLS 1.2 at least. The handle gets a TLS context of its own (`LDAP_OPT_X_TLS_NEWCTX`),
    /// built from these options: without it libldap uses one process-wide context made from
    /// whichever handle first needed it.
    private func setTLSOptions() throws(ConnectionFailure) {
        var failed = false
        failed = cldap_set_int(handle, LDAP_OPT_X_TLS_REQUIRE_CERT, LDAP_OPT_X_TLS_DEMAND) != LDAP_OPT_SUCCESS || failed
        // TRY: a certificate with subjectAltNames must name the host in one of them (RFC 6125);
        // only one without any is matched by its CN. libldap's default, ALLOW, falls back to the
        // CN when no subjectAltName matches, and NEVER (ldap.conf may say so) checks no name.
        failed = cldap_set_int(handle, LDAP_OPT_X_TLS_REQUIRE_SAN, LDAP_OPT_X_TLS_TRY) != LDAP_OPT_SUCCESS || failed
        failed = cldap_set_int(handle, LDAP_OPT_X_TLS_PROTOCOL_MIN, cldap_tls_protocol_1_2) != LDAP_OPT_SUCCESS || failed
        failed = cldap_set_string(handle, LDAP_OPT_X_TLS_CACERTDIR, nil) != LDAP_OPT_SUCCESS || failed
        guard !failed else { throw .configuration("libldap refused a TLS option") }
        let trust: TrustFile
        do {
            trust = try TrustFile(configuration.caCertificatesPEM)
        } catch {
            throw .configuration(error.description)
        }
        defer { trust.remove() }
        guard cldap_set_string(handle, LDAP_OPT_X_TLS_CACERTFILE, trust.path) == LDAP_OPT_SUCCESS,
              cldap_set_int(handle, LDAP_OPT_X_TLS_NEWCTX, 0) == LDAP_OPT_SUCCESS else {
            throw .configuration("the CA certificates could not be loaded" + (diagnostic().map { ": \($0)" } ?? ""))
        }
    }

    /// TLS on the connection: at once for ldaps://, after the StartTLS operation for ldap://.
    private func startTLS(upgrading: Bool) throws(ConnectionFailure) {
        let status = upgrading ? ldap_start_tls_s(handle, nil, nil) : ldap_install_tls(handle)
        guard status != LDAP_SUCCESS else { return }
        switch status {
        case LDAP_TIMEOUT:
            throw .timeout
        case LDAP_SERVER_DOWN where upgrading:
            throw .unreachable("the connection closed before StartTLS was answered")
        case LDAP_CONNECT_ERROR, LDAP_SERVER_DOWN:
            // libldap 2.5 with GnuTLS leaves "(unknown error code)" as the message of every
            // verification failure, an untrusted CA and a host name mismatch alike (the latter's
            // own message is overwritten), so the message can only list what it may be.
            let message = diagnostic().flatMap { $0 == "(unknown error code)" ? nil : $0 }
            throw .tls(message ?? "the server's certificate was not accepted (not signed by a trusted CA, "
                + "expired, or not valid for \(server.host)), or the TLS handshake failed")
        default:
            let message = diagnostic().map { ": \($0)" } ?? ""
            throw .tls("the server refused StartTLS (\(status) \(String(cString: ldap_err2string(status))))\(message)")
        }
    }

    /// A simple bind; the result code (0 when bound, 49 for a wrong DN or password).
    func bind(dn: String, password: String) -> Int32 {
        var bytes = Array(password.utf8CString.dropLast())
        defer { bytes.withUnsafeMutableBufferPointer { $0.update(repeating: 0) } }
        return bytes.withUnsafeMutableBufferPointer { buffer in
            var credential = berval(bv_len: ber_len_t(buffer.count), bv_val: buffer.baseAddress)
            // LDAP_SASL_SIMPLE is a null mechanism.
            return ldap_sasl_bind_s(handle, dn, nil, &credential, nil, nil, nil)
        }
    }

    /// The diagnostic message libldap or the server left on the handle.
    func diagnostic() -> String? {
        guard let message = cldap_diagnostic_message(handle) else { return nil }
        defer { ldap_memfree(message) }
        let text = String(cString: message)
        return text.isEmpty ? nil : text
    }

    /// One page of a search's answer.
    struct SearchPage {
        var entries: [LDAPEntry]
        /// The paged results cookie for the next page; empty after the last.
        var cookie: [UInt8]
        /// The LDAP result code, or libldap's negative local one.
        var code: Int32
        /// The directory's (or libldap's) diagnostic message.
        var message: String?
    }

    /// One page of a search, `pageSize` entries at most, from where `cookie` left off (the start
    /// when empty).
    func searchPage(
        base: String, scope: Int32, filter: String, attributes: [String], pageSize: Int32, cookie: [UInt8]
    ) -> SearchPage {
        var control: UnsafeMutablePointer<LDAPControl>?
        var cookieBytes = cookie.map { CChar(bitPattern: $0) }
        // Not critical: a directory without paging answers the whole search, or its size limit.
        let created = cookieBytes.withUnsafeMutableBufferPointer { bytes in
            guard !bytes.isEmpty else { return ldap_create_page_control(handle, pageSize, nil, 0, &control) }
            var value = berval(bv_len: ber_len_t(bytes.count), bv_val: bytes.baseAddress)
            return ldap_create_page_control(handle, pageSize, &value, 0, &control)
        }
        guard created == LDAP_SUCCESS, let control else {
            return SearchPage(entries: [], cookie: [], code: created, message: "the paged results control could not be made")
        }
        defer { ldap_control_free(control) }
        var names = attributes.map { strdup($0) } + [nil]
        defer { names.forEach { free($0) } }
        let seconds = Int(configuration.operationTimeout.components.seconds) + (configuration.operationTimeout.components.attoseconds > 0 ? 1 : 0)
        var timeout = timeval(tv_sec: seconds, tv_usec: 0)
        var controls: [UnsafeMutablePointer<LDAPControl>?] = [control, nil]
        var result: OpaquePointer?
        let status = names.withUnsafeMutableBufferPointer { names in
            controls.withUnsafeMutableBufferPointer { controls in
                ldap_search_ext_s(handle, base, scope, filter, attributes.isEmpty ? nil : names.baseAddress, 0,
                                  controls.baseAddress, nil, &timeout, 0, &result)
            }
        }
        defer { if let result { ldap_msgfree(result) } }
        guard let result else { return SearchPage(entries: [], cookie: [], code: status, message: diagnostic()) }
        let entries = readEntries(result)
        var code: Int32 = status
        var message: UnsafeMutablePointer<CChar>?
        var returned: UnsafeMutablePointer<UnsafeMutablePointer<LDAPControl>?>?
        guard ldap_parse_result(handle, result, &code, nil, &message, nil, &returned, 0) == LDAP_SUCCESS else {
            return SearchPage(entries: entries, cookie: [], code: status, message: diagnostic())
        }
        defer {
            if let message { ldap_memfree(message) }
            if let returned { ldap_controls_free(returned) }
        }
        var next: [UInt8] = []
        if let response = ldap_control_find(LDAP_CONTROL_PAGEDRESULTS, returned, nil) {
            var estimate: ber_int_t = 0
            var value = berval()
            if ldap_parse_pageresponse_control(handle, response, &estimate, &value) == LDAP_SUCCESS, let bytes = value.bv_val {
                next = Array(UnsafeRawBufferPointer(start: bytes, count: Int(value.bv_len)))
                ber_memfree(bytes)
            }
        }
        let text = message.map { String(cString: $0) }
        return SearchPage(entries: entries, cookie: next, code: code, message: text?.isEmpty == false ? text : nil)
    }

    private func readEntries(_ result: OpaquePointer) -> [LDAPEntry] {
        var entries: [LDAPEntry] = []
        var entry = ldap_first_entry(handle, result)
        while let current = entry {
            entries.append(readEntry(current))
            entry = ldap_next_entry(handle, current)
        }
        return entries
    }

    private func readEntry(_ entry: OpaquePointer) -> LDAPEntry {
        var dn = ""
        if let name = ldap_get_dn(handle, entry) {
            dn = String(cString: name)
            ldap_memfree(name)
        }
        var attributes: [String: [[UInt8]]] = [:]
        var position: OpaquePointer?
        var attribute = ldap_first_attribute(handle, entry, &position)
        while let name = attribute {
            var values: [[UInt8]] = []
            if let found = ldap_get_values_len(handle, entry, name) {
                var index = 0
                while let value = found[index] {
                    let bytes = value.pointee.bv_val.map { UnsafeRawBufferPointer(start: $0, count: Int(value.pointee.bv_len)) }
                    values.append(bytes.map(Array.init) ?? [])
                    index += 1
                }
                ldap_value_free_len(found)
            }
            attributes[String(cString: name), default: []] += values
            ldap_memfree(name)
            attribute = ldap_next_attribute(handle, entry, position)
        }
        if let position { ber_free(position, 0) }
        return LDAPEntry(dn: dn, attributes: attributes)
    }
}

/// The CA file libldap reads when the handle's TLS context is made (it takes CA certificates
/// only from a file or directory, or a single DER certificate in memory): the configured PEM in
/// a private file, mode 0600, removed once the context holds it; or the system's bundle.
private struct TrustFile {
    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    let path: String
    private let temporary: Bool

    /// Where Debian and Ubuntu, Fedora and RHEL, SUSE, and Alpine keep the system's CA bundle.
    private static let systemBundles = [
        "/etc/ssl/certs/ca-certificates.crt", "/etc/pki/tls/certs/ca-bundle.crt",
        "/etc/ssl/ca-bundle.pem", "/etc/ssl/cert.pem",
    ]

    init(_ pem: String?) throws(Failure) {
        guard let pem else {
            guard let bundle = Self.systemBundles.first(where: { access($0, R_OK) == 0 }) else {
                throw Failure(description: "no CA certificates are configured and the system's CA bundle was not found")
            }
            path = bundle
            temporary = false
            return
        }
        let directory = getenv("TMPDIR").map { String(cString: $0) } ?? "/tmp"
        var template = Array("\(directory)/countersign-ldap-ca-XXXXXX".utf8CString)
        let descriptor = template.withUnsafeMutableBufferPointer { mkstemp($0.baseAddress!) }
        guard descriptor >= 0 else {
            throw Failure(description: "the CA certificates could not be written to \(directory): \(String(cString: strerror(errno)))")
        }
        path = template.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
        temporary = true
        let bytes = Array(pem.utf8)
        var written = 0
        while written < bytes.count {
            let count = bytes[written...].withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else {
                close(descriptor)
                unlink(path)
                throw Failure(description: "the CA certificates could not be written to \(path)")
            }
            written += count
        }
        close(descriptor)
    }

    func remove() {
        if temporary { unlink(path) }
    }
}
