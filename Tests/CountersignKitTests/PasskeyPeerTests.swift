import CountersignKit
import CountersignWebAuthn
import Foundation
import Testing

/// The SDK's platform authenticator against an independent relying party: py_webauthn (PyPI
/// `webauthn`), driven through `Tests/Peers/py_webauthn_rp.py`. It makes the options, verifies
/// each registration and assertion with its own CBOR, COSE and signature code, and keeps the
/// credential's public key and counter between ceremonies as a relying party would.
@Suite(.enabled(if: PyWebAuthnRP.isAvailable, "python3 with the webauthn module is not available (pip install webauthn)"))
struct PasskeyPeerTests {
    struct Scenario: Sendable, CustomTestStringConvertible {
        let attestation: PasskeyAttestationFormat
        let conveyance: String
        let kind: PasskeyKind
        let format: String
        let deviceType: String

        var testDescription: String { "\(attestation.rawValue) attestation (RP asks \(conveyance)), \(kind.rawValue)" }
    }

    static let scenarios = [
        Scenario(attestation: .none, conveyance: "none", kind: .deviceBound, format: "none", deviceType: "single_device"),
        Scenario(attestation: .packed, conveyance: "direct", kind: .deviceBound, format: "packed", deviceType: "single_device"),
        Scenario(attestation: .packed, conveyance: "none", kind: .deviceBound, format: "none", deviceType: "single_device"),
        Scenario(attestation: .packed, conveyance: "direct", kind: .synced, format: "packed", deviceType: "multi_device"),
    ]

    static let origin = "https://example.org"

    @Test(arguments: scenarios)
    func py_webauthnVerifiesARegistrationAndTwoSignIns(_ scenario: Scenario) async throws {
        try await withTemporaryRoot { root in
            let rp = try PyWebAuthnRP(state: root.appendingPathComponent("rp-state.json"))
            let authenticator = PasskeyAuthenticator(
                store: FilePasskeyStore(root: root.appendingPathComponent("passkeys")), attestation: scenario.attestation,
                credentialKind: scenario.kind, userVerifier: BiometricPasskeyVerifier(keys: SoftwareBiometricKeys { _ in .verified }),
                selector: RecordingSelector { $0.first })

            let creation = try rp.run(PublicKeyCredentialCreationOptionsJSON.self, [
                "options-register", "--rp-id", "example.org", "--user-name", "alice", "--user-display-name", "Alice Liddell",
                "--attestation", scenario.conveyance, "--user-verification", "required",
            ])
            let registration = try await authenticator.register(creation, origin: Self.origin)
            let registered = try rp.run(
                Registered.self, ["verify-register", "--origin", Self.origin, "--require-user-verification"], input: registration)
            #expect(registered.id == registration.id)
            #expect(registered.fmt == scenario.format)
            #expect(registered.credentialType == "public-key")
            #expect(registered.signCount == 0)
            #expect(registered.userVerified)
            #expect(registered.deviceType == scenario.deviceType)
            #expect(registered.backedUp == (scenario.kind == .synced))
            #expect(registered.aaguid == (scenario.format == "packed" ? "b9691d63-0755-41a4-a4b7-3014aa41c895" : "00000000-0000-0000-0000-000000000000"))

            var expectedCount = 0
            for allowing in [false, true] {
                let request = try rp.run(
                    PublicKeyCredentialRequestOptionsJSON.self,
                    ["options-sign-in", "--user-verification", "required"] + (allowing ? ["--allow-registered"] : []))
                #expect(request.allowCredentials.isEmpty == !allowing)
                let assertion = try await authenticator.signIn(request, origin: Self.origin)
                let signedIn = try rp.run(
                    SignedIn.self, ["verify-sign-in", "--origin", Self.origin, "--require-user-verification"], input: assertion)
                if scenario.kind == .deviceBound { expectedCount += 1 }
                #expect(signedIn.id == registration.id)
                #expect(signedIn.newSignCount == expectedCount)
                #expect(signedIn.userVerified)
                #expect(signedIn.backedUp == (scenario.kind == .synced))
            }
        }
    }

    @Test func py_webauthnRefusesATamperedAssertion() async throws {
        try await withTemporaryRoot { root in
            let rp = try PyWebAuthnRP(state: root.appendingPathComponent("rp-state.json"))
            let authenticator = PasskeyAuthenticator(store: FilePasskeyStore(root: root.appendingPathComponent("passkeys")))
            let creation = try rp.run(PublicKeyCredentialCreationOptionsJSON.self, ["options-register", "--rp-id", "example.org", "--user-name", "alice"])
            _ = try rp.run(Registered.self, ["verify-register", "--origin", Self.origin], input: try await authenticator.register(creation, origin: Self.origin))
            let request = try rp.run(PublicKeyCredentialRequestOptionsJSON.self, ["options-sign-in"])
            var assertion = try await authenticator.signIn(request, origin: Self.origin)
            // A higher counter: everything but the signature still checks out.
            assertion.response.authenticatorData.bytes[36] ^= 0x10
            let refusal = try rp.refusal(["verify-sign-in", "--origin", Self.origin], input: assertion)
            #expect(refusal.contains("Could not verify authentication signature"), "\(refusal)")
        }
    }

