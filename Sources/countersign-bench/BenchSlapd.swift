import Foundation

/// OpenLDAP's slapd for `countersign-bench directory`: a configuration and data of its own in a
/// scratch directory, plain LDAP on a free port of 127.0.0.1, `users` people under ou=people
/// loaded with slapadd before slapd starts, in groups of 50 (groupOfNames, `member`) under
/// ou=groups. The refint overlay keeps the groups' `member` values pointing at a renamed person,
/// as Active Directory does. The recipe is the LDAP tests' (`SlapdHarness`), without TLS and
/// without a size limit.
final class BenchSlapd: @unchecked Sendable {
    static let suffix = "dc=example,dc=test"
    static let rootDN = "cn=admin,dc=example,dc=test"
    static let rootPassword = "directory-root-secret"
    static let serviceDN = "cn=countersign,ou=services,dc=example,dc=test"
    static let servicePassword = "service-account-secret"
    static let people = "ou=people,dc=example,dc=test"
    static let groups = "ou=groups,dc=example,dc=test"
    static let groupSize = 50

    let directory: URL
    let port: Int
    private var process: Process?

    var url: String { "ldap://127.0.0.1:\(port)" }
    /// slapd's process id, to read its CPU time.
    var pid: Int32? { process?.processIdentifier }

    static func uid(_ index: Int) -> String { "user" + String(format: "%06d", index) }
    static func personDN(_ uid: String) -> String { "uid=\(uid),\(people)" }

    static func tool(_ name: String) -> String? {
        ["/usr/sbin", "/usr/bin", "/usr/local/sbin", "/usr/local/bin"].map { "\($0)/\(name)" }
            .first { FileManager.default.isExecutableFile(atPath: $0) }
    }

    private init(directory: URL, port: Int) {
        self.directory = directory
        self.port = port
    }

    /// Writes the configuration and the people and groups, loads them, and starts slapd.
    static func start(users: Int, scratch: URL) async throws -> BenchSlapd {
        for name in ["slapd", "slapadd", "ldapmodify", "ldapwhoami"] where tool(name) == nil {
            throw BenchSlapdFailure(message: "the directory bench needs \(name) (packages slapd and ldap-utils)")
        }
        let slapd = BenchSlapd(directory: scratch.appendingPathComponent("slapd"), port: try freeLoopbackPort())
        try FileManager.default.createDirectory(at: slapd.file("data"), withIntermediateDirectories: true)
        try slapd.configuration.write(to: slapd.file("slapd.conf"), atomically: true, encoding: .utf8)
        try Data(ldif(users: users).utf8).write(to: slapd.file("base.ldif"))
        let loaded = try run(tool("slapadd")!, ["-q", "-f", slapd.path("slapd.conf"), "-l", slapd.path("base.ldif")])
        guard loaded.status == 0 else { throw BenchSlapdFailure(message: "slapadd: \(loaded.output)") }
        try await slapd.launch()
        return slapd
    }

