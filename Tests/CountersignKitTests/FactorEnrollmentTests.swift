import CountersignCore
import Crypto
import Foundation
import Testing
@testable import CountersignKit

/// Enrolling the PIN and biometric factors, and replacing the PIN.
@Suite struct FactorEnrollmentTests {
    static let description = """
        {"device_id":"dev_1","tenant":"acme","user":{"id":"usr_1","username":"ada"},"name":"Ada's terminal",\
        "platform":"linux","status":"active","created_at":"2027-01-15T08:00:00.000Z",\
        "factors":{"pin":true,"biometric":false,"totp":false}}
        """

    @Test func theEnrollmentRequestCarriesThePINAndBiometricPublicKeys() async throws {
        try await withTemporaryRoot { root in
            let fake = FakeEnrollmentServer()
            let server = fake.transport()
            let store = FileKeyStore(root: root)
            let authenticator = CountersignAuthenticator(
                keyStore: store, transport: server, biometricKeys: SoftwareBiometricKeys { _ in .verified })
            let enrollment = try await authenticator.enroll(
                uri: fake.uri, deviceName: "Ada's terminal", platform: .linux,
                factors: EnrollmentFactors(pin: "4921", biometric: true))

            let request = try FakeEnrollmentServer.enrollmentRequest(sentTo: server)
            let salt = try #require(try await store.factorMaterial(.pinSalt, for: enrollment.id))
            let handle = try #require(try await store.factorMaterial(.biometricKey, for: enrollment.id))
            #expect(request.pinKey == ECPublicJWK(try PINKey(pin: "4921", salt: salt).publicKey))
            #expect(request.biometricKey == ECPublicJWK(try P256.Signing.PrivateKey(rawRepresentation: handle).publicKey))
            #expect(request.totp == nil)
            #expect(try await authenticator.localFactors(enrollment.id) == .init(pin: true, biometric: true, totp: false))
        }
    }

    @Test func aBadPINIsRefusedBeforeTheServerIsAsked() async throws {
        try await withTemporaryRoot { root in
            let fake = FakeEnrollmentServer()
            let server = fake.transport()
            let authenticator = CountersignAuthenticator(keyStore: FileKeyStore(root: root), transport: server)
            await #expect(throws: CountersignError.self) {
                try await authenticator.enroll(
                    uri: fake.uri, deviceName: "Ada's terminal", platform: .linux, factors: EnrollmentFactors(pin: "12"))
            }
            #expect(server.requests.isEmpty)
        }
    }

    @Test func aBiometricEnrollmentNeedsBiometricKeys() async throws {
        try await withTemporaryRoot { root in
            let fake = FakeEnrollmentServer()
            let authenticator = CountersignAuthenticator(keyStore: FileKeyStore(root: root), transport: fake.transport())
            let error = await #expect(throws: CountersignError.self) {
                try await authenticator.enroll(
                    uri: fake.uri, deviceName: "Ada's terminal", platform: .linux, factors: EnrollmentFactors(biometric: true))
            }
            guard case .invalidRequest = error else {
                Issue.record("expected invalidRequest, got \(String(describing: error))")
                return
            }
        }
    }

    @Test func changingThePINSignsTheNewKeyWithTheCurrentOneAndKeepsTheNewSalt() async throws {
        try await withTemporaryRoot { root in
            let device = try await FactorDevice.make(in: root)
            let server = FakeServer([{ _ in .json(200, Self.description) }])
            let authenticator = device.authenticator(server)
            let id = device.device.enrollment.id

            _ = try await authenticator.changePIN(id, from: FactorDevice.pin, to: "738201")
            let put = try #require(server.requests.first)
            #expect(put.httpMethod == "PUT")
            #expect(put.url?.absoluteString == ApprovalTests.server + "/device/v1/self/pin")
            let change = try JSONDecoder().decode(PINChange.self, from: try #require(put.httpBody))
            #expect(FactorProof.isValid(
                change.pinSignature, of: FactorProof.pinChangeMessage(deviceID: "dev_1", newKey: change.pinKey),
                by: PINTests.key.publicKey))
            let salt = try #require(try await device.device.store.factorMaterial(.pinSalt, for: id))
            #expect(salt != PINTests.salt)
            #expect(ECPublicJWK(try PINKey(pin: "738201", salt: salt).publicKey) == change.pinKey)
        }
    }

    @Test func aWrongCurrentPINIsThrownWithTheAttemptsRemainingAndKeepsTheSalt() async throws {
        try await withTemporaryRoot { root in
            let device = try await FactorDevice.make(in: root)
            let authenticator = device.authenticator(FakeServer([Replies.refusal(403, "wrong_pin", attemptsRemaining: 1)]))
            let id = device.device.enrollment.id

            await #expect(throws: CountersignError.wrongPIN(attemptsRemaining: 1)) {
                try await authenticator.changePIN(id, from: "1111", to: "738201")
            }
            #expect(try await device.device.store.factorMaterial(.pinSalt, for: id) == PINTests.salt)
        }
    }

    @Test func changingThePINOfAnEnrollmentWithoutOneIsPINNotEnrolled() async throws {
        try await withTemporaryRoot { root in
            let device = try await FactorDevice.make(in: root, withPIN: false)
            let server = FakeServer([{ _ in .json(200, Self.description) }])
            await #expect(throws: CountersignError.pinNotEnrolled) {
                try await device.authenticator(server).changePIN(device.device.enrollment.id, from: "4921", to: "738201")
            }
            #expect(server.requests.isEmpty)
        }
    }
}