    /// What the relying party stored (its snake_case members, decoded as camel case).
    struct Registered: Decodable {
        let id: String, fmt: String, credentialType: String, aaguid: String, deviceType: String
        let signCount: Int
        let userVerified: Bool, backedUp: Bool
    }

    struct SignedIn: Decodable {
        let id: String, deviceType: String
        let newSignCount: Int
        let userVerified: Bool, backedUp: Bool
    }
}

/// `Tests/Peers/py_webauthn_rp.py`, found from this file's path, run with python3.
struct PyWebAuthnRP {
    struct Failure: Error, CustomStringConvertible { let description: String }

    static let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Peers/py_webauthn_rp.py")

    /// python3, or nil after saying on stderr why the peer tests are skipped.
    static let python: URL? = {
        let searchPath = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        guard let python = searchPath.split(separator: ":").map({ URL(fileURLWithPath: "\($0)/python3") })
            .first(where: { FileManager.default.isExecutableFile(atPath: $0.path) }) else {
            return skipped(because: "python3 was not found on PATH")
        }
        guard let check = try? execute(python, ["-c", "import webauthn"], input: nil), check.status == 0 else {
            return skipped(because: "\(python.path) cannot import webauthn (pip install webauthn)")
        }
        return python
    }()

    static var isAvailable: Bool { python != nil }

    private static func skipped(because reason: String) -> URL? {
        FileHandle.standardError.write(Data("PasskeyPeerTests: SKIPPED the py_webauthn tests: \(reason)\n".utf8))
        return nil
    }

    let state: URL

    /// A relying party whose state file is `state`; its directory is created if missing.
    init(state: URL) throws {
        guard Self.python != nil else { throw Failure(description: "python3 with webauthn is unavailable") }
        try FileManager.default.createDirectory(at: state.deletingLastPathComponent(), withIntermediateDirectories: true)
        self.state = state
    }

    /// Runs a subcommand that must succeed and decodes its output.
    func run<Output: Decodable>(_ type: Output.Type, _ arguments: [String], input: (any Encodable)? = nil) throws -> Output {
        let result = try invoke(arguments, input: input)
        guard result.status == 0 else { throw Failure(description: "\(arguments[0]) exited with \(result.status): \(result.errors)") }
        let decoder = JSONDecoder()
        // The options' members have no underscores, so only the relying party's own change.
        decoder.keyDecodingStrategy = .convertFromSnakeCase
        do { return try decoder.decode(Output.self, from: Data(result.output.utf8)) } catch {
            throw Failure(description: "\(arguments[0]) printed \(result.output): \(error)")
        }
    }

    /// Runs a subcommand that must refuse; returns its reason.
    func refusal(_ arguments: [String], input: any Encodable) throws -> String {
        let result = try invoke(arguments, input: input)
        guard result.status != 0 else { throw Failure(description: "\(arguments[0]) accepted: \(result.output)") }
        return result.errors
    }

    private func invoke(_ arguments: [String], input: (any Encodable)?) throws -> (status: Int32, output: String, errors: String) {
        guard let python = Self.python else { throw Failure(description: "python3 with webauthn is unavailable") }
        let body = try input.map { value in try JSONEncoder().encode(value) }
        return try Self.execute(
            python, [Self.script.path, arguments[0], "--state", state.path] + arguments.dropFirst(), input: body)
    }

    /// Output through files: a blocking pipe read can be interrupted by a signal.
    private static func execute(_ executable: URL, _ arguments: [String], input: Data?) throws -> (status: Int32, output: String, errors: String) {
        let workspace = FileManager.default.temporaryDirectory.appendingPathComponent("py-webauthn-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: workspace, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: workspace) }
        let (outputFile, errorFile, inputFile) = (
            workspace.appendingPathComponent("stdout"), workspace.appendingPathComponent("stderr"),
            workspace.appendingPathComponent("stdin"))
        for file in [outputFile, errorFile] { try Data().write(to: file) }
        try (input ?? Data()).write(to: inputFile)
        let (output, errors, typed) = (
            try FileHandle(forWritingTo: outputFile), try FileHandle(forWritingTo: errorFile), try FileHandle(forReadingFrom: inputFile))
        defer { for handle in [output, errors, typed] { try? handle.close() } }
        let process = Process()
        process.executableURL = executable
        process.arguments = arguments
        (process.standardOutput, process.standardError, process.standardInput) = (output, errors, typed)
        try process.run()
        process.waitUntilExit()
        return (process.terminationStatus, try String(contentsOf: outputFile, encoding: .utf8), try String(contentsOf: errorFile, encoding: .utf8))
    }
}
