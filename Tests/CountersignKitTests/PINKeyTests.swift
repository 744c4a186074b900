import CountersignCore
import Crypto
import Foundation
import Testing
@testable import CountersignKit

/// The PIN as a key: derived the same way each time, different for each PIN, and nothing kept
/// on the device that a guess could be checked against.
@Suite struct PINKeyTests {
    static let salt = Data((0..<32).map { UInt8($0) })

    @Test func theSamePINAndSaltDeriveTheSameKey() throws {
        let first = try PINKey(pin: "4921", salt: Self.salt)
        let second = try PINKey(pin: "4921", salt: Self.salt)
        #expect(first.publicKey.rawRepresentation == second.publicKey.rawRepresentation)
    }

    @Test func anotherPINDerivesAnotherKey() throws {
        let right = try PINKey(pin: "4921", salt: Self.salt)
        let wrong = try PINKey(pin: "4922", salt: Self.salt)
        #expect(right.publicKey.rawRepresentation != wrong.publicKey.rawRepresentation)
    }

    @Test func anotherSaltDerivesAnotherKey() throws {
        let first = try PINKey(pin: "4921", salt: Self.salt)
        let second = try PINKey(pin: "4921", salt: PINKey.newSalt())
        #expect(first.publicKey.rawRepresentation != second.publicKey.rawRepresentation)
    }

    @Test func newSaltsAreThirtyTwoRandomBytes() {
        let salts = Set((0..<8).map { _ in PINKey.newSalt() })
        #expect(salts.count == 8)
        #expect(salts.allSatisfy { $0.count == 32 })
    }

    @Test(arguments: ["", "123", "1234567890123", "12a4", "12 34", "-1234", "\u{0661}\u{0662}\u{0663}\u{0664}", "１２３４"])
    func aPINThatIsNotFourToTwelveASCIIDigitsIsAnInvalidRequest(_ pin: String) {
        #expect {
            try PINKey.validate(pin)
        } throws: { error in
            guard case CountersignError.invalidRequest = error else { return false }
            return true
        }
    }

    @Test(arguments: ["0000", "4921", "123456789012"])
    func fourToTwelveDigitsAreAPIN(_ pin: String) {
        #expect(throws: Never.self) { try PINKey.validate(pin) }
    }

    @Test func anEnrollmentKeepsOnlyTheSaltAndNothingThatChecksAPIN() async throws {
        try await withTemporaryRoot { root in
            let fake = FakeEnrollmentServer()
            let server = fake.transport()
            let authenticator = CountersignAuthenticator(
                keyStore: FileKeyStore(root: root), transport: server, now: { ApprovalTests.now })
            let enrollment = try await authenticator.enroll(
                uri: fake.uri, deviceName: "Ada's terminal", platform: .linux, factors: EnrollmentFactors(pin: "73915208"))

            let pinKey = try #require(try FakeEnrollmentServer.enrollmentRequest(sentTo: server).pinKey)
            let publicKey = try pinKey.signingKey()
            let forbidden = [
                publicKey.rawRepresentation, publicKey.x963Representation, publicKey.compressedRepresentation,
                try #require(Data(base64URLEncoded: pinKey.x)), try #require(Data(base64URLEncoded: pinKey.y)),
                Data(pinKey.x.utf8), Data(pinKey.y.utf8), Data("73915208".utf8),
            ]
            let directory = root.appendingPathComponent(enrollment.id)
            let files = contents(of: directory)
            #expect(files.contains("pin-salt"))
            for file in files {
                let bytes = try Data(contentsOf: directory.appendingPathComponent(file))
                for needle in forbidden {
                    #expect(bytes.range(of: needle) == nil, "\(file) holds bytes of the PIN key or the PIN")
                }
            }
            let salt = try Data(contentsOf: directory.appendingPathComponent("pin-salt"))
            #expect(salt.count == 32)
            #expect(ECPublicJWK(try PINKey(pin: "73915208", salt: salt).publicKey) == pinKey)
        }
    }
}
