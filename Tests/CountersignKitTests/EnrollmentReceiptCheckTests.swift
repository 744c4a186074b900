import CountersignCore
import Crypto
import Foundation
import Testing
@testable import CountersignKit

/// Each rule an enrollment receipt must pass, checked on receipts signed here.
@Suite struct EnrollmentReceiptCheckTests {
    let serverKey = P256.Signing.PrivateKey()
    let server = "https://auth.example.com/t/acme"
    let sentRequest = "eyJhbGciOiJFUzI1NiJ9.eyJ0aWNrZXQiOiJjc3RfYWJjIn0.c2lnbmF0dXJl"

    var check: EnrollmentReceiptCheck {
        EnrollmentReceiptCheck(
            pinnedThumbprint: ECPublicJWK(serverKey.publicKey).thumbprint, server: server, sentRequest: sentRequest)
    }

    func receipt(server: String? = nil, answering request: String? = nil) -> EnrollmentReceipt {
        EnrollmentReceipt(
            deviceID: "dev_1", tenant: "acme", server: server ?? self.server,
            user: EnrolledUser(id: "usr_1", username: "ada", displayName: nil), deviceName: "Ada's laptop",
            platform: .linux,
            requestDigest: Data(SHA256.hash(data: Data((request ?? sentRequest).utf8))).base64URLEncodedString,
            issuedAt: 1_790_000_000)
    }

    func sign(
        _ payload: Data, type: String = EnrollmentReceipt.type, headerKey: P256.Signing.PublicKey? = nil,
        signer: P256.Signing.PrivateKey? = nil, withJWK: Bool = true
    ) throws -> String {
        var header: [String: JSONValue] = ["typ": .string(type)]
        if withJWK { header["jwk"] = try JSONValue(encoding: ECPublicJWK(headerKey ?? serverKey.publicKey)) }
        return try CompactJWS.sign(header: header, payload: payload, signer: signer ?? serverKey).serialized
    }

    func sign(_ receipt: EnrollmentReceipt) throws -> String {
        try sign(JSONValue(encoding: receipt).canonicalData)
    }

    func expectInvalidServerResponse(_ text: String, sourceLocation: SourceLocation = #_sourceLocation) {
        let error = #expect(throws: CountersignError.self, sourceLocation: sourceLocation) { try check.verify(text) }
        guard case .invalidServerResponse = error else {
            Issue.record("expected invalidServerResponse, got \(String(describing: error))", sourceLocation: sourceLocation)
            return
        }
    }

    @Test func aReceiptFromThePinnedServerForThisRequestIsAccepted() throws {
        let accepted = try check.verify(sign(receipt()))
        #expect(accepted.receipt == receipt())
        #expect(accepted.serverKey == ECPublicJWK(serverKey.publicKey))
    }

    @Test func aReceiptSignedByAnotherServerKeyIsAServerKeyMismatch() throws {
        let impostor = P256.Signing.PrivateKey()
        let text = try sign(JSONValue(encoding: receipt()).canonicalData, headerKey: impostor.publicKey, signer: impostor)
        #expect(throws: CountersignError.serverKeyMismatch) { try check.verify(text) }
    }

    @Test func aReceiptNamingThePinnedKeyButSignedByAnotherIsRefused() throws {
        expectInvalidServerResponse(try sign(JSONValue(encoding: receipt()).canonicalData, signer: P256.Signing.PrivateKey()))
    }

    @Test func aReceiptWithoutAKeyInItsHeaderIsRefused() throws {
        expectInvalidServerResponse(try sign(JSONValue(encoding: receipt()).canonicalData, withJWK: false))
    }

    @Test func aReceiptOfAnotherTypeIsRefused() throws {
        expectInvalidServerResponse(try sign(JSONValue(encoding: receipt()).canonicalData, type: EnrollmentRequest.type))
    }

    @Test func aReceiptForAnotherRequestIsRefused() throws {
        expectInvalidServerResponse(try sign(receipt(answering: sentRequest + "x")))
    }

    @Test func aReceiptNamingAnotherServerIsRefused() throws {
        expectInvalidServerResponse(try sign(receipt(server: "https://auth.example.com/t/other")))
    }

    @Test func aReceiptWhosePayloadIsNotAReceiptIsRefused() throws {
        expectInvalidServerResponse(try sign(Data(#"{"device_id":"dev_1"}"#.utf8)))
    }

    @Test(arguments: ["", "a.b", "not.a.jws", "eyJhbGciOiJub25lIn0.e30."])
    func aReceiptThatIsNotAnES256JWSIsRefused(_ text: String) {
        expectInvalidServerResponse(text)
    }
}
