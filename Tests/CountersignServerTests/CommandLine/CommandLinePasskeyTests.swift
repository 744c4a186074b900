import Foundation
import Testing

/// `countersign passkey`, run with the real executable against an independent relying party
/// (py_webauthn through `Tests/Peers/py_webauthn_rp.py`): what the command prints is what a
/// relying party's server accepts.
@Suite("The countersign passkey commands",
       .enabled(if: CommandLineTests.executable != nil && RelyingPartyPeer.python != nil,
                "the countersign executable or python3 with webauthn is missing"))
struct CommandLinePasskeyTests {
    static let origin = "https://example.org"

    /// A scratch directory with a device store (the passkeys go to its `passkeys` directory)
    /// and the relying party's state.
    struct Scene {
        let scratch: URL
        let environment: [String: String]
        let relyingParty: RelyingPartyPeer

        init() throws {
            scratch = FileManager.default.temporaryDirectory.appendingPathComponent("countersign-passkey-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
            environment = ["COUNTERSIGN_DEVICE_STORE": scratch.appendingPathComponent("device").path]
            relyingParty = RelyingPartyPeer(state: scratch.appendingPathComponent("rp-state.json"))
        }

        /// Writes `text` to a file in the scratch directory.
        func file(_ name: String, _ text: String) throws -> String {
            let url = scratch.appendingPathComponent(name)
            try Data(text.utf8).write(to: url)
            return url.path
        }

        /// Runs `countersign`; its standard output, or a failure with its standard error.
        func countersign(_ arguments: [String]) async throws -> String {
            try await ChildProcess.run(try CommandLineTests.requireExecutable(), arguments, environment: environment)
        }

        /// Registers `user` with `passkey register`; returns the relying party's record of it.
        func register(_ user: String, displayName: String, attestation: String) async throws -> [String: Any] {
            let options = try await relyingParty.run([
                "options-register", "--rp-id", "example.org", "--user-name", user, "--user-display-name", displayName,
                "--attestation", "direct",
            ])
            let response = try await countersign([
                "passkey", "register", "--origin", CommandLinePasskeyTests.origin, "--options", try file("creation.json", options),
                "--attestation", attestation,
            ])
            return try await relyingParty.object([
                "verify-register", "--origin", CommandLinePasskeyTests.origin, "--response", try file("registration.json", response),
            ])
        }

        func end() {
            try? FileManager.default.removeItem(at: scratch)
        }
    }

    @Test("passkey register prints a registration py_webauthn verifies, kept in the device store's passkeys directory")
    func registerIsVerifiedByTheRelyingParty() async throws {
        let scene = try Scene()
        defer { scene.end() }
        let packed = try await scene.register("alice", displayName: "Alice Liddell", attestation: "packed")
        #expect(packed["fmt"] as? String == "packed")
        #expect(packed["aaguid"] as? String == "b9691d63-0755-41a4-a4b7-3014aa41c895")
        #expect(packed["device_type"] as? String == "single_device")
        let none = try await scene.register("bob", displayName: "Bob", attestation: "none")
        #expect(none["fmt"] as? String == "none")
        let files = try FileManager.default.contentsOfDirectory(atPath: scene.scratch.appendingPathComponent("device/passkeys").path)
        #expect(files.filter { $0.hasSuffix(".json") }.count == 2)
    }

    @Test("passkey list shows each passkey by its key name; sign-in --credential uses the one named")
    func signInWithANamedCredentialIsVerified() async throws {
        let scene = try Scene()
        defer { scene.end() }
        let alice = try await scene.register("alice", displayName: "Alice Liddell", attestation: "none")
        _ = try await scene.register("bob", displayName: "Bob", attestation: "none")

        let listed = try await scene.countersign(["passkey", "list", "--rp-id", "example.org"])
        let names = listed.split(separator: "\n").filter { !$0.hasPrefix(" ") && !$0.isEmpty }.map(String.init)
        #expect(names.count == 2, "\(listed)")
        let aliceName = try #require(names.first { $0.hasPrefix("Alice Liddell 20") }, "\(listed)")
        #expect(listed.contains("user     alice (Alice Liddell)"))
        #expect(listed.contains(try #require(alice["id"] as? String)))

        for expectedCount in 1...2 {
            let options = try await scene.relyingParty.run(["options-sign-in"])
            let assertion = try await scene.countersign([
                "passkey", "sign-in", "--origin", Self.origin, "--options", try scene.file("request.json", options),
                "--credential", aliceName,
            ])
            let verified = try await scene.relyingParty.object([
                "verify-sign-in", "--origin", Self.origin, "--response", try scene.file("assertion.json", assertion),
            ])
            #expect(verified["id"] as? String == alice["id"] as? String)
            #expect(verified["new_sign_count"] as? Int == expectedCount)
        }
        #expect(try await scene.countersign(["passkey", "list"]).contains("device-bound, counter 2"))
    }

