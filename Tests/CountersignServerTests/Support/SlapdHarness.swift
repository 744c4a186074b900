import Foundation
import Synchronization
import Testing

/// OpenLDAP's slapd, a real directory for the LDAP client's tests: started on free loopback
/// ports with a configuration and data of its own in a temporary directory, plain LDAP (which
/// offers StartTLS) on one port and LDAP over TLS on another, with certificates from a CA the
/// test makes. The directory holds `DirectoryFixture`'s people and groups, memberOf kept by the
/// memberof overlay, an Active Directory-like schema (sAMAccountName, userPrincipalName,
/// objectGUID, userAccountControl) and, when asked, a large tree for paging: slapd answers any
/// one search with at most 500 entries, as AD answers at most 1,000, and pages without limit.
///
/// The LDAP tests run whenever slapd, slapadd and ldapmodify are installed (CI installs slapd and
/// ldap-utils) and say so when not.
final class SlapdHarness: Sendable {
    /// The directory's size limit on one search (and one page).
    static let sizeLimit = 500

    static let available: Bool = {
        let missing = [("slapd", slapd), ("slapadd", slapadd), ("ldapmodify", ldapmodify)].filter { $0.1 == nil }.map(\.0)
        guard missing.isEmpty else {
            FileHandle.standardError.write(Data(
                "LDAP directory tests: SKIPPED: \(missing.joined(separator: ", ")) not installed (slapd, ldap-utils)\n".utf8))
            return false
        }
        return true
    }()

    private static func tool(_ name: String) -> URL? {
        ChildProcess.find(name) ?? ["/usr/sbin/\(name)"].map(URL.init(fileURLWithPath:))
            .first { FileManager.default.isExecutableFile(atPath: $0.path) }
    }

    private static let slapd = tool("slapd")
    private static let slapadd = tool("slapadd")
    private static let ldapmodify = tool("ldapmodify")

    let directory: URL
    let ldapPort: Int
    let ldapsPort: Int
    private let process: Mutex<SpawnedPeer?>

    /// `ldap://127.0.0.1:port`: plain, or upgraded with StartTLS.
    var ldapURL: String { "ldap://127.0.0.1:\(ldapPort)" }
    /// `ldaps://127.0.0.1:port`, whose certificate names 127.0.0.1.
    var ldapsURL: String { "ldaps://127.0.0.1:\(ldapsPort)" }
    /// The same TLS port at 127.0.0.2, an address the certificate does not name.
    var ldapsURLForAnotherName: String { "ldaps://127.0.0.2:\(ldapsPort)" }
    /// The CA that signed the server's certificate, in PEM.
    var caPEM: String { (try? String(contentsOf: directory.appendingPathComponent("ca.pem"), encoding: .utf8)) ?? "" }
    /// A CA that signed nothing of this directory's.
    var otherCAPEM: String { (try? String(contentsOf: directory.appendingPathComponent("other-ca.pem"), encoding: .utf8)) ?? "" }

    private init(directory: URL, ldapPort: Int, ldapsPort: Int) {
        self.directory = directory
        self.ldapPort = ldapPort
        self.ldapsPort = ldapsPort
        process = Mutex(nil)
    }

    /// A directory with `DirectoryFixture`'s entries and `bulkUsers` more under ou=bulk, started
    /// and answering. Ports are chosen free just before slapd takes them; if another process took
    /// one in between, slapd does not start and new ports are chosen.
    static func start(bulkUsers: Int = 0) async throws -> SlapdHarness {
        var lastError: (any Error)?
        for _ in 0..<3 {
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent("slapd-\(UUID().uuidString)")
            let harness = SlapdHarness(directory: directory, ldapPort: try freeTCPPort(), ldapsPort: try freeTCPPort())
            do {
                try await harness.prepare(bulkUsers: bulkUsers)
                try await harness.launch()
                try await harness.apply(DirectoryFixture.groupsLDIF, add: true)
                return harness
            } catch {
                lastError = error
                harness.shutdown()
            }
        }
        throw lastError ?? SlapdFailure(message: "slapd did not start")
    }

    /// Stops slapd for good and removes its configuration and data.
    func shutdown() {
        stop()
        try? FileManager.default.removeItem(at: directory)
    }

    /// Stops slapd, keeping its data: the directory is down until `restart()`.
    func stop() {
        process.withLock { peer in
            peer?.stop()
            peer = nil
        }
    }

