import CountersignCore
import Crypto
import Foundation
import Testing

@Suite("Deregistration notices")
struct DeregistrationNoticeTests {
    private func signed(_ payload: String, key: P256.Signing.PrivateKey) throws -> String {
        try CompactJWS.sign(header: ["typ": .string(DeregistrationNotice.type)], payload: Data(payload.utf8), signer: key)
            .serialized
    }

    @Test("a known reason is read; one this version does not know is read as none, and the notice still counts")
    func reasons() throws {
        let key = P256.Signing.PrivateKey()
        let known = try signed(
            #"{"device_id":"dev_1","iat":1,"jti":"n1","reason":"pin_attempts_exceeded","status":"deleted"}"#, key: key)
        let unknown = try signed(
            #"{"device_id":"dev_1","iat":1,"jti":"n1","reason":"moved_to_the_moon","status":"deleted"}"#, key: key)
        let jwk = ECPublicJWK(key.publicKey)
        #expect(DeregistrationNotice.verified(known, serverKey: jwk, deviceID: "dev_1", nonce: "n1")?.reason == .pinAttemptsExceeded)
        let lenient = try #require(DeregistrationNotice.verified(unknown, serverKey: jwk, deviceID: "dev_1", nonce: "n1"))
        #expect(lenient.reason == nil && lenient.status == .deleted)
    }
}
