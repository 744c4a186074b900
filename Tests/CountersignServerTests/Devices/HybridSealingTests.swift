import CountersignCore
import CountersignKit
import Crypto
import Foundation
import Testing
@testable import CountersignServer

@Suite("Post-quantum hybrid sealing (X-Wing)")
struct HybridSealingTests {
    @Test("an X-Wing device and a P-256 device of one user are served in one fan-out, each with its strongest suite",
          .enabled(if: HPKESuite.xwingAvailable))
    func mixedFanOut() async throws {
        try await TestServer.routed { server in
            let client = try await server.createClient()
            let ada = try await server.enrolledUser("ada")
            let older = try await server.enrollFactorDevice(for: ada.userID)
            let authReqID = try await server.startApproval(client, user: "ada")

            let request = try #require(try await ada.kit.pendingRequests().first)
            #expect(request.sealedDetails.suite == HPKESuite.xwing.name)
            #expect(try request.sealedDetails.parts().encapsulatedKey.count == 1120)
            // The hand-built device announced no X-Wing key: its copy is sealed to its P-256 key.
            let (envelope, olderDetails, _) = try await older.newest()
            #expect(envelope.details.suite == HPKESuite.p256.name)
            let details = try await ada.kit.details(for: request)
            #expect(details.transaction == olderDetails, "both devices show the same details")
            #expect(details.digest == TransactionDetails.digest(of: try olderDetails.canonicalData()))

            _ = try await ada.kit.approve(details)
            server.clock.advance(by: 6)
            #expect(try await server.token(client, authReqID).status == 200)
        }
    }

    @Test("a tenant that turns post-quantum sealing off seals to P-256 keys only, which every device opens")
    func tenantTurnsItOff() async throws {
        try await TestServer.routed { server in
            try await server.setPolicy(["post_quantum_sealing": false])
            let client = try await server.createClient()
            let ada = try await server.enrolledUser("ada")
            _ = try await server.startApproval(client, user: "ada")
            let request = try #require(try await ada.kit.pendingRequests().first)
            #expect(request.sealedDetails.suite == HPKESuite.p256.name)
            _ = try await ada.kit.approve(try await ada.kit.details(for: request))
        }
    }

    @Test("an enrollment's X-Wing key that is not one is refused, naming the member; nothing is enrolled",
          arguments: ["", "AAAA", String(repeating: "A", count: 1621), "not base64!"])
    func badXWingKey(key: String) async throws {
        try await TestServer.routed { server in
            let userID = try await server.createUser("ada")
            let (answer, device) = try await server.enrollmentAttempt(for: userID, xwingKey: key)
            #expect(device == nil)
            #expect(answer.status == 400 && answer.error == "invalid_key", "\(answer.error ?? "") \(answer.errorDescription ?? "")")
            #expect(answer.errorDescription?.contains("xwing_key") == true)
            let devices = try await server.admin("GET", "/admin/v1/tenants/default/users/\(userID)/devices")
            #expect((devices["items"] as? [Any])?.isEmpty == true)
        }
    }

    @Test("details sealed with X-Wing open only with the key they were sealed to, for that device and request")
    @available(macOS 26, iOS 26, *)
    func xwingBinding() throws {
        let key = try XWingMLKEM768X25519.PrivateKey.generate()
        let plaintext = Data("{\"v\":1}".utf8)
        let sealed = try SealedDetails.seal(plaintext, to: .xwing(key.publicKey.rawRepresentation), deviceID: "dev_1", requestID: "txn_1")
        let (enc, ciphertext) = try sealed.parts()
        func open(_ key: XWingMLKEM768X25519.PrivateKey, device: String, request: String) throws -> Data {
            var recipient = try HPKE.Recipient(
                privateKey: key, ciphersuite: HPKESuite.xwingCiphersuite, info: SealedDetails.info(deviceID: device),
                encapsulatedKey: enc)
            return try recipient.open(ciphertext, authenticating: SealedDetails.additionalData(requestID: request))
        }
        #expect(try open(key, device: "dev_1", request: "txn_1") == plaintext)
        #expect(throws: (any Error).self) { try open(key, device: "dev_2", request: "txn_1") }
        #expect(throws: (any Error).self) { try open(key, device: "dev_1", request: "txn_2") }
        #expect(throws: (any Error).self) { try open(try XWingMLKEM768X25519.PrivateKey.generate(), device: "dev_1", request: "txn_1") }
    }
}
