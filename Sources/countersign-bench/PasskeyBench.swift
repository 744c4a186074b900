import ArgumentParser
import CountersignCore
import CountersignKit
import CountersignServer
import CountersignWebAuthn
import Foundation

/// What the relying party's checks of a passkey cost: a registration (§7.1, with `none` and
/// with packed self attestation) and an assertion (§7.2), each verified the way the server
/// verifies them, over responses the SDK's platform authenticator made beforehand (making them
/// is not timed).
struct PasskeyBench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "passkeys", abstract: "Benchmark the verification of passkey registrations and assertions.")

    @Option(help: "Registrations of each attestation format to verify.") var registrations = 300
    @Option(help: "Assertions to verify.") var assertions = 2000

    static let rpID = "bench.countersign.test"
    static let origin = "https://bench.countersign.test"

    func run() async throws {
        print("Countersign passkey bench: \(ProcessInfo.processInfo.activeProcessorCount) cores")
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("passkey-bench-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        let verifier = WebAuthnVerifier(rpID: Self.rpID, origins: [Self.origin])

        var credential: WebAuthnVerifier.Credential?
        var handle: [UInt8] = []
        for format in [PasskeyAttestationFormat.none, .packed] {
            let authenticator = PasskeyAuthenticator(
                store: FilePasskeyStore(root: folder.appendingPathComponent("\(format)")), attestation: format)
            var made: [(RegistrationResponseJSON, [UInt8])] = []
            for index in 0..<registrations {
                let options = Self.creationOptions(user: index, attestation: format == .none ? "none" : "direct")
                made.append((try await authenticator.register(options, origin: Self.origin), options.challenge.bytes))
            }
            var times: [Double] = []
            for (response, challenge) in made {
                let start = ContinuousClock.now
                let verified = try await verifier.verifyRegistration(response, challenge: challenge)
                times.append((ContinuousClock.now - start).microseconds)
                if credential == nil {
                    credential = verified
                    handle = Self.creationOptions(user: 0, attestation: "none").user.id.bytes
                }
            }
            print("registration, \(format == .none ? "none" : "packed self") attestation, ES256: \(Self.summary(times)) (\(made.first?.0.response.attestationObject.bytes.count ?? 0)-byte attestation object)")
        }

        let signer = PasskeyAuthenticator(store: FilePasskeyStore(root: folder.appendingPathComponent("none")))
        var made: [(AuthenticationResponseJSON, [UInt8])] = []
        for _ in 0..<assertions {
            let options = PublicKeyCredentialRequestOptionsJSON(
                challenge: Base64URLBytes(Array(Secrets.randomBytes(32))), rpId: Self.rpID,
                allowCredentials: [CredentialDescriptor(id: credential!.id)])
            made.append((try await signer.signIn(options, origin: Self.origin), options.challenge.bytes))
        }
        var times: [Double] = []
        for (response, challenge) in made {
            let start = ContinuousClock.now
            _ = try verifier.verifyAssertion(response, challenge: challenge, credential: credential!, userHandle: handle)
            times.append((ContinuousClock.now - start).microseconds)
        }
        print("assertion, ES256: \(Self.summary(times))")
    }

    static func creationOptions(user: Int, attestation: String) -> PublicKeyCredentialCreationOptionsJSON {
        PublicKeyCredentialCreationOptionsJSON(
            rp: RelyingPartyEntity(id: rpID, name: "Bench"),
            user: UserEntity(id: Base64URLBytes(Array("user-\(user)".utf8)), name: "user\(user)", displayName: "User \(user)"),
            challenge: Base64URLBytes(Array(Secrets.randomBytes(32))),
            pubKeyCredParams: [CredentialParameters(alg: .es256), CredentialParameters(alg: .edDSA), CredentialParameters(alg: .rs256)],
            authenticatorSelection: AuthenticatorSelection(residentKey: "required", requireResidentKey: true),
            attestation: attestation)
    }

    static func summary(_ times: [Double]) -> String {
        let sorted = times.sorted()
        let mean = sorted.reduce(0, +) / Double(max(sorted.count, 1))
        return "n=\(sorted.count) mean \(format(mean)) µs, p50 \(format(sorted[sorted.count / 2])) µs, p99 \(format(sorted[sorted.count * 99 / 100])) µs"
    }
}

private extension Duration {
    var microseconds: Double {
        Double(components.seconds) * 1_000_000 + Double(components.attoseconds) / 1e12
    }
}