    func stop() {
        if let process, process.isRunning {
            // SIGKILL: slapd started from this process did not end on SIGTERM (seemingly SIGTERM
            // ignored, inherited from the server's signal handling), and waiting for it hung.
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
        process = nil
    }

    /// Renames each person to `newUID` (modrdn, old RDN deleted), in one ldapmodify.
    func rename(_ renames: [(uid: String, newUID: String)]) throws {
        let ldif = renames.map { "dn: \(Self.personDN($0.uid))\nchangetype: modrdn\nnewrdn: uid=\($0.newUID)\ndeleteoldrdn: 1\n" }
            .joined(separator: "\n")
        let done = try Self.run(Self.tool("ldapmodify")!, ["-x", "-H", url, "-D", Self.rootDN, "-w", Self.rootPassword], input: ldif)
        guard done.status == 0 else { throw BenchSlapdFailure(message: "ldapmodify: \(done.output)") }
    }

    /// slapd's CPU time so far (user and system), from /proc.
    func cpuSeconds() -> Double? {
        guard let pid, let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
              let close = stat.lastIndex(of: ")") else { return nil }
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        // After the command: state is field 3, utime 14 and stime 15 (1-based over the whole line).
        guard fields.count > 12, let user = Double(fields[11]), let system = Double(fields[12]) else { return nil }
        return (user + system) / Double(sysconf(Int32(_SC_CLK_TCK)))
    }

    private func launch() async throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: Self.tool("slapd")!)
        process.arguments = ["-d", "0", "-f", path("slapd.conf"), "-h", "ldap://127.0.0.1:\(port)/"]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        self.process = process
        for _ in 0..<200 {
            if (try Self.run(Self.tool("ldapwhoami")!, ["-x", "-H", url])).status == 0 { return }
            try await Task.sleep(for: .milliseconds(50))
        }
        stop()
        throw BenchSlapdFailure(message: "slapd did not answer on \(url) within 10 s")
    }

    private static func ldif(users: Int) -> String {
        var ldif = """
            dn: \(suffix)
            objectClass: dcObject
            objectClass: organization
            dc: example
            o: Example

            """
        for unit in ["people", "groups", "services"] {
            ldif += "\ndn: ou=\(unit),\(suffix)\nobjectClass: organizationalUnit\nou: \(unit)\n"
        }
        ldif += """

            dn: \(serviceDN)
            objectClass: organizationalRole
            objectClass: simpleSecurityObject
            cn: countersign
            userPassword: \(servicePassword)

            """
        for index in 0..<users {
            let uid = uid(index)
            ldif += "\ndn: \(personDN(uid))\nobjectClass: inetOrgPerson\nuid: \(uid)\ncn: Person \(index)\nsn: \(index)\n" +
                "displayName: Person \(index)\nmail: \(uid)@example.test\n"
        }
        for group in 0..<((users + groupSize - 1) / groupSize) {
            ldif += "\ndn: cn=group\(String(format: "%05d", group)),\(groups)\nobjectClass: groupOfNames\ncn: group\(String(format: "%05d", group))\n"
            for index in (group * groupSize)..<min(users, (group + 1) * groupSize) {
                ldif += "member: \(personDN(uid(index)))\n"
            }
        }
        return ldif
    }

    /// The schemas, mdb with refint on `member`, no size limit, and read access for the service
    /// account.
    private var configuration: String {
        """
        include /etc/ldap/schema/core.schema
        include /etc/ldap/schema/cosine.schema
        include /etc/ldap/schema/inetorgperson.schema
        modulepath /usr/lib/ldap
        moduleload back_mdb
        moduleload refint
        sizelimit unlimited
        database mdb
        suffix "\(Self.suffix)"
        rootdn "\(Self.rootDN)"
        rootpw \(Self.rootPassword)
        directory \(path("data"))
        maxsize 1073741824
        dbnosync
        index objectClass,uid,cn,member eq
        overlay refint
        refint_attributes member
        access to attrs=userPassword
            by self =xw
            by anonymous auth
            by * none
        access to *
            by dn.exact="\(Self.serviceDN)" read
            by * none

        """
    }

    private func file(_ name: String) -> URL { directory.appendingPathComponent(name) }
    private func path(_ name: String) -> String { file(name).path }

    /// Runs a tool to its end; its output and error together.
    static func run(_ tool: String, _ arguments: [String], input: String? = nil) throws -> (status: Int32, output: String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: tool)
        process.arguments = arguments
        var environment = ProcessInfo.processInfo.environment
        environment["LDAPNOINIT"] = "1"
        process.environment = environment
        let output = Pipe()
        process.standardOutput = output
        process.standardError = output
        let stdin = Pipe()
        process.standardInput = input == nil ? FileHandle.nullDevice : stdin
        try process.run()
        if let input {
            stdin.fileHandleForWriting.write(Data(input.utf8))
            try stdin.fileHandleForWriting.close()
        }
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: data, as: UTF8.self))
    }
}

struct BenchSlapdFailure: Error, CustomStringConvertible {
    let message: String
    var description: String { message }
}

/// A TCP port on 127.0.0.1 that was free a moment ago.
func freeLoopbackPort() throws -> Int {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    guard fd >= 0 else { throw BenchSlapdFailure(message: "socket: \(errno)") }
    defer { close(fd) }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_port = 0
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    let bound = withUnsafeMutablePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0 }
    }
    guard bound else { throw BenchSlapdFailure(message: "bind: \(errno)") }
    return Int(UInt16(bigEndian: address.sin_port))
}
