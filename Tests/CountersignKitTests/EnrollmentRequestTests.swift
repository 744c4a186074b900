import CountersignCore
import Crypto
import Foundation
import Testing
@testable import CountersignKit

/// The enrollment request a device sends, checked the way the server will check it.
@Suite struct EnrollmentRequestTests {
    let uri = EnrollmentURI(
        server: URL(string: "http://127.0.0.1:8080/t/acme")!, ticket: "cst_abc",
        serverKeyThumbprint: ECPublicJWK(P256.Signing.PrivateKey().publicKey).thumbprint)
    let keys = DeviceKeys(signer: P256.Signing.PrivateKey(), agreement: P256.KeyAgreement.PrivateKey())
    let push = PushRegistration(provider: .fcm, token: "fcm-token")

    func signedRequest() throws -> CompactJWS {
        let exchange = EnrollmentExchange(
            uri: uri, endpoints: try #require(DeviceEndpoints(server: uri.server)), deviceName: "Ada's phone",
            platform: .android, push: push)
        return try CompactJWS(parsing: exchange.signedRequest(keys: keys, issuedAt: Date(timeIntervalSince1970: 1_790_000_000.9)))
    }

    @Test func theRequestIsSignedByTheKeyInItsHeader() throws {
        let jws = try signedRequest()
        #expect(jws.type == EnrollmentRequest.type)
        let jwk = try #require(jws.header["jwk"]).decode(as: ECPublicJWK.self)
        #expect(jwk == ECPublicJWK(keys.signer.publicKey))
        #expect(jws.isValid(for: try jwk.signingKey()))
    }

    @Test func thePayloadCarriesTheTicketAudienceKeysAndPush() throws {
        let request = try JSONDecoder().decode(EnrollmentRequest.self, from: signedRequest().payload)
        #expect(request == EnrollmentRequest(
            ticket: "cst_abc", audience: "http://127.0.0.1:8080/t/acme", issuedAt: 1_790_000_000,
            deviceName: "Ada's phone", platform: .android, signingKey: ECPublicJWK(keys.signer.publicKey),
            encryptionKey: ECPublicJWK(keys.agreement.publicKey), push: push))
    }

    @Test func thePayloadIsCanonicalJSON() throws {
        let payload = try signedRequest().payload
        #expect(try JSONValue(parsing: payload).canonicalData == payload)
    }
}
