import CountersignCBOR
import CountersignWebAuthn
import Foundation
import Testing
@testable import CountersignServer

/// The TPM structure readers against valid `certInfo` and `pubArea` from real TPMs and the W3C
/// vector, and against every truncation and thousands of deterministic mutations of them:
/// whatever the bytes, reading either succeeds or throws, and never reads out of bounds.
@Suite("WebAuthn attestation: TPM structures")
struct WebAuthnAttestationTPMStructureTests {
    typealias Fixtures = WebAuthnAttestationFixtures

    static let sources = ["w3c:tpm.ES256", "tpm.surface-pro-4.RS1", "tpm.dell-xps-13.RS1", "tpm.lenovo-carbon-x1.RS1", "tpm.ecc-pubarea.RS1"]

    static func statement(_ source: String) throws -> CBORMap {
        source.hasPrefix("w3c:")
            ? try Fixtures.w3cRegistration(String(source.dropFirst(4))).statement : try Fixtures.deviceRegistration(source).statement
    }

    @Test("real and vector certInfo and pubArea read completely", arguments: sources)
    func validStructuresRead(source: String) throws {
        let statement = try Self.statement(source)
        let certInfo = try TPMAttest(parsing: try #require(statement[text: "certInfo"]?.bytes))
        #expect(certInfo.magic == TPMAttest.generatedValue)
        #expect(certInfo.type == TPMAttest.certifyType)
        let certify = try certInfo.certifyInfo()
        let pubArea = try TPMPublic(parsing: try #require(statement[text: "pubArea"]?.bytes))
        #expect(certify.name == pubArea.name)
    }

    @Test("the W3C vector's pubArea is a P-256 key named with SHA-256")
    func vectorPubArea() throws {
        let pubArea = try TPMPublic(parsing: try #require(try Self.statement("w3c:tpm.ES256")[text: "pubArea"]?.bytes))
        #expect(pubArea.nameAlgorithm == .sha256)
        guard case .ecc(let curve, let x, let y) = pubArea.key else {
            Issue.record("not an ECC key")
            return
        }
        #expect(curve == 0x0003)
        #expect(x.count == 32 && y.count == 32)
        #expect(pubArea.name.prefix(2) == [0x00, 0x0B])
    }

    @Test("every truncation of a valid certInfo or pubArea throws", arguments: sources)
    func truncationsThrow(source: String) throws {
        let statement = try Self.statement(source)
        let certInfo = try #require(statement[text: "certInfo"]?.bytes)
        let pubArea = try #require(statement[text: "pubArea"]?.bytes)
        for length in 0..<certInfo.count {
            #expect(throws: AttestationFailure.self, "certInfo cut to \(length) bytes") {
                try TPMAttest(parsing: Array(certInfo.prefix(length))).certifyInfo()
            }
        }
        for length in 0..<pubArea.count {
            #expect(throws: AttestationFailure.self, "pubArea cut to \(length) bytes") { try TPMPublic(parsing: Array(pubArea.prefix(length))) }
        }
    }

    @Test("a byte appended to a valid certInfo or pubArea throws: a structure ends where its last field does")
    func trailingBytesThrow() throws {
        let statement = try Self.statement("w3c:tpm.ES256")
        let certInfo = try #require(statement[text: "certInfo"]?.bytes)
        let pubArea = try #require(statement[text: "pubArea"]?.bytes)
        #expect(throws: AttestationFailure("certInfo.attested has 1 bytes after its last field")) {
            try TPMAttest(parsing: certInfo + [0]).certifyInfo()
        }
        #expect(throws: AttestationFailure("pubArea has 1 bytes after its last field")) { try TPMPublic(parsing: pubArea + [0]) }
    }

    static let badPubAreas: [(name: String, edit: @Sendable ([UInt8]) -> [UInt8], reason: String)] = [
        ("unknown type", { replacing($0, at: 0, with: [0x00, 0x25]) }, "pubArea type 0x0025 is neither TPM_ALG_RSA nor TPM_ALG_ECC"),
        ("SM3 name algorithm", { replacing($0, at: 2, with: [0x00, 0x12]) },
         "pubArea nameAlg 0x0012 is not SHA-1, SHA-256, SHA-384 or SHA-512"),
        ("AES symmetric", { replacing($0, at: 10, with: [0x00, 0x06]) }, "pubArea symmetric is not TPM_ALG_NULL, as a signing key's is"),
        ("ECDAA scheme", { replacing($0, at: 12, with: [0x00, 0x1A]) }, "pubArea scheme 0x001A is not one this key type takes"),
    ]

    @Test("a pubArea of a kind no WebAuthn credential has fails naming what", arguments: badPubAreas)
    func badPubArea(name: String, edit: @Sendable ([UInt8]) -> [UInt8], reason: String) throws {
        let pubArea = try #require(try Self.statement("w3c:tpm.ES256")[text: "pubArea"]?.bytes)
        #expect(throws: AttestationFailure(reason)) { try TPMPublic(parsing: edit(pubArea)) }
    }

    @Test("thousands of deterministic mutations of valid structures throw or read, and never crash", arguments: sources)
    func mutationsNeverCrash(source: String) throws {
        let statement = try Self.statement(source)
        let originals = [try #require(statement[text: "certInfo"]?.bytes), try #require(statement[text: "pubArea"]?.bytes)]
        var random = SplitMix64(seed: 0x5EED_C0DE)
        var outcomes = (read: 0, refused: 0)
        for round in 0..<4_000 {
            for original in originals {
                let mutant = Self.mutate(original, round: round, random: &random)
                do {
                    _ = try TPMAttest(parsing: mutant).certifyInfo()
                    outcomes.read += 1
                } catch {
                    outcomes.refused += 1
                }
                do {
                    _ = try TPMPublic(parsing: mutant).name
                    outcomes.read += 1
                } catch {
                    outcomes.refused += 1
                }
            }
        }
        #expect(outcomes.read + outcomes.refused == 16_000)
        #expect(outcomes.refused > 0)
        #expect(outcomes.read > 0, "some mutations (a changed key byte) leave a structure that still reads")
    }

    /// One of five mutations, chosen by round: a random byte changed, a run overwritten with
    /// random bytes, a length field set to a large or off-by-one value, bytes cut from the
    /// middle, or random bytes of the same length.
    static func mutate(_ bytes: [UInt8], round: Int, random: inout SplitMix64) -> [UInt8] {
        var mutant = bytes
        let position = Int(random.next() % UInt64(bytes.count))
        switch round % 5 {
        case 0:
            mutant[position] = UInt8(truncatingIfNeeded: random.next())
        case 1:
            for index in position..<min(bytes.count, position + 8) { mutant[index] = UInt8(truncatingIfNeeded: random.next()) }
        case 2:
            let large: [UInt8] = random.next() % 2 == 0 ? [0xFF, 0xFF] : [0x00, UInt8(truncatingIfNeeded: bytes.count - position)]
            mutant = replacing(mutant, at: min(position, bytes.count - 2), with: large)
        case 3:
            mutant.removeSubrange(position..<min(bytes.count, position + 1 + Int(random.next() % 16)))
        default:
            mutant = (0..<bytes.count).map { _ in UInt8(truncatingIfNeeded: random.next()) }
        }
        return mutant
    }

    static func replacing(_ bytes: [UInt8], at offset: Int, with replacement: [UInt8]) -> [UInt8] {
        var copy = bytes
        copy.replaceSubrange(offset..<offset + replacement.count, with: replacement)
        return copy
    }

    /// A small deterministic generator (SplitMix64), so a failing mutation can be replayed.
    struct SplitMix64 {
        var state: UInt64

        init(seed: UInt64) {
            state = seed
        }

        mutating func next() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
    }
}
