import Foundation
import Testing

/// The terminal authenticator's commands beyond the walk-through, run with the real
/// `countersign` executable against `countersign serve`: two enrollments of one user, a wrong
/// PIN, push tokens, and the APNs certificate's password.
@Suite("The countersign device commands")
struct CommandLineDeviceTests {
    static let enabled = CommandLineTests.executable != nil || ProcessInfo.processInfo.environment["CI"] == "true"

    /// A server with a user alice, and the environment the commands need.
    struct Scene {
        let scratch: URL
        let server: Process
        var environment: [String: String]
        let userID: String

        /// `serveArguments` are added to `countersign serve`'s.
        static func make(serveArguments: [String] = []) async throws -> Scene {
            let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("countersign-device-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
            let (server, serverURL, stdout, _) = try await CommandLineTests.serve(
                dataDirectory: scratch.appendingPathComponent("data").path, in: scratch, name: "server",
                arguments: serveArguments)
            let environment = ["COUNTERSIGN_SERVER": serverURL, "COUNTERSIGN_ADMIN_KEY": try CommandLineTests.adminKey(printedTo: stdout),
                               "COUNTERSIGN_DEVICE_STORE": scratch.appendingPathComponent("device").path]
            let user = try await CommandLineTests.run(["admin", "user", "create", "alice"], environment: environment)
            let userID = try #require((try JSONSerialization.jsonObject(with: Data(user.output.utf8)) as? [String: Any])?["id"] as? String)
            return Scene(scratch: scratch, server: server, environment: environment, userID: userID)
        }

        func run(_ arguments: [String], input: String? = nil) async throws -> CommandLineTests.Run {
            try await CommandLineTests.run(arguments, environment: environment, input: input)
        }

        /// A fresh enrollment URI for alice: each holds a one-time ticket.
        func enrollmentURI() async throws -> String {
            try await run(["admin", "enroll", userID, "--uri-only"]).output.trimmingCharacters(in: .whitespacesAndNewlines)
        }

        /// `device enroll`; returns the enrollment id it prints.
        func enroll(_ arguments: [String] = [], input: String? = nil) async throws -> String {
            let enrolled = try await run(["device", "enroll", try enrollmentURI()] + arguments, input: input)
            #expect(enrolled.status == 0, "\(enrolled.output)")
            let line = try #require(enrolled.output.split(separator: "\n").first { $0.hasPrefix("enrollment ") })
            return try #require(line.split(separator: " ").dropFirst().first.map(String.init))
        }

        /// Alice's devices as `admin device list` shows them.
        func devices() async throws -> [[String: Any]] {
            let listed = try await run(["admin", "device", "list", userID])
            let object = try JSONSerialization.jsonObject(with: Data(listed.output.utf8)) as? [String: Any]
            return try #require(object?["items"] as? [[String: Any]], "\(listed.output)")
        }

        func end() {
            if server.isRunning {
                server.terminate()
                server.waitUntilExit()
            }
            try? FileManager.default.removeItem(at: scratch)
        }
    }

    /// Asks alice for a PIN through a poll client; returns the request's id as the device sees it.
    static func askForPIN(_ scene: inout Scene) async throws -> String {
        if scene.environment["COUNTERSIGN_CLIENT_SECRET"] == nil {
            let created = try await scene.run(["admin", "client", "create", "--name", "Demo portal"])
            let client = try #require(try JSONSerialization.jsonObject(with: Data(created.output.utf8)) as? [String: Any])
            scene.environment["COUNTERSIGN_CLIENT_ID"] = try #require((client["client"] as? [String: Any])?["client_id"] as? String)
            scene.environment["COUNTERSIGN_CLIENT_SECRET"] = try #require(client["client_secret"] as? String)
        }
        let before = try await scene.run(["device", "pending"]).output
        let asked = try await scene.run(["ciba", "auth", "--client-id", try #require(scene.environment["COUNTERSIGN_CLIENT_ID"]),
                                   "--user", "alice", "--acr-values", "urn:countersign:acr:pin"])
        #expect(asked.status == 0, "\(asked.output)")
        let pending = try await scene.run(["device", "pending"]).output
        let ids = pending.split(whereSeparator: \.isWhitespace).filter { $0.hasPrefix("txn_") && !before.contains($0) }
        return try #require(ids.first.map(String.init), "\(pending)")
    }

