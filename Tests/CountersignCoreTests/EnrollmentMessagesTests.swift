import CountersignCore
import Crypto
import Foundation
import Testing

/// The JSON shapes of enrollment and device-description messages: snake_case names on the wire.
@Suite struct EnrollmentMessagesTests {
    let signingKey = ECPublicJWK(P256.Signing.PrivateKey().publicKey)
    let encryptionKey = ECPublicJWK(P256.KeyAgreement.PrivateKey().publicKey)
    let user = EnrolledUser(id: "usr_1", username: "ada", displayName: "Ada Lovelace")

    /// The member names of the JSON object `value` encodes to.
    func memberNames(of value: some Encodable, encoder: JSONEncoder = JSONEncoder()) throws -> Set<String> {
        guard case .object(let members) = try JSONValue(parsing: encoder.encode(value)) else {
            Issue.record("\(value) does not encode to a JSON object")
            return []
        }
        return Set(members.keys)
    }

    func request(push: PushRegistration?) -> EnrollmentRequest {
        EnrollmentRequest(
            ticket: "cst_abc", audience: "https://auth.example.com/t/acme", issuedAt: 1_790_000_000,
            deviceName: "Ada's phone", platform: .ios, signingKey: signingKey, encryptionKey: encryptionKey, push: push)
    }

    // MARK: Enrollment request

    @Test func anEnrollmentRequestUsesTheWireNames() throws {
        let names = try memberNames(of: request(push: PushRegistration(provider: .apns, token: "a1b2")))
        #expect(names == ["ticket", "aud", "iat", "device_name", "platform", "signing_key", "encryption_key", "push"])
    }

    @Test func anEnrollmentRequestWithoutPushOmitsIt() throws {
        #expect(!(try memberNames(of: request(push: nil))).contains("push"))
    }

    @Test func anEnrollmentRequestHasItsExactCanonicalForm() throws {
        let value = try JSONValue(encoding: request(push: PushRegistration(provider: .fcm, token: "tok")))
        let jwk = { (key: ECPublicJWK) in #"{"crv":"P-256","kty":"EC","x":"\#(key.x)","y":"\#(key.y)"}"# }
        #expect(value.canonicalString == #"{"aud":"https://auth.example.com/t/acme","device_name":"Ada's phone","#
                + #""encryption_key":\#(jwk(encryptionKey)),"iat":1790000000,"platform":"ios","#
                + #""push":{"provider":"fcm","token":"tok"},"signing_key":\#(jwk(signingKey)),"ticket":"cst_abc"}"#)
    }

    @Test func anEnrollmentRequestDecodesFromItsWireForm() throws {
        let original = request(push: PushRegistration(provider: .apns, token: "a1b2"))
        let decoded = try JSONValue(encoding: original).decode(as: EnrollmentRequest.self)
        #expect(decoded == original)
    }

    @Test func typesOfSignedMessagesAreFixed() {
        #expect(EnrollmentRequest.type == "countersign-enrollment+jwt")
        #expect(EnrollmentReceipt.type == "countersign-enrollment-receipt+jwt")
    }

    // MARK: Receipt and envelopes

    @Test func anEnrollmentReceiptUsesTheWireNames() throws {
        let receipt = EnrollmentReceipt(
            deviceID: "dev_1", tenant: "acme", server: "https://auth.example.com/t/acme", user: user,
            deviceName: "Ada's phone", platform: .android, requestDigest: "digest", issuedAt: 1_790_000_000)
        #expect(try memberNames(of: receipt)
                == ["device_id", "tenant", "server", "user", "device_name", "platform", "request_sha256", "iat"])
        #expect(try JSONValue(encoding: receipt).decode(as: EnrollmentReceipt.self) == receipt)
    }

    @Test func anEnrolledUserUsesTheWireNames() throws {
        #expect(try memberNames(of: user) == ["id", "username", "display_name"])
        #expect(try memberNames(of: EnrolledUser(id: "usr_2", username: "bob", displayName: nil)) == ["id", "username"])
    }

    @Test func envelopesUseTheWireNames() throws {
        #expect(try memberNames(of: EnrollmentSubmission(enrollmentRequest: "jws")) == ["enrollment_request"])
        #expect(try memberNames(of: EnrollmentResponse(enrollmentReceipt: "jws")) == ["enrollment_receipt"])
        #expect(try memberNames(of: DeviceRename(name: "new")) == ["name"])
        #expect(try memberNames(of: PushRegistration(provider: .fcm, token: "t")) == ["provider", "token"])
    }

    // MARK: Device description

    @Test func aDeviceDescriptionUsesTheWireNamesAndTimestamps() throws {
        let description = DeviceDescription(
            deviceID: "dev_1", tenant: "acme", user: user, name: "Ada's phone", platform: .ipados, status: "active",
            push: .init(provider: .apns, tokenSuffix: "…a1b2", valid: true),
            createdAt: Date(timeIntervalSince1970: 1_700_000_000.5), lastSeenAt: Date(timeIntervalSince1970: 1_700_000_060))
        let value = try JSONValue(parsing: Timestamps.encoder().encode(description))
        guard case .object(let members) = value else { Issue.record("not an object"); return }
        #expect(Set(members.keys)
                == ["device_id", "tenant", "user", "name", "platform", "status", "push", "created_at", "last_seen_at"])
        #expect(value["push"] == .object(["provider": .string("apns"), "token_suffix": .string("…a1b2"), "valid": .bool(true)]))
        #expect(value["created_at"] == .string("2023-11-14T22:13:20.500Z"))
        #expect(value["last_seen_at"] == .string("2023-11-14T22:14:20.000Z"))
        let decoded = try Timestamps.decoder().decode(DeviceDescription.self, from: Timestamps.encoder().encode(description))
        #expect(decoded == description)
    }

    @Test func aDeviceNeverSeenAndWithoutPushOmitsThoseMembers() throws {
        let description = DeviceDescription(
            deviceID: "dev_1", tenant: "acme", user: user, name: "laptop", platform: .linux, status: "active",
            push: nil, createdAt: Date(timeIntervalSince1970: 0), lastSeenAt: nil)
        let names = try memberNames(of: description, encoder: Timestamps.encoder())
        #expect(!names.contains("push") && !names.contains("last_seen_at"))
    }

    // MARK: Enumerations

    @Test func platformsAndProvidersHaveStableRawValues() {
        #expect(DevicePlatform.allCases.map(\.rawValue) == ["ios", "ipados", "macos", "android", "linux", "windows", "other"])
        #expect(PushRegistration.Provider.allCases.map(\.rawValue) == ["apns", "fcm"])
    }

    @Test func anUnknownPlatformIsRefused() {
        #expect(throws: DecodingError.self) { try JSONDecoder().decode(DevicePlatform.self, from: Data(#""beos""#.utf8)) }
    }
}
