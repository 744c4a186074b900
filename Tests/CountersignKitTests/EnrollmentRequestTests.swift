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

    func signedRequest(accessToken: String? = nil) throws -> CompactJWS {
        let credential: EnrollmentExchange.Credential = accessToken.map { .accessToken($0) }
            ?? .ticket(uri.ticket, serverKeyThumbprint: uri.serverKeyThumbprint)
        let exchange = EnrollmentExchange(
            server: uri.server, credential: credential, endpoints: try #require(DeviceEndpoints(server: uri.server)),
            deviceName: "Ada's phone", platform: .android, push: push)
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

    @Test func anAccessTokenIsNamedByItsHashAndNoTicketIsSent() throws {
        let request = try JSONDecoder().decode(EnrollmentRequest.self, from: signedRequest(accessToken: "eyJ.token.sig").payload)
        #expect(request.ticket == nil)
        // RFC 9449 §4.2's ath: base64url SHA-256 of the token's ASCII.
        #expect(request.accessTokenHash == Data(SHA256.hash(data: Data("eyJ.token.sig".utf8))).base64URLEncodedString)
    }

    @Test func thePayloadIsCanonicalJSON() throws {
        let payload = try signedRequest().payload
        #expect(try JSONValue(parsing: payload).canonicalData == payload)
    }
}