    @Test("passkey sign-in reads the options from standard input; a name it does not know is refused")
    func signInFromStandardInput() async throws {
        let scene = try Scene()
        defer { scene.end() }
        _ = try await scene.register("alice", displayName: "Alice Liddell", attestation: "none")
        let options = try await scene.relyingParty.run(["options-sign-in", "--allow-registered"])
        let executable = try CommandLineTests.requireExecutable()
        let signedIn = try await ChildProcess.result(
            executable, ["passkey", "sign-in", "--origin", Self.origin],
            environment: ProcessInfo.processInfo.environment.merging(scene.environment) { $1 }, input: options)
        #expect(signedIn.status == 0, "\(signedIn.output)")
        let assertion = try #require(signedIn.output.split(separator: "\n").first { $0.hasPrefix("{") }.map(String.init))
        let verified = try await scene.relyingParty.object([
            "verify-sign-in", "--origin", Self.origin, "--response", try scene.file("assertion.json", assertion),
        ])
        #expect(verified["new_sign_count"] as? Int == 1)

        let refused = try await ChildProcess.result(
            executable, ["passkey", "sign-in", "--origin", Self.origin, "--credential", "Nobody 2000-01-01 00:00:00"],
            environment: ProcessInfo.processInfo.environment.merging(scene.environment) { $1 },
            input: try await scene.relyingParty.run(["options-sign-in"]))
        #expect(refused.status != 0)
        #expect(refused.output.contains("NotAllowedError: the chosen key name is not one of those offered"), "\(refused.output)")
    }

    @Test("passkey remove deletes the passkey here")
    func removeDeletesThePasskey() async throws {
        let scene = try Scene()
        defer { scene.end() }
        let alice = try await scene.register("alice", displayName: "Alice Liddell", attestation: "none")
        let id = try #require(alice["id"] as? String)
        // As operations.md writes it: after `--`, since one credential id in 64 begins with '-'.
        #expect(try await scene.countersign(["passkey", "remove", "--", id]).hasPrefix("Removed Alice Liddell 20"))
        #expect(try await scene.countersign(["passkey", "list"]).contains("No passkeys."))
        await #expect(throws: ChildProcess.Failure.self) { try await scene.countersign(["passkey", "remove", "--", id]) }

        // An id beginning with "-h" would otherwise print the help and remove nothing.
        let dashed = try await ChildProcess.result(
            try CommandLineTests.requireExecutable(), ["passkey", "remove", "--", "-hAAAA"],
            environment: ProcessInfo.processInfo.environment.merging(scene.environment) { $1 })
        #expect(dashed.status != 0)
        #expect(dashed.output.contains("no passkey here has the id -hAAAA"), "\(dashed.output)")
    }
}

/// `Tests/Peers/py_webauthn_rp.py`, a relying party made of py_webauthn, run with python3.
struct RelyingPartyPeer {
    static let script = BuildProducts.packageRoot.appendingPathComponent("Tests/Peers/py_webauthn_rp.py")

    /// python3 able to import webauthn, or nil after saying on stderr why the tests are skipped.
    static let python: URL? = {
        guard let python = ChildProcess.find("python3") else {
            return skipped(because: "python3 was not found on PATH")
        }
        guard (try? ChildProcess.runBlocking(python, ["-c", "import webauthn"])) != nil else {
            return skipped(because: "\(python.path) cannot import webauthn (pip install webauthn)")
        }
        return python
    }()

    private static func skipped(because reason: String) -> URL? {
        FileHandle.standardError.write(Data("CommandLinePasskeyTests: SKIPPED: \(reason)\n".utf8))
        return nil
    }

    let state: URL

    /// Runs a subcommand that must succeed; its standard output.
    func run(_ arguments: [String]) async throws -> String {
        guard let python = Self.python else { throw CommandLineTests.RunFailure(description: "python3 with webauthn is unavailable") }
        return try await ChildProcess.run(python, [Self.script.path, arguments[0], "--state", state.path] + arguments.dropFirst())
    }

    /// `run`, its output read as a JSON object.
    func object(_ arguments: [String]) async throws -> [String: Any] {
        let output = try await run(arguments)
        guard let object = try JSONSerialization.jsonObject(with: Data(output.utf8)) as? [String: Any] else {
            throw CommandLineTests.RunFailure(description: "\(arguments[0]) printed \(output)")
        }
        return object
    }
}
