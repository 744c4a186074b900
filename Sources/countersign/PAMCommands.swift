import ArgumentParser
import CountersignCommandLine
import CountersignCore
import Crypto
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// `countersign pam`: the host side of the PAM module (docs/pam.md). `enroll-host` registers this
/// host as a client of Countersign and writes the module's configuration; `authenticate` is what
/// the module runs for each login.
struct PAMCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "pam", abstract: "Protect SSH, sudo, su and console logins with the PAM module.",
        subcommands: [EnrollHost.self, Authenticate.self])

    // MARK: - enroll-host

    struct EnrollHost: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "enroll-host",
            abstract: "Register this host as a client that asks for approvals, and write the PAM module's configuration.",
            discussion: """
            Makes a P-256 key for the host, registers a client that authenticates with it \
            (private_key_jwt) and may send ssh_login and sudo details (registering those types in \
            the tenant when it lacks them), and writes the key and the configuration, root's alone. \
            Needs an admin key with clients:manage, and authentication-policy:manage when the types \
            are missing.
            """)

        @OptionGroup var admin: AdminOptions
        @Option(help: "The client's name, shown on the phone. Default: this host's name.") var name: String?
        @Option(help: "Where the configuration is written.") var config = PAMConfiguration.defaultPath
        @Option(name: .customLong("key-file"), help: "Where the host's private key is written.")
        var keyFile = "/etc/countersign/pam.key"
        @Option(name: .customLong("fail-mode"), help: "secure (refuse logins when Countersign cannot be reached) or safe.")
        var failMode = "secure"
        @Option(help: "Seconds a login waits for the phone, 10 to 600.") var wait = 60
        @Flag(help: "Replace an existing configuration and key.") var force = false

        func validate() throws {
            guard PAMConfiguration.FailMode(rawValue: failMode) != nil else {
                throw ValidationError("--fail-mode must be secure or safe")
            }
            guard PAMConfiguration.waitRange.contains(wait) else { throw ValidationError("--wait must be 10 to 600") }
        }

        func run() async throws {
            let manager = FileManager.default
            for path in [config, keyFile] where manager.fileExists(atPath: path) && !force {
                throw ValidationError("\(path) exists; pass --force to replace it")
            }
            let client = try admin.client()
            let issuer = try await Self.issuer(of: client, path: admin.tenantPath(""))
            try await Self.registerTypes(client, path: admin.tenantPath("/authorization-detail-types"))
            let key = P256.Signing.PrivateKey()
            let keyID = Data(SHA256.hash(data: key.publicKey.x963Representation).prefix(12)).base64URLEncodedString
            let hostName = name ?? Self.hostName()
            let x963 = key.publicKey.x963Representation
            let jwk: [String: Any] = [
                "kty": "EC", "crv": "P-256", "use": "sig", "alg": "ES256", "kid": keyID,
                "x": Data(x963[1...32]).base64URLEncodedString, "y": Data(x963[33...64]).base64URLEncodedString,
            ]
            let created = try await client.send("POST", admin.tenantPath("/clients"), body: [
                "name": hostName, "scopes": ["openid"], "token_delivery_mode": "poll",
                "token_endpoint_auth_method": "private_key_jwt", "jwks": ["keys": [jwk]],
                "authorization_details_types": PAMDetails.types,
            ]) as? [String: Any]
            guard let clientID = (created?["client"] as? [String: Any])?["client_id"] as? String else {
                throw TerminalFailure("the server's answer names no client_id")
            }
            try Self.writeRootOnly(key.pemRepresentation + "\n", to: keyFile)
            var configuration = PAMConfiguration(server: issuer, clientID: clientID, keyFile: keyFile, keyID: keyID)
            configuration.failMode = PAMConfiguration.FailMode(rawValue: failMode) ?? .secure
            configuration.wait = wait
            try Self.writeRootOnly(configuration.text, to: config)
            print("""
            Registered \(hostName) as client \(clientID) of \(issuer).
            Wrote \(config) and \(keyFile). Add to the PAM stack, for example /etc/pam.d/sshd:
              auth required pam_countersign.so config=\(config)
            """)
        }

        /// The tenant's issuer, as the admin API names it.
        static func issuer(of client: AdminAPIClient, path: String) async throws -> String {
            let tenant = try await client.send("GET", path) as? [String: Any]
            guard let issuer = tenant?["issuer"] as? String else { throw TerminalFailure("the tenant names no issuer") }
            return issuer
        }

        /// Adds `ssh_login` and `sudo` to the tenant's authorization detail types when it lacks them.
        static func registerTypes(_ client: AdminAPIClient, path: String) async throws {
            let current = try await client.send("GET", path) as? [String: Any] ?? [:]
            var types = current["types"] as? [String: Any] ?? [:]
            guard PAMDetails.types.contains(where: { types[$0] == nil }) else { return }
            for (name, schema) in PAMDetails.schemas where types[name] == nil { types[name] = schema }
            _ = try await client.send("PUT", path, body: ["types": types])
        }

        static func hostName() -> String {
            var buffer = [CChar](repeating: 0, count: 256)
            guard gethostname(&buffer, buffer.count) == 0 else { return "host" }
            return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        }

        /// Writes `text` to `path` as a file only root can read, replacing it whole.
        static func writeRootOnly(_ text: String, to path: String) throws {
            let directory = (path as NSString).deletingLastPathComponent
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true,
                                                    attributes: [.posixPermissions: 0o755])
            let temporary = path + ".new"
            unlink(temporary)
            let descriptor = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
            guard descriptor >= 0 else { throw TerminalFailure("\(temporary) cannot be created: \(String(cString: strerror(errno)))") }
            let bytes = Array(text.utf8)
            let written = bytes.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
            close(descriptor)
            guard written == bytes.count, rename(temporary, path) == 0 else {
                unlink(temporary)
                throw TerminalFailure("\(path) cannot be written")
            }
        }
    }

    // MARK: - authenticate

    /// What the PAM module runs for a login: it asks Countersign, says what to do through the
    /// module (one line per message, `countersign_pam.h`), and ends with the verdict. Not for
    /// people: the module gives it every argument.
    struct Authenticate: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "authenticate", abstract: "Run by pam_countersign.so for one login.", shouldDisplay: false)

        @Option var config = PAMConfiguration.defaultPath
        @Option var user: String
        @Option var service = ""
        @Option(name: .customLong("remote-host")) var remoteHost = ""
        @Option var tty = ""
        @Option(name: .customLong("remote-user")) var remoteUser = ""
        @Option var command = ""
        @Option(help: "login, or sudo (a command is approved).") var kind = "login"
        @Option(help: "The module's own limit, in seconds.") var timeout = 120

        func run() async throws {
            let lines = PAMLines()
            let configuration: PAMConfiguration
            do {
                configuration = try PAMConfiguration.load(config)
            } catch {
                lines.log("configuration refused: \(error)")
                lines.error("Countersign is not configured correctly on this host; the login is refused.")
                lines.result(.deny)
                return
            }
            let username = configuration.username(user)
            if let reason = skipReason(configuration) {
                lines.log("\(user) let in without approval: \(reason)")
                lines.result(.success)
                return
            }
            // Leave the module time to read the verdict before its own limit.
            let wait = min(configuration.wait, max(5, timeout - 5))
            let deadline = ContinuousClock.now + .seconds(wait)
            let key: Data
            do {
                let pem = try String(contentsOfFile: configuration.keyFile, encoding: .utf8)
                key = try P256.Signing.PrivateKey(pemRepresentation: pem).rawRepresentation
            } catch {
                lines.log("the host key \(configuration.keyFile) cannot be read: \(error)")
                lines.error("Countersign is not configured correctly on this host; the login is refused.")
                lines.result(.deny)
                return
            }
            let transport = NIOTransport(connections: 1, retryingRefusedConnections: false)
            let client = RelyingPartyClient(
                base: configuration.server, clientID: configuration.clientID,
                credentials: .privateKey(key, keyID: configuration.keyID), transport: transport)
            let outcome = await PAMLogin(
                client: client, lines: lines, configuration: configuration, username: username, details: details(),
                deadline: deadline
            ).run()
            lines.result(outcome)
            try? await transport.shutdown()
        }

        private func skipReason(_ configuration: PAMConfiguration) -> String? {
            if configuration.skipUsers.contains(user) { return "listed in skip_users" }
            let groups = Self.groups(of: user)
            if let group = groups.first(where: configuration.skipGroups.contains) { return "member of \(group), listed in skip_groups" }
            if !configuration.onlyGroups.isEmpty, configuration.onlyGroups.isDisjoint(with: groups) {
                return "in none of only_groups"
            }
            return nil
        }

        /// The authorization details the phone shows and signs, as JSON text.
        private func details() -> String {
            let sudo = kind == "sudo"
            var detail: [String: Any] = [
                "type": sudo ? "sudo" : "ssh_login", "host": EnrollHost.hostName(), "user": user,
            ]
            if !service.isEmpty { detail["service"] = service }
            if !remoteHost.isEmpty { detail["remote_address"] = remoteHost }
            if !remoteUser.isEmpty { detail["remote_user"] = remoteUser }
            if !tty.isEmpty { detail["tty"] = tty }
            if sudo { detail["command"] = command.isEmpty ? "(the command line could not be read)" : command }
            let json = (try? JSONSerialization.data(withJSONObject: [detail], options: [.sortedKeys])) ?? Data("[]".utf8)
            return String(decoding: json, as: UTF8.self)
        }

        /// The user's groups by name, from the system's group database.
        static func groups(of user: String) -> Set<String> {
            guard let entry = getpwnam(user) else { return [] }
            var count: Int32 = 64
            var ids = [gid_t](repeating: 0, count: Int(count))
            if getgrouplist(user, entry.pointee.pw_gid, &ids, &count) < 0 {
                ids = [gid_t](repeating: 0, count: Int(count))
                guard getgrouplist(user, entry.pointee.pw_gid, &ids, &count) >= 0 else { return [] }
            }
            return Set(ids.prefix(Int(count)).compactMap { id in
                getgrgid(id).map { String(cString: $0.pointee.gr_name) }
            })
        }
    }
}

