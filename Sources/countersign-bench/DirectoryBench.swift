import ArgumentParser
import CountersignCommandLine
import CountersignServer
import Foundation

/// `countersign-bench directory`: the LDAP directory sync against a real slapd. slapd (plain
/// LDAP on 127.0.0.1, security `plain`) holds `--users` people in groups of 50, loaded with
/// slapadd before it starts; the server runs in this process on a scratch data directory
/// (SQLite unless --database-url is given), and the directory is configured over the admin API.
/// Measured, each as the wall time of `POST …/directory/sync`:
///
/// 1. a dry run: the whole directory read and compared with nothing, no writes;
/// 2. the first sync: every user and group created, every membership added;
/// 3. a second sync with nothing changed in the directory;
/// 4. a sync after 1 % of the people were renamed (modrdn; refint moves their group memberships).
struct DirectoryBench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "directory",
        abstract: "Benchmark the LDAP directory sync against slapd: the first sync, one with nothing changed, and one after renames.")

    @Option(help: "People in the directory, in groups of 50.") var users = 10_000
    @Option(name: .customLong("rename-percent"), help: "Share of the people renamed before the last sync.") var renamePercent = 1.0
    @Option(name: .customLong("database-url"), help: "Run on this PostgreSQL database instead of SQLite.") var databaseURL: String?

    func validate() throws {
        guard users >= 1, renamePercent >= 0, renamePercent <= 100 else {
            throw ValidationError("--users must be at least 1 and --rename-percent between 0 and 100")
        }
    }

    func run() async throws {
        Bench.quietLogging()
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("countersign-bench-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: scratch) }
        try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)

        let loadStart = ContinuousClock.now
        let slapd = try await BenchSlapd.start(users: users, scratch: scratch)
        defer { slapd.stop() }
        let groupCount = (users + BenchSlapd.groupSize - 1) / BenchSlapd.groupSize
        print("setup: slapd on \(slapd.url) with \(users) people in \(groupCount) groups (slapadd and start: " +
              "\(format((ContinuousClock.now - loadStart).milliseconds / 1000)) s)")

        let target = try await BenchTarget.start(server: nil, adminKey: nil, databaseURL: databaseURL, scratch: scratch)
        print("Countersign directory bench: \(target.description), \(ProcessInfo.processInfo.activeProcessorCount) cores, " +
              "slapd on the same machine")
        let admin = AdminAPIClient(base: target.base, key: target.adminKey)
        let base = "/admin/v1/tenants/default/directory"
        try await admin.send("PUT", base, body: [
            "kind": "openldap", "servers": [slapd.url], "security": "plain",
            "bind_dn": BenchSlapd.serviceDN, "bind_password": BenchSlapd.servicePassword,
            "user_base_dn": BenchSlapd.people, "groups": ["base_dn": BenchSlapd.groups],
            "sync_interval_minutes": 0,
        ])

        try await measure("dry run (read and compare, nothing written)", admin, slapd, body: ["dry_run": true])
        try await measure("first sync (every user and group created)", admin, slapd)
        try await measure("second sync, nothing changed", admin, slapd)

        let renamed = Int((Double(users) * renamePercent / 100).rounded())
        if renamed > 0 {
            let step = max(1, users / renamed)
            let renames = (0..<renamed).map { index in
                (uid: BenchSlapd.uid(index * step), newUID: BenchSlapd.uid(index * step) + "-renamed")
            }
            let renameStart = ContinuousClock.now
            try slapd.rename(renames)
            // refint rewrites the groups' member values after the modrdn answers, in a thread
            // of its own: wait until the last renamed person's group names the new DN.
            try await waitForReferences(slapd, renames.last!.newUID)
            print("setup: \(renamed) people renamed (ldapmodify modrdn, refint's member updates) in " +
                  "\(format((ContinuousClock.now - renameStart).milliseconds / 1000)) s")
            try await measure("sync after \(renamed) renames (\(format(renamePercent)) %)", admin, slapd)
        }
        try await target.stop()
    }

    /// Runs one sync and prints what it did and what it cost.
    private func measure(_ name: String, _ admin: AdminAPIClient, _ slapd: BenchSlapd, body: [String: Any]? = nil) async throws {
        let residentBefore = ProcessMemory.resetPeak()
        let cpuBefore = ServerMetrics.cpuSeconds()
        let slapdBefore = slapd.cpuSeconds()
        let machineBefore = MachineCPU.busySeconds()
        let start = ContinuousClock.now
        let answer = try await admin.send("POST", "/admin/v1/tenants/default/directory/sync", body: body) as? [String: Any] ?? [:]
        let seconds = (ContinuousClock.now - start).milliseconds / 1000
        let cpu = ServerMetrics.cpuSeconds() - cpuBefore
        let slapdCPU = slapd.cpuSeconds().flatMap { end in slapdBefore.map { end - $0 } }
        let machine = MachineCPU.busySeconds().flatMap { end in machineBefore.map { end - $0 } }
        let peak = ProcessMemory.peakBytes()

        func count(_ key: String) -> Int { (answer[key] as? [Any])?.count ?? (answer[key] as? Int) ?? 0 }
        let found = answer["users_found"] as? Int ?? 0
        print("\(name): \(format(seconds)) s, \(Int(Double(found) / seconds)) users/s")
        print("  found \(found) users, \(answer["groups_found"] as? Int ?? 0) groups; users created \(count("users_created")), " +
              "updated \(count("users_updated")), disabled \(count("users_disabled")); groups created \(count("groups_created")), " +
              "updated \(count("groups_updated")); memberships +\(count("memberships_added")) -\(count("memberships_removed")); " +
              "skipped \(count("skipped"))")
        var line = "  cpu: this process (server) \(format(cpu)) s, slapd \(slapdCPU.map(format) ?? "-") s"
        if let machine { line += "; machine \(format(machine / seconds)) of \(ProcessInfo.processInfo.activeProcessorCount) cores busy" }
        print(line)
        if let peak, let residentBefore {
            print("  memory: this process's peak resident \(megabytes(peak)) MiB during the sync (\(megabytes(residentBefore)) MiB before it)")
        }
    }

    private func waitForReferences(_ slapd: BenchSlapd, _ uid: String) async throws {
        guard let search = BenchSlapd.tool("ldapsearch") else {
            try await Task.sleep(for: .seconds(2))
            return
        }
        for _ in 0..<200 {
            let found = try BenchSlapd.run(search, [
                "-x", "-LLL", "-H", slapd.url, "-D", BenchSlapd.rootDN, "-w", BenchSlapd.rootPassword,
                "-b", BenchSlapd.groups, "(member=\(BenchSlapd.personDN(uid)))", "dn",
            ])
            if found.status == 0, found.output.contains("dn:") { return }
            try await Task.sleep(for: .milliseconds(50))
        }
        throw BenchSlapdFailure(message: "refint did not update the groups of \(uid) within 10 s")
    }

    private func megabytes(_ bytes: Int) -> String { format(Double(bytes) / 1_048_576) }
}

/// This process's resident memory from /proc/self/status, and its peak (VmHWM), which
/// /proc/self/clear_refs resets to the present size.
enum ProcessMemory {
    /// Resets the peak to the present resident size, which it returns.
    static func resetPeak() -> Int? {
        try? "5".write(toFile: "/proc/self/clear_refs", atomically: false, encoding: .utf8)
        return field("VmRSS")
    }

    static func peakBytes() -> Int? { field("VmHWM") }

    private static func field(_ name: String) -> Int? {
        guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return nil }
        for line in status.split(separator: "\n") where line.hasPrefix(name + ":") {
            return line.split(whereSeparator: { $0 == " " || $0 == "\t" }).dropFirst().first.flatMap { Int($0) }.map { $0 * 1024 }
        }
        return nil
    }
}