    @Test("two enrollments of one user: approve answers with the one holding the PIN, or the one named",
          .enabled(if: enabled))
    func approveWithTheEnrollmentThatCanGiveTheFactor() async throws {
        var scene = try await Scene.make()
        defer { scene.end() }
        let withoutPIN = try await scene.enroll(["--name", "laptop"])
        let withPIN = try await scene.enroll(["--name", "laptop with PIN", "--pin-stdin"], input: "2468\n")

        let first = try await Self.askForPIN(&scene)
        let approved = try await scene.run(["device", "approve", first, "--pin-stdin"], input: "2468\n")
        #expect(approved.status == 0, "\(approved.output)")
        #expect(approved.output.contains("\(first): approved"), "\(approved.output)")
        #expect(approved.output.contains("enrollment  \(withPIN)"), "\(approved.output)")

        let second = try await Self.askForPIN(&scene)
        let named = try await scene.run(["device", "approve", second, "--enrollment", withoutPIN, "--pin-stdin"], input: "2468\n")
        #expect(named.status != 0)
        #expect(named.output.contains("asks for PIN, which enrollment \(withoutPIN) cannot give; nothing was answered"),
                "\(named.output)")
        let unknown = try await scene.run(["device", "deny", second, "--enrollment", "no-such-enrollment"])
        #expect(unknown.status != 0)
        #expect(unknown.output.contains("this device has no enrollment no-such-enrollment"), "\(unknown.output)")
        let denied = try await scene.run(["device", "deny", second, "--enrollment", withoutPIN])
        #expect(denied.status == 0, "\(denied.output)")
        #expect(denied.output.contains("\(second): denied (declined)"), "\(denied.output)")
    }

    @Test("a wrong PIN from --pin-stdin says so, with the attempts left", .enabled(if: enabled))
    func wrongScriptedPINIsReportedAsWrong() async throws {
        var scene = try await Scene.make()
        defer { scene.end() }
        _ = try await scene.enroll(["--pin-stdin"], input: "2468\n")
        let request = try await Self.askForPIN(&scene)

        let wrong = try await scene.run(["device", "approve", request, "--pin-stdin"], input: "1357\n")
        #expect(wrong.status != 0)
        #expect(wrong.output.contains("Error: wrong PIN; 2 attempts left before the enrollment is removed"), "\(wrong.output)")
        #expect(wrong.output.contains("was denied as cancelled"), "\(wrong.output)")
    }

    @Test("a PIN added later, alternatives set by the admin commands, and the one picked with --alternative",
          .enabled(if: enabled))
    func alternativesFromTheCommandLine() async throws {
        var scene = try await Scene.make()
        defer { scene.end() }
        let enrollment = try await scene.enroll()
        let first = try await scene.run(["admin", "policy", "set", "--alternatives", "pin=pin,number-match"])
        #expect(first.status == 0, "\(first.output)")
        let early = try await Self.askForPIN(&scene)
        let lacking = try await scene.run(["device", "approve", early])
        #expect(lacking.status != 0, "\(lacking.output)")
        #expect(lacking.output.contains("lacks pin (add with `countersign device pin set \(enrollment)`)"), "\(lacking.output)")

        let added = try await scene.run(["device", "pin", "set", enrollment, "--pin-stdin"], input: "2468\n")
        #expect(added.status == 0 && added.output.contains("PIN added to \(enrollment) (factors: pin)"), "\(added.output)")
        let again = try await scene.run(["device", "pin", "set", enrollment, "--pin-stdin"], input: "1357\n")
        #expect(again.status != 0 && again.output.contains("has a PIN already"), "\(again.output)")

        let policy = try await scene.run(["admin", "policy", "set", "--alternatives", "pin=biometric/custom,pin/pin"])
        #expect(policy.status == 0, "\(policy.output)")
        #expect(policy.output.contains("\"urn:countersign:acr:pin\""), "\(policy.output)")
        let refused = try await scene.run(["admin", "policy", "set", "--alternatives", "pin=pin,fingerprint"])
        #expect(refused.status != 0 && refused.output.contains("names the unknown factor \"fingerprint\""), "\(refused.output)")

        let request = try await Self.askForPIN(&scene)
        let shown = try await scene.run(["device", "approve", request, "--alternative", "3", "--pin-stdin"], input: "2468\n")
        #expect(shown.status == 0, "\(shown.output)")
        #expect(shown.output.contains("verify      biometric, or custom authenticator then PIN, or PIN"), "\(shown.output)")
        #expect(shown.output.contains("\(request): approved"), "\(shown.output)")

        let second = try await Self.askForPIN(&scene)
        let sequence = try await scene.run(["device", "approve", second, "--alternative", "2", "--custom-data", "ok", "--pin-stdin"],
                                     input: "2468\n")
        #expect(sequence.output.contains("Step 2 of 2: PIN"), "\(sequence.output)")
    }

