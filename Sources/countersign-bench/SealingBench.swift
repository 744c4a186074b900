import ArgumentParser
import CountersignCore
import Crypto
import Foundation

/// `countersign-bench sealing`: what sealing request details costs in each HPKE suite — the
/// server's seal per device, the device's open, and the bytes an envelope carries.
struct SealingBench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sealing", abstract: "Benchmark sealing and opening request details with P-256 and X-Wing.")

    @Option(help: "Seals and opens to time per suite.") var operations = 2000
    @Option(help: "Rounds per suite; the median round is reported with the spread.") var rounds = 5

    func validate() throws {
        guard operations >= 1, rounds >= 1 else { throw ValidationError("--operations and --rounds must each be at least 1") }
    }

    func run() async throws {
        print("Countersign sealing bench: \(ProcessInfo.processInfo.activeProcessorCount) cores, \(operations) operations × \(rounds) rounds per suite")
        let plaintext = try Self.details().canonicalData()
        print("details: \(plaintext.count) bytes of canonical JSON")
        let p256 = P256.KeyAgreement.PrivateKey()
        try measure(.p256, plaintext, key: .p256(p256.publicKey)) { enc, ciphertext in
            var recipient = try HPKE.Recipient(privateKey: p256, ciphersuite: HPKESuite.countersign,
                                               info: Self.info, encapsulatedKey: enc)
            return try recipient.open(ciphertext, authenticating: Self.aad)
        }
        guard #available(macOS 26, iOS 26, *) else {
            print("\(HPKESuite.xwing.name): not available on this platform (macOS 26 or later)")
            return
        }
        let xwing = try XWingMLKEM768X25519.PrivateKey.generate()
        try measure(.xwing, plaintext, key: .xwing(xwing.publicKey.rawRepresentation)) { enc, ciphertext in
            var recipient = try HPKE.Recipient(privateKey: xwing, ciphersuite: HPKESuite.xwingCiphersuite,
                                               info: Self.info, encapsulatedKey: enc)
            return try recipient.open(ciphertext, authenticating: Self.aad)
        }
    }

    private static let deviceID = "dev_01JD7Q1B4V6Y9N3C5W8Z2K0XHR"
    private static let requestID = "txn_01JD7Q1B4V6Y9N3C5W8Z2K0XHS"
    private static var info: Data { SealedDetails.info(deviceID: deviceID) }
    private static var aad: Data { SealedDetails.additionalData(requestID: requestID) }

    /// A typical request: a payment with a binding message and a number match.
    private static func details() -> TransactionDetails {
        TransactionDetails(
            requestID: requestID, tenant: "default", user: .init(id: "usr_01JD7Q1B4V6Y9N3C5W8Z2K0XHT", name: "ada"),
            client: .init(id: "cli_01JD7Q1B4V6Y9N3C5W8Z2K0XHV", name: "Online banking"),
            bindingMessage: "Pay 42.00 EUR to ACME", scope: ["openid", "payments"], acrValues: ["urn:countersign:acr:number-match"],
            context: .init(ipAddress: "203.0.113.7", userAgent: "Mozilla/5.0 (X11; Linux x86_64) Firefox/132.0"),
            requestedAt: 1_764_000_000, expiresAt: 1_764_000_120, challenge: String(repeating: "c", count: 43),
            verification: .init(factor: .numberMatch, numberMatch: NumberMatch(choices: [17, 42, 88])))
    }

    private func measure(
        _ suite: HPKESuite, _ plaintext: Data, key: SealedDetails.RecipientKey, open: (Data, Data) throws -> Data
    ) throws {
        var sealRounds: [Double] = []
        var openRounds: [Double] = []
        var sealed = try SealedDetails.seal(plaintext, to: key, deviceID: Self.deviceID, requestID: Self.requestID)
        for _ in 0..<rounds {
            let sealStart = ContinuousClock.now
            for _ in 0..<operations {
                sealed = try SealedDetails.seal(plaintext, to: key, deviceID: Self.deviceID, requestID: Self.requestID)
            }
            sealRounds.append((ContinuousClock.now - sealStart).milliseconds * 1000 / Double(operations))
            let (enc, ciphertext) = try sealed.parts()
            let openStart = ContinuousClock.now
            for _ in 0..<operations where try open(enc, ciphertext) != plaintext {
                throw ValidationError("\(suite.name): an opened message differs from what was sealed")
            }
            openRounds.append((ContinuousClock.now - openStart).milliseconds * 1000 / Double(operations))
        }
        let (enc, ciphertext) = try sealed.parts()
        let envelope = try JSONEncoder().encode(sealed)
        print("\(suite.name):")
        print("  seal  \(Self.spread(sealRounds)) µs per device")
        print("  open  \(Self.spread(openRounds)) µs")
        print("  enc \(enc.count) B, ciphertext \(ciphertext.count) B, sealed JSON \(envelope.count) B")
    }

    /// "median (min–max)" over the rounds.
    private static func spread(_ values: [Double]) -> String {
        let sorted = values.sorted()
        return "\(String(format: "%.1f", sorted[sorted.count / 2])) (\(String(format: "%.1f", sorted[0]))–\(String(format: "%.1f", sorted[sorted.count - 1])))"
    }
}