    /// Starts slapd again on the same ports with the same data.
    func restart() async throws {
        try await launch()
    }

    /// Adds the entries of `ldif` as the directory's administrator.
    func add(_ ldif: String) async throws {
        try await apply(ldif, add: true)
    }

    /// Applies the changes of `ldif` (`changetype: modify`, `modrdn`, `delete`, `add`) as the
    /// directory's administrator.
    func modify(_ ldif: String) async throws {
        try await apply(ldif, add: false)
    }

    /// Renames the entry at `dn` to `newRDN`, under `newSuperior` when given (a move).
    func rename(_ dn: String, to newRDN: String, under newSuperior: String? = nil) async throws {
        try await modify("""
            dn: \(dn)
            changetype: modrdn
            newrdn: \(newRDN)
            deleteoldrdn: 1
            \(newSuperior.map { "newsuperior: \($0)" } ?? "")
            """)
    }

    /// Deletes the entry at `dn`.
    func delete(_ dn: String) async throws {
        try await modify("dn: \(dn)\nchangetype: delete\n")
    }

    private func apply(_ ldif: String, add: Bool) async throws {
        let ldapmodify = try #require(Self.ldapmodify)
        let finished = try await ChildProcess.spawned(
            ldapmodify,
            ["-x", "-H", ldapURL, "-D", DirectoryFixture.rootDN, "-w", DirectoryFixture.rootPassword] + (add ? ["-a"] : []),
            environment: Self.toolEnvironment, input: ldif)
        guard finished.status == 0 else { throw SlapdFailure(message: "ldapmodify: \(finished.output)") }
    }

    /// ldap-utils read no ldap.conf or ~/.ldaprc: the tests' directory is all they talk to.
    private static var toolEnvironment: [String: String] {
        ProcessInfo.processInfo.environment.merging(["LDAPNOINIT": "1"]) { $1 }
    }