    @Test("push-token set and clear change the device the server holds; enroll registers one", .enabled(if: enabled))
    func pushTokenFromTheTerminal() async throws {
        let scene = try await Scene.make()
        defer { scene.end() }
        let enrollment = try await scene.enroll(["--push-provider", "fcm", "--push-token", "fcm-registration-token-A1B2C3D4"])
        var push = try #require(try await scene.devices().first?["push"] as? [String: Any])
        #expect(push["provider"] as? String == "fcm")
        #expect(push["token_suffix"] as? String == "A1B2C3D4")

        let token = String(repeating: "0123456789abcdef", count: 3) + "01234567deadbeef"
        let set = try await scene.run(["device", "push-token", "set", enrollment, "--provider", "apns", "--token", token])
        #expect(set.status == 0, "\(set.output)")
        #expect(set.output.contains("Push token registered: apns, ending deadbeef (valid)."), "\(set.output)")
        push = try #require(try await scene.devices().first?["push"] as? [String: Any])
        #expect(push["provider"] as? String == "apns")
        #expect(push["token_suffix"] as? String == "deadbeef")
        #expect(push["valid"] as? Bool == true)

        let cleared = try await scene.run(["device", "push-token", "clear", enrollment])
        #expect(cleared.status == 0, "\(cleared.output)")
        #expect(cleared.output.contains("No push token registered."))
        #expect(try await scene.devices().first?["push"] == nil)
    }

    @Test("the tenant's devices by push state, the recent notifications, and a factor reset from the command line", .enabled(if: enabled))
    func tenantDevicesRecentNotificationsAndFactorReset() async throws {
        let scene = try await Scene.make()
        defer { scene.end() }
        let withPush = try await scene.enroll(["--name", "phone", "--push-provider", "fcm", "--push-token", "fcm-registration-token-A1B2C3D4"])
        _ = try await scene.enroll(["--name", "laptop"])
        _ = withPush

        let all = try await scene.run(["admin", "device", "list"])
        #expect(all.status == 0, "\(all.output)")
        #expect(all.output.contains(#""username" : "alice""#) && all.output.contains("laptop"), "\(all.output)")
        let noPush = try await scene.run(["admin", "device", "list", "--push", "none"])
        #expect(noPush.output.contains("laptop") && !noPush.output.contains(#""name" : "phone""#), "\(noPush.output)")
        let refused = try await scene.run(["admin", "device", "list", "--push", "broken"])
        #expect(refused.status != 0 && refused.output.contains("push must be valid, invalid or none"), "\(refused.output)")
        let mixed = try await scene.run(["admin", "device", "list", scene.userID, "--push", "none"])
        #expect(mixed.status != 0 && mixed.output.contains("--push lists the whole tenant"), "\(mixed.output)")

        let recent = try await scene.run(["admin", "push", "recent", "--status", "failed"])
        #expect(recent.status == 0 && recent.output.contains(#""items" : ["#), "\(recent.output)")

        let reset = try await scene.run(["admin", "user", "reset-factors", scene.userID])
        #expect(reset.status == 0, "\(reset.output)")
        #expect(reset.output.contains(#""devices_removed" : 2"#) && reset.output.contains(#""passkeys_removed" : 0"#), "\(reset.output)")
        #expect(try await scene.devices().isEmpty)
    }

