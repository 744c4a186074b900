import ArgumentParser
import CountersignCore
import CountersignKit
import Crypto
import Foundation

/// What the factors cost, piece by piece: deriving a PIN key on the device (the price of each
/// guess, for the user and for anyone holding a copy of the device's storage alike), the
/// server's check of a factor signature over an answer, and one TOTP code.
struct FactorBench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "factors", abstract: "Benchmark PIN key derivation, factor-proof checks and TOTP codes.")

    @Option(help: "PIN key derivations to time.") var derivations = 20
    @Option(help: "Factor-proof checks and TOTP codes to time.") var checks = 20000

    func run() async throws {
        print("Countersign factor bench: \(ProcessInfo.processInfo.activeProcessorCount) cores")
        let salt = PINKey.newSalt()
        var times: [Double] = []
        var key = try PINKey(pin: "24680", salt: salt)
        for index in 0..<derivations {
            let start = ContinuousClock.now
            key = try PINKey(pin: String(format: "%05d", index), salt: salt)
            times.append((ContinuousClock.now - start).milliseconds)
        }
        times.sort()
        print("PIN key derivation (scrypt N=2^15 r=8 p=1, then HKDF): n=\(derivations) p50=\(format(times[times.count / 2])) ms max=\(format(times.last ?? 0)) ms → \(format(1000 / times[times.count / 2])) guesses/s per core")

        let response = String(repeating: "e", count: 600)
        let message = FactorProof.message(factor: .pin, response: response)
        let signature: P256.Signing.ECDSASignature = try key.privateKey.signature(for: message)
        let encoded = signature.rawRepresentation.base64URLEncodedString
        var valid = 0
        let verifyStart = ContinuousClock.now
        for _ in 0..<checks where FactorProof.isValid(encoded, of: message, by: key.publicKey) { valid += 1 }
        let verify = (ContinuousClock.now - verifyStart).milliseconds
        print("factor proof check (ES256 over a 600-byte answer): n=\(checks) \(format(verify * 1000 / Double(checks))) µs each (\(valid) valid)")

        let totp = TOTP(secret: Data(repeating: 7, count: 20))
        let now = Date()
        let totpStart = ContinuousClock.now
        var matched = 0
        for _ in 0..<checks where totp.matchingStep(of: "000000", at: now) != nil { matched += 1 }
        let window = (ContinuousClock.now - totpStart).milliseconds
        print("TOTP check of one code over ±1 step: n=\(checks) \(format(window * 1000 / Double(checks))) µs each")
    }
}