    /// Writes the PKI, the schema, slapd.conf and the people (slapadd, before slapd runs: the
    /// groups are added once it does, so that the memberof overlay sees them).
    private func prepare(bulkUsers: Int) async throws {
        try FileManager.default.createDirectory(at: directory.appendingPathComponent("data"), withIntermediateDirectories: true)
        try await makePKI()
        try DirectoryFixture.schema.write(to: file("ad.schema"), atomically: true, encoding: .utf8)
        try configuration.write(to: file("slapd.conf"), atomically: true, encoding: .utf8)
        try (DirectoryFixture.baseLDIF + DirectoryFixture.bulkLDIF(count: bulkUsers))
            .write(to: file("base.ldif"), atomically: true, encoding: .utf8)
        let loaded = try await ChildProcess.spawned(
            try #require(Self.slapadd), ["-q", "-f", path("slapd.conf"), "-l", path("base.ldif")])
        guard loaded.status == 0 else { throw SlapdFailure(message: "slapadd: \(loaded.output)") }
    }

    /// Starts slapd in the foreground (`-d 0`: it stays this process's child) and waits until it
    /// answers.
    private func launch() async throws {
        let peer = try SpawnedPeer(try #require(Self.slapd).path, [
            "-d", "0", "-f", path("slapd.conf"),
            "-h", "ldap://127.0.0.1:\(ldapPort)/ ldaps://127.0.0.1:\(ldapsPort)/ ldaps://127.0.0.2:\(ldapsPort)/",
        ])
        process.withLock { $0 = peer }
        let whoami = try #require(ChildProcess.find("ldapwhoami"))
        for _ in 0..<100 {
            // A slapd that ended (another process took a port between its choice and slapd's
            // bind) is not waited for: the ports are chosen again. Nor is a listener on the port
            // that is not slapd: a whoami that is not answered in 5 s is killed.
            if peer.hasEnded() { break }
            let answer = try await ChildProcess.spawned(
                whoami, ["-x", "-o", "nettimeout=2", "-H", ldapURL], environment: Self.toolEnvironment, timeout: .seconds(5))
            if answer.status == 0 { return }
            try await Task.sleep(for: .milliseconds(50))
        }
        let checked = try await ChildProcess.spawned(try #require(Self.slapd), ["-T", "test", "-f", path("slapd.conf")])
        stop()
        throw SlapdFailure(message: "slapd did not answer on \(ldapURL) within 5 s; slaptest: \(checked.output)")
    }

    /// A CA, a server certificate it signs for 127.0.0.1 (not 127.0.0.2), and a CA that signs
    /// nothing here, made with openssl as the RadSec tests' are. The certificate's CN is
    /// 127.0.0.2, the address it must not be accepted for: a client that matched the CN when no
    /// subjectAltName matches (libldap's default) would accept it there.
    private func makePKI() async throws {
        let openssl = try #require(ChildProcess.find("openssl"))
        func run(_ arguments: [String]) async throws {
            let finished = try await ChildProcess.spawned(openssl, arguments)
            guard finished.status == 0 else { throw SlapdFailure(message: "openssl: \(finished.output)") }
        }
        for ca in ["ca", "other-ca"] {
            try await run(["req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-days", "2",
                           "-subj", "/CN=Directory test \(ca)", "-keyout", path("\(ca).key"), "-out", path("\(ca).pem"),
                           "-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign,cRLSign"])
        }
        try await run(["req", "-new", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-subj", "/CN=127.0.0.2",
                       "-keyout", path("server.key"), "-out", path("server.csr")])
        try "extendedKeyUsage=serverAuth\nsubjectAltName=IP:127.0.0.1\n".write(to: file("server.ext"), atomically: true, encoding: .utf8)
        try await run(["x509", "-req", "-in", path("server.csr"), "-CA", path("ca.pem"), "-CAkey", path("ca.key"),
                       "-CAcreateserial", "-days", "2", "-extfile", path("server.ext"), "-out", path("server.pem")])
    }

    /// slapd.conf: the schemas, mdb with the memberof overlay, TLS, the limits, and access for
    /// the service account (read) and users (bind as themselves). Unauthenticated binds (a DN
    /// and an empty password) succeed, as they do in directories that allow them (Active
    /// Directory among them), so that a client which sent one would be seen to "verify" it.
    private var configuration: String {
        """
        include /etc/ldap/schema/core.schema
        include /etc/ldap/schema/cosine.schema
        include /etc/ldap/schema/inetorgperson.schema
        include \(path("ad.schema"))
        modulepath /usr/lib/ldap
        moduleload back_mdb
        moduleload memberof
        TLSCACertificateFile \(path("ca.pem"))
        TLSCertificateFile \(path("server.pem"))
        TLSCertificateKeyFile \(path("server.key"))
        allow bind_anon_dn
        sizelimit size.soft=\(Self.sizeLimit) size.hard=\(Self.sizeLimit) size.pr=\(Self.sizeLimit) size.prtotal=unlimited
        database mdb
        suffix "\(DirectoryFixture.suffix)"
        rootdn "\(DirectoryFixture.rootDN)"
        rootpw \(DirectoryFixture.rootPassword)
        directory \(path("data"))
        maxsize 268435456
        dbnosync
        index objectClass,uid,cn,member eq
        overlay memberof
        access to attrs=userPassword
            by self =xw
            by anonymous auth
            by * none
        access to *
            by dn.exact="\(DirectoryFixture.serviceDN)" read
            by * none

        """
    }

    private func file(_ name: String) -> URL { directory.appendingPathComponent(name) }
    private func path(_ name: String) -> String { file(name).path }
}

struct SlapdFailure: Error, CustomStringConvertible {
    let message: String
    var description: String { message }
}

/// A TCP port on 127.0.0.1 that was free a moment ago.
func freeTCPPort() throws -> Int {
    let holder = try PortHolder()
    return holder.port
}

/// One slapd, with `DirectoryFixture.bulkCount` bulk users, for every test of a suite that only
/// reads the directory: started before the suite's first test, shut down after its last.
/// `SharedSlapd.current` is nil when slapd is not installed.
struct SharedSlapd: SuiteTrait, TestScoping {
    @TaskLocal static var current: SlapdHarness?

    var isRecursive: Bool { false }

    func provideScope(
        for test: Test, testCase: Test.Case?, performing function: @Sendable () async throws -> Void
    ) async throws {
        guard SlapdHarness.available else { return try await function() }
        let slapd = try await SlapdHarness.start(bulkUsers: DirectoryFixture.bulkCount)
        defer { slapd.shutdown() }
        try await Self.$current.withValue(slapd) { try await function() }
    }
}

extension Trait where Self == SharedSlapd {
    /// The suite's tests share one directory (`SharedSlapd.current`).
    static var sharedSlapd: Self { SharedSlapd() }
}