    @Test("push tokens: bad input gets a precise error", .enabled(if: enabled))
    func pushTokenBadInput() async throws {
        let scene = try await Scene.make()
        defer { scene.end() }
        let alone = try await scene.run(["device", "enroll", try scene.enrollmentURI(), "--push-token", "abc"])
        #expect(alone.status != 0)
        #expect(alone.output.contains("--push-token and --push-provider go together"), "\(alone.output)")
        let enrollment = try await scene.enroll()
        let empty = try await scene.run(["device", "push-token", "set", enrollment, "--provider", "apns", "--token", ""])
        #expect(empty.status != 0)
        #expect(empty.output.contains("a push token must be 1 to 4096 characters"), "\(empty.output)")
        let provider = try await scene.run(["device", "push-token", "set", enrollment, "--provider", "mpns", "--token", "abc"])
        #expect(provider.status != 0)
        #expect(provider.output.contains("mpns"), "\(provider.output)")
    }

    @Test("set-apns-certificate: the help names the password's variable; without a terminal or a password it says how to give one",
          .enabled(if: enabled))
    func apnsCertificatePassword() async throws {
        let help = try await CommandLineTests.run(["admin", "push", "set-apns-certificate", "--help"], environment: [:])
        #expect(help.output.contains("COUNTERSIGN_APNS_CERTIFICATE_PASSWORD"), "\(help.output)")
        #expect(help.output.contains("standard input"), "\(help.output)")

        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("countersign-p12-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: scratch) }
        let file = scratch.appendingPathComponent("push.p12")
        try Data([0x30, 0x82]).write(to: file)
        let missing = try await CommandLineTests.run(
            ["admin", "push", "set-apns-certificate", "bank-ios", "--file", file.path, "--topic", "com.example.bank"],
            environment: ["COUNTERSIGN_SERVER": "http://127.0.0.1:9", "COUNTERSIGN_ADMIN_KEY": "key_x.y"], input: "",
            unset: ["COUNTERSIGN_APNS_CERTIFICATE_PASSWORD"])
        #expect(missing.status != 0)
        #expect(missing.output.contains("the password of \(file.path) is needed"), "\(missing.output)")
        #expect(missing.output.contains("set COUNTERSIGN_APNS_CERTIFICATE_PASSWORD"), "\(missing.output)")
        #expect(!missing.output.contains("field password is invalid"), "\(missing.output)")
    }

    @Test("set-apns-certificate takes the password from the first line of a pipe",
          .enabled(if: enabled && PushTestPKI.available))
    func apnsCertificatePasswordFromAPipe() async throws {
        let pki = try #require(PushTestPKI.shared)
        let scene = try await Scene.make()
        defer { scene.end() }
        let p12 = scene.scratch.appendingPathComponent("push.p12")
        try pki.clientPKCS12(commonName: "Apple Push Services: com.example.bank", topic: "com.example.bank", password: "s3cret")
            .write(to: p12)
        let set = try await CommandLineTests.run(
            ["admin", "push", "set-apns-certificate", "bank-ios", "--file", p12.path, "--topic", "com.example.bank"],
            environment: scene.environment, input: "s3cret\n", unset: ["COUNTERSIGN_APNS_CERTIFICATE_PASSWORD"])
        #expect(set.status == 0, "\(set.output)")
        #expect(set.output.contains("Apple Push Services: com.example.bank"), "\(set.output)")
    }
}

/// `countersign device notices` and `device not-me`, with the executable against `countersign serve`.
@Suite("The terminal's security notices")
struct CommandLineNoticeTests {
    @Test("a second enrollment is a notice to the first; not-me removes it, once; an unknown notice is named",
          .enabled(if: CommandLineDeviceTests.enabled))
    func noticesAndNotMe() async throws {
        let scene = try await CommandLineDeviceTests.Scene.make()
        defer { scene.end() }
        let laptop = try await scene.enroll(["--name", "laptop"])
        let empty = try await scene.run(["device", "notices"])
        #expect(empty.status == 0 && empty.output.contains("No notices."), "\(empty.output)")

        _ = try await scene.enroll(["--name", "Someone's desktop"])
        let listed = try await scene.run(["device", "notices", laptop])
        #expect(listed.status == 0, "\(listed.output)")
        #expect(listed.output.contains("A new device, “Someone's desktop”, was added to your account."), "\(listed.output)")
        #expect(listed.output.contains("answerable until"), "\(listed.output)")
        let noticeID = try #require(listed.output.split(whereSeparator: \.isWhitespace).first { $0.hasPrefix("ntc_") }.map(String.init))
        #expect(try await scene.devices().count == 2)

        let reported = try await scene.run(["device", "not-me", noticeID])
        #expect(reported.status == 0, "\(reported.output)")
        #expect(reported.output.contains("Reported \(noticeID) as not you."), "\(reported.output)")
        #expect(reported.output.contains("The device \"Someone's desktop\""), "\(reported.output)")
        #expect(reported.output.contains("was removed."), "\(reported.output)")
        #expect(reported.output.contains("New requests are refused until"), "\(reported.output)")
        let remaining = try await scene.devices()
        #expect(remaining.count == 1)
        #expect(remaining.first?["name"] as? String == "laptop")

        let again = try await scene.run(["device", "not-me", noticeID])
        #expect(again.status != 0)
        #expect(again.output.contains("the notice was already reported"), "\(again.output)")
        let after = try await scene.run(["device", "notices"])
        #expect(after.output.contains("reported not me"), "\(after.output)")
        let unknown = try await scene.run(["device", "not-me", "ntc_nosuchnotice"])
        #expect(unknown.status != 0)
        #expect(unknown.output.contains("the server showed no such notice to this device"), "\(unknown.output)")
    }
}

/// `countersign device handover`, with two device stores (the old terminal and the new one).
@Suite("The terminal's handover to a new device")
struct CommandLineHandoverTests {
    @Test("start prints a URI; the new terminal enrolls and shows a number; status shows it among three; approve with it; check says approved",
          .enabled(if: CommandLineDeviceTests.enabled))
    func handover() async throws {
        let scene = try await CommandLineDeviceTests.Scene.make()
        defer { scene.end() }
        let old = try await scene.enroll(["--name", "old laptop"])
        let started = try await scene.run(["device", "handover", "start", "--retire"])
        #expect(started.status == 0, "\(started.output)")
        let lines = started.output.split(separator: "\n").map(String.init)
        let uri = try #require(lines.first { $0.hasPrefix("countersign://enroll?") }, "\(started.output)")
        let handoverID = try #require(started.output.split(whereSeparator: \.isWhitespace).first { $0.hasPrefix("hov_") }
            .map { String($0).trimmingCharacters(in: .punctuationCharacters) }, "\(started.output)")

