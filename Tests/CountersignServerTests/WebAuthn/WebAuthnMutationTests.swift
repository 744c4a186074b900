import CountersignWebAuthn
import Foundation
import Testing
@testable import CountersignServer

/// Whatever bytes arrive, the ceremonies answer with a `WebAuthnError` and never trap: valid
/// responses (the W3C vectors' registrations of every verified format, and an assertion) have
/// their bytes flipped, cut short and extended, deterministically, thousands of times; each
/// result is a verified response or a typed failure.
@Suite struct WebAuthnMutationTests {
    typealias Vectors = WebAuthnCeremonyVectorTests

    /// A small deterministic generator (SplitMix64), so that a failure reproduces.
    struct Mutator {
        var state: UInt64

        mutating func next() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var value = state
            value = (value ^ (value >> 30)) &* 0xBF58_476D_1CE4_E5B9
            value = (value ^ (value >> 27)) &* 0x94D0_49BB_1331_11EB
            return value ^ (value >> 31)
        }

        mutating func mutate(_ bytes: [UInt8]) -> [UInt8] {
            var bytes = bytes
            switch next() % 5 {
            case 0 where !bytes.isEmpty:
                let index = Int(next() % UInt64(bytes.count))
                bytes[index] ^= UInt8(1 << (next() % 8))
            case 1 where !bytes.isEmpty:
                bytes.removeLast(Int(next() % UInt64(bytes.count)) + 1)
            case 2:
                bytes.insert(UInt8(truncatingIfNeeded: next()), at: Int(next() % UInt64(bytes.count + 1)))
            case 3 where !bytes.isEmpty:
                let index = Int(next() % UInt64(bytes.count))
                let replacement: UInt8 = [0x00, 0xFF, 0x1F, 0x5B, 0x9F, 0xBF][Int(next() % 6)]
                bytes[index] = replacement == bytes[index] ? ~replacement : replacement
            default:
                bytes += (0..<Int(next() % 4 + 1)).map { _ in UInt8(truncatingIfNeeded: next()) }
            }
            return bytes
        }
    }

    @Test(arguments: Vectors.verified) func mutatedRegistrationsFailTyped(_ name: String) async throws {
        let (response, expectation) = try Vectors.registration(Vectors.vector(name))
        let ceremony = RegistrationCeremony(relyingParty: try Vectors.relyingParty(allowUnattested: true))
        var mutator = Mutator(state: UInt64(truncatingIfNeeded: name.hashValue & 0xFFFF) + 1)
        var refused = 0
        for round in 0..<400 {
            var mutated = response
            if round % 2 == 0 {
                mutated.response.attestationObject = Base64URLBytes(mutator.mutate(response.response.attestationObject.bytes))
            } else {
                mutated.response.clientDataJSON = Base64URLBytes(mutator.mutate(response.response.clientDataJSON.bytes))
            }
            do {
                _ = try await ceremony.verify(mutated, expecting: expectation, at: WebAuthnAttestationFixtures.w3cDate)
            } catch {
                refused += 1
            }
        }
        #expect(refused > 200, "most mutations must be refused: \(refused) of 400")
    }

    @Test func mutatedAssertionsFailTyped() throws {
        let authenticator = WebAuthnTestAuthenticator()
        let challenge = Array(Secrets.randomBytes(32))
        let response = authenticator.assertion(challenge: challenge)
        let ceremony = AuthenticationCeremony(relyingParty: WebAuthnTestAuthenticator.relyingParty())
        let expectation = AuthenticationCeremony.Expectation(
            challenge: challenge, userVerification: .preferred, allowCredentials: [], identifiedUserHandle: nil)
        var mutator = Mutator(state: 42)
        var passed = 0
        for round in 0..<3000 {
            var mutated = response
            switch round % 4 {
            case 0: mutated.response.authenticatorData = Base64URLBytes(mutator.mutate(response.response.authenticatorData.bytes))
            case 1: mutated.response.clientDataJSON = Base64URLBytes(mutator.mutate(response.response.clientDataJSON.bytes))
            case 2: mutated.response.signature = Base64URLBytes(mutator.mutate(response.response.signature.bytes))
            default: mutated.response.userHandle = Base64URLBytes(mutator.mutate(authenticator.userHandle))
            }
            if (try? ceremony.verify(mutated, expecting: expectation, credential: authenticator.record())) != nil { passed += 1 }
        }
        // Only changes the signature does not cover may pass: none of these four fields.
        #expect(passed == 0)
    }
}