/// The authorization detail types the module sends, as `enroll-host` registers them.
enum PAMDetails {
    static let types = ["ssh_login", "sudo"]

    private static func field(_ length: Int, required: Bool = false) -> [String: Any] {
        ["kind": "string", "max_length": length, "required": required]
    }

    private static var common: [String: Any] {
        ["host": field(253, required: true), "user": field(256, required: true), "service": field(64),
         "remote_address": field(255), "remote_user": field(256), "tty": field(64)]
    }

    static var schemas: [String: Any] {
        var sudo = common
        sudo["command"] = field(2048, required: true)
        return ["ssh_login": ["fields": common], "sudo": ["fields": sudo]]
    }
}

/// One login's request and wait, as the PAM helper runs it.
struct PAMLogin: Sendable {
    let client: RelyingPartyClient
    let lines: PAMLines
    let configuration: PAMConfiguration
    let username: String
    /// The authorization details, as JSON text.
    let details: String
    let deadline: ContinuousClock.Instant

    /// What `bc-authorize` answered.
    struct Started: Sendable {
        let authReqID: String?
        let interval: Int?
        let matchNumber: Int?
    }

    func run() async -> PAMLines.Verdict {
        var form = ["scope": "openid", "login_hint": username, "authorization_details": details]
        if let acr = configuration.acrValues { form["acr_values"] = acr }
        let request = form
        let started: Started
        do {
            started = try await within {
                let answer = try await client.post("/bc-authorize", request)
                return Started(authReqID: answer["auth_req_id"] as? String, interval: answer["interval"] as? Int,
                               matchNumber: answer["match_number"] as? Int)
            }
        } catch let refusal as RelyingPartyClient.Refusal where !refusal.isServerTrouble {
            return refused(refusal)
        } catch {
            return unreachable(error)
        }
        guard let authReqID = started.authReqID else { return unreachable(TerminalFailure("no auth_req_id")) }
        var interval = max(1, started.interval ?? 5)
        let number = started.matchNumber
        lines.prompt(number.map { "Approve on your phone and choose \($0), then press Enter" }
                     ?? "Approve the request on your phone, then press Enter")
        guard await enterPressed() else {
            lines.error("No answer in time; the login is refused.")
            return .deny
        }
        while ContinuousClock.now < deadline {
            do {
                try await within {
                    _ = try await client.post("/token", ["grant_type": RelyingPartyClient.cibaGrantType, "auth_req_id": authReqID])
                }
                return .success
            } catch let refusal as RelyingPartyClient.Refusal where !refusal.isServerTrouble {
                switch refusal.code {
                case "authorization_pending": break
                case "slow_down": interval += 5
                case "access_denied":
                    lines.error("Denied on your phone.")
                    return .deny
                case "expired_token":
                    lines.error("The request on your phone expired.")
                    return .deny
                default:
                    return refused(refusal)
                }
            } catch {
                // The wait ran out during a poll: the phone did not answer in time, which is no
                // outage of Countersign's (and never let in by fail_mode safe).
                if ContinuousClock.now >= deadline { break }
                return unreachable(error)
            }
            try? await Task.sleep(for: .seconds(interval))
        }
        lines.error("No answer from your phone in time; the login is refused.")
        return .deny
    }

