import Foundation

/// The PAM module's configuration (`/etc/countersign/pam.conf`, or the module's `config=`
/// argument): `name = value` lines, `#` comments. Read by `countersign pam authenticate`, written
/// by `countersign pam enroll-host`. It names the host's key file, so both must belong to root
/// and be writable by no one else, and the key readable by no one else: a file another user could
/// change would let them choose the server that approves root's logins.
struct PAMConfiguration: Equatable {
    enum FailMode: String { case secure, safe }

    /// The tenant's issuer: where `bc-authorize` and `token` are.
    var server: String
    var clientID: String
    var keyFile: String
    var keyID: String
    /// Seconds a login waits for the phone.
    var wait = 60
    var failMode = FailMode.secure
    /// Let in without a request to the phone.
    var skipUsers: Set<String> = []
    var skipGroups: Set<String> = []
    /// When not empty, only members of these groups are asked; everyone else is let in.
    var onlyGroups: Set<String> = []
    var stripRealm = false
    var stripDomain = false
    /// `acr_values` of every request, when set.
    var acrValues: String?

    static let defaultPath = "/etc/countersign/pam.conf"
    static let waitRange = 10...600

    struct Invalid: Error, CustomStringConvertible {
        let description: String
    }

    /// Reads and checks the file at `path`, and that it and the key file are root's alone.
    static func load(_ path: String, checkOwnership: Bool = true) throws -> PAMConfiguration {
        if checkOwnership { try checkFile(path, secret: false) }
        guard let text = try? String(contentsOfFile: path, encoding: .utf8) else {
            throw Invalid(description: "\(path) cannot be read")
        }
        let configuration = try parse(text, path: path)
        if checkOwnership { try checkFile(configuration.keyFile, secret: true) }
        return configuration
    }

    static func parse(_ text: String, path: String) throws -> PAMConfiguration {
        var values: [String: String] = [:]
        for (number, raw) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let line = raw.trimmingCharacters(in: .whitespaces)
            if line.isEmpty || line.hasPrefix("#") { continue }
            guard let equals = line.firstIndex(of: "=") else {
                throw Invalid(description: "\(path) line \(number + 1) is not `name = value`")
            }
            let name = line[..<equals].trimmingCharacters(in: .whitespaces)
            let value = line[line.index(after: equals)...].trimmingCharacters(in: .whitespaces)
            guard known.contains(name) else { throw Invalid(description: "\(path) line \(number + 1): unknown setting \(name)") }
            guard values[name] == nil else { throw Invalid(description: "\(path) line \(number + 1): \(name) is set twice") }
            values[name] = value
        }
        func required(_ name: String) throws -> String {
            guard let value = values[name], !value.isEmpty else { throw Invalid(description: "\(path): \(name) is required") }
            return value
        }
        func flag(_ name: String) throws -> Bool {
            switch values[name]?.lowercased() {
            case nil, "no", "false": return false
            case "yes", "true": return true
            case let other?: throw Invalid(description: "\(path): \(name) must be yes or no, not \(other)")
            }
        }
        func names(_ name: String) -> Set<String> {
            Set((values[name] ?? "").split(whereSeparator: { $0 == " " || $0 == "," }).map(String.init))
        }
        var server = try required("server")
        while server.hasSuffix("/") { server.removeLast() }
        guard let url = URL(string: server), let scheme = url.scheme?.lowercased(), url.host != nil,
              scheme == "https" || (scheme == "http" && ["127.0.0.1", "localhost", "::1"].contains(url.host ?? "")) else {
            throw Invalid(description: "\(path): server must be an https URL (plain http only to this machine)")
        }
        var configuration = PAMConfiguration(
            server: server, clientID: try required("client_id"), keyFile: try required("key_file"),
            keyID: try required("key_id"))
        if let wait = values["wait"] {
            guard let seconds = Int(wait), waitRange.contains(seconds) else {
                throw Invalid(description: "\(path): wait must be \(waitRange.lowerBound) to \(waitRange.upperBound) seconds")
            }
            configuration.wait = seconds
        }
        if let mode = values["fail_mode"] {
            guard let parsed = FailMode(rawValue: mode) else { throw Invalid(description: "\(path): fail_mode must be secure or safe") }
            configuration.failMode = parsed
        }
        configuration.skipUsers = names("skip_users")
        configuration.skipGroups = names("skip_groups")
        configuration.onlyGroups = names("only_groups")
        configuration.stripRealm = try flag("strip_realm")
        configuration.stripDomain = try flag("strip_domain")
        configuration.acrValues = values["acr_values"].flatMap { $0.isEmpty ? nil : $0 }
        return configuration
    }

    static let known: Set<String> = [
        "server", "client_id", "key_file", "key_id", "wait", "fail_mode", "skip_users", "skip_groups", "only_groups",
        "strip_realm", "strip_domain", "acr_values",
    ]

    /// The file as `enroll-host` writes it.
    var text: String {
        """
        # Countersign's PAM module (docs/pam.md). Root's alone: chmod 600.
        server = \(server)
        client_id = \(clientID)
        key_file = \(keyFile)
        key_id = \(keyID)
        # Seconds a login waits for the phone, 10 to 600.
        wait = \(wait)
        # When Countersign cannot be reached: secure refuses the login, safe lets it in (logged).
        fail_mode = \(failMode.rawValue)
        # Users and groups let in without asking; only_groups, when set, asks only their members.
        skip_users = \(skipUsers.sorted().joined(separator: " "))
        skip_groups = \(skipGroups.sorted().joined(separator: " "))
        only_groups = \(onlyGroups.sorted().joined(separator: " "))
        # alice@example.com and EXAMPLE\\alice asked for as alice.
        strip_realm = \(stripRealm ? "yes" : "no")
        strip_domain = \(stripDomain ? "yes" : "no")

        """
    }

    /// The name Countersign is asked about for the PAM user.
    func username(_ user: String) -> String {
        var name = user
        if stripDomain, let slash = name.firstIndex(of: "\\") { name = String(name[name.index(after: slash)...]) }
        if stripRealm, let at = name.lastIndex(of: "@") { name = String(name[..<at]) }
        return name
    }

    /// A regular file owned by root that no one else may write (nor read, when `secret`).
    static func checkFile(_ path: String, secret: Bool) throws {
        var info = stat()
        guard lstat(path, &info) == 0 else { throw Invalid(description: "\(path) does not exist") }
        guard info.st_mode & S_IFMT == S_IFREG else { throw Invalid(description: "\(path) is not a regular file") }
        guard info.st_uid == 0 else { throw Invalid(description: "\(path) must belong to root") }
        let forbidden: mode_t = secret ? 0o077 : 0o022
        guard info.st_mode & forbidden == 0 else {
            throw Invalid(description: "\(path) must be \(secret ? "readable" : "writable") by root alone (chmod \(secret ? "600" : "644"))")
        }
    }
}