        let newStore = scene.scratch.appendingPathComponent("new-device").path
        let enrolled = try await scene.run(["device", "enroll", uri, "--name", "new laptop", "--store", newStore])
        #expect(enrolled.status == 0, "\(enrolled.output)")
        let waiting = try #require(enrolled.output.split(separator: "\n").first { $0.hasPrefix("Waiting for approval on ") },
                                   "\(enrolled.output)")
        let number = try #require(waiting.split(separator: " ").firstIndex(of: "pick").map { waiting.split(separator: " ")[$0 + 1] })
            .description
        let newEnrollment = try #require(enrolled.output.split(separator: "\n").first { $0.hasPrefix("enrollment ") }?
            .split(separator: " ").dropFirst().first.map(String.init))
        let notYet = try await scene.run(["device", "handover", "check", newEnrollment, "--store", newStore])
        #expect(notYet.status == 2 && notYet.output.contains("pick \(number) there"), "\(notYet.output)")

        let status = try await scene.run(["device", "handover", "status", handoverID])
        #expect(status.status == 0, "\(status.output)")
        #expect(status.output.contains("awaiting approval") && status.output.contains("\"new laptop\""), "\(status.output)")
        #expect(status.output.contains(number), "\(status.output)")

        let approved = try await scene.run(["device", "handover", "approve", handoverID, number])
        #expect(approved.status == 0, "\(approved.output)")
        #expect(approved.output.contains("\(handoverID): approved"), "\(approved.output)")
        #expect(approved.output.contains("This enrollment (\(old)) was removed."), "\(approved.output)")
        let check = try await scene.run(["device", "handover", "check", newEnrollment, "--store", newStore])
        #expect(check.status == 0 && check.output.contains("Approved"), "\(check.output)")
        let devices = try await scene.devices()
        #expect(devices.map { $0["name"] as? String } == ["new laptop"])

        let unknown = try await scene.run(["device", "handover", "status", "hov_nosuch", "--store", newStore])
        #expect(unknown.status != 0 && unknown.output.contains("this device started no such handover"), "\(unknown.output)")
    }
}