    /// Countersign answered, and refused: the user is unknown, has no device, or this host's
    /// credentials are wrong. Never the fail mode's business.
    private func refused(_ refusal: RelyingPartyClient.Refusal) -> PAMLines.Verdict {
        switch refusal.code {
        case "unknown_user_id":
            lines.error("Countersign does not know \(username); the login is refused.")
            return .userUnknown
        case "invalid_client", "unauthorized_client":
            lines.log("Countersign refused this host's credentials: \(refusal.description)")
            lines.error("Countersign refused this host; the login is refused.")
            return .deny
        default:
            lines.error(refusal.text.map { "Countersign refused the login: \($0)." } ?? "Countersign refused the login.")
            return .deny
        }
    }

    private func unreachable(_ error: any Error) -> PAMLines.Verdict {
        lines.log("Countersign cannot be reached at \(configuration.server): \(error)")
        switch configuration.failMode {
        case .secure:
            lines.error("Countersign cannot be reached; the login is refused.")
            return .unavailable
        case .safe:
            lines.log("fail_mode safe: \(username) let in without approval")
            lines.info("Countersign cannot be reached; the login is allowed without approval.")
            return .success
        }
    }

    /// Runs `body` with what is left of the wait as its limit.
    private func within<T: Sendable>(_ body: @escaping @Sendable () async throws -> T) async throws -> T {
        let deadline = deadline
        return try await withThrowingTaskGroup(of: T.self) { group in
            group.addTask { try await body() }
            group.addTask {
                try await Task.sleep(until: deadline)
                throw TerminalFailure("no answer within the wait")
            }
            defer { group.cancelAll() }
            return try await group.next()!
        }
    }

