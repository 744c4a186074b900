import CountersignCore
import Crypto
import Foundation
@testable import CountersignKit
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The enrollment endpoints of a server, answered the way the protocol says: the server key,
/// and a signed receipt for whatever enrollment request arrives, with a TOTP seed when asked.
struct FakeEnrollmentServer {
    static let server = "https://auth.example.com/t/acme"
    static let deviceID = "dev_1"

    /// How the TOTP seed is sent when the device asks for one.
    enum SeedDelivery: Sendable {
        /// As the protocol says.
        case faithful
        /// The receipt signs the digest of other parameters than those sent.
        case tamperedDigest
        /// Sealed to the device's key but for another device id.
        case sealedForAnotherDevice
    }

    let serverKey = P256.Signing.PrivateKey()
    let seed = Data((0..<20).map { UInt8($0 * 7 % 256) })

    var uri: String {
        EnrollmentURI(
            server: URL(string: Self.server)!, ticket: "cst_abc", serverKeyThumbprint: ECPublicJWK(serverKey.publicKey).thumbprint
        ).description
    }

    func transport(seedDelivery: SeedDelivery = .faithful) -> FakeServer {
        FakeServer { request in
            if request.url!.path.hasSuffix("/server-key") {
                return .json(200, try! ApprovalTests.json(ServerKeyResponse(key: ECPublicJWK(serverKey.publicKey))))
            }
            return .json(200, try! ApprovalTests.json(answer(request, seedDelivery: seedDelivery)))
        }
    }

    /// The enrollment request a device sent through `server`.
    static func enrollmentRequest(sentTo server: FakeServer) throws -> EnrollmentRequest {
        let post = server.requests.first { $0.url!.path.hasSuffix("/enrollments") }!
        let submission = try JSONDecoder().decode(EnrollmentSubmission.self, from: post.httpBody!)
        return try JSONDecoder().decode(
            EnrollmentRequest.self, from: CompactJWS(parsing: submission.enrollmentRequest).payload)
    }

    private func answer(_ request: URLRequest, seedDelivery: SeedDelivery) throws -> EnrollmentResponse {
        let submission = try JSONDecoder().decode(EnrollmentSubmission.self, from: request.httpBody!)
        let enrollment = try JSONDecoder().decode(
            EnrollmentRequest.self, from: CompactJWS(parsing: submission.enrollmentRequest).payload)
        var totp: TOTPEnrollment?
        var digest: String?
        if enrollment.totp == true {
            let sealedFor = seedDelivery == .sealedForAnotherDevice ? "dev_2" : Self.deviceID
            let sealed = try SealedDetails.sealTOTPSeed(
                seed, to: enrollment.encryptionKey.agreementKey(), deviceID: sealedFor)
            totp = TOTPEnrollment(algorithm: .sha1, digits: 6, period: 30, sealedSeed: sealed)
            var signed = totp!
            if seedDelivery == .tamperedDigest { signed.digits = 8 }
            digest = try signed.digest()
        }
        let receipt = EnrollmentReceipt(
            deviceID: Self.deviceID, tenant: "acme", server: Self.server,
            user: EnrolledUser(id: "usr_1", username: "ada", displayName: nil), deviceName: enrollment.deviceName,
            platform: enrollment.platform,
            requestDigest: Data(SHA256.hash(data: Data(submission.enrollmentRequest.utf8))).base64URLEncodedString,
            issuedAt: 1_800_000_000, totpDigest: digest)
        let signed = try CompactJWS.sign(
            header: ["typ": .string(EnrollmentReceipt.type), "jwk": JSONValue(encoding: ECPublicJWK(serverKey.publicKey))],
            payload: JSONValue(encoding: receipt).canonicalData, signer: serverKey)
        return EnrollmentResponse(enrollmentReceipt: signed.serialized, totp: totp)
    }
}