    /// Whether the prompt was answered (Enter) before the deadline.
    private func enterPressed() async -> Bool {
        let deadline = deadline
        return await withTaskGroup(of: Bool.self) { group in
            group.addTask {
                await withCheckedContinuation { continuation in
                    Thread.detachNewThread { continuation.resume(returning: readLine(strippingNewline: true) != nil) }
                }
            }
            group.addTask {
                try? await Task.sleep(until: deadline)
                return false
            }
            defer { group.cancelAll() }
            return await group.next() ?? false
        }
    }
}

/// The helper's side of the lines the module reads (`countersign_pam.h`): one message per line,
/// its text cut to 1,024 bytes and stripped of control characters, written at once.
final class PAMLines: Sendable {
    enum Verdict: String {
        case success = "SUCCESS"
        case deny = "DENY"
        case unavailable = "UNAVAILABLE"
        case userUnknown = "USER_UNKNOWN"
    }

    func prompt(_ text: String) { send("PROMPT", text + ": ") }
    func info(_ text: String) { send("INFO", text) }
    func error(_ text: String) { send("ERROR", text) }
    func log(_ text: String) { send("LOG", text) }
    func result(_ verdict: Verdict) { write("RESULT \(verdict.rawValue)\n") }

    private func send(_ keyword: String, _ text: String) {
        var clean = String(String.UnicodeScalarView(text.unicodeScalars.map {
            $0.properties.generalCategory == .control ? " " : $0
        }))
        while clean.utf8.count > 1024 { clean.removeLast() }
        if clean.trimmingCharacters(in: .whitespaces).isEmpty { return }
        write("\(keyword) \(clean)\n")
    }

    private func write(_ line: String) {
        let bytes = Array(line.utf8)
        var offset = 0
        while offset < bytes.count {
            let written = bytes[offset...].withUnsafeBytes { Glibc.write(1, $0.baseAddress, $0.count) }
            if written < 0, errno == EINTR { continue }
            guard written > 0 else { return }
            offset += written
        }
    }
}
