import CountersignCore
import CountersignKit
import Foundation
import Testing
@testable import CountersignServer

/// `Tests/Peers/verify_receipt.py`: a receipt checked with the tenant's JWKS alone by joserfc,
/// a JOSE library independent of the server's.
struct ReceiptVerifierPeer {
    static let script = BuildProducts.packageRoot.appendingPathComponent("Tests/Peers/verify_receipt.py")

    /// python3 able to import joserfc, or nil after saying on stderr why the check is skipped.
    static let python: URL? = {
        guard let python = ChildProcess.find("python3") else { return skipped(because: "python3 was not found on PATH") }
        guard (try? ChildProcess.runBlocking(python, ["-c", "import joserfc"])) != nil else {
            return skipped(because: "\(python.path) cannot import joserfc (pip install joserfc)")
        }
        return python
    }()

    private static func skipped(because reason: String) -> URL? {
        FileHandle.standardError.write(Data("DeviceCertificateTests: the independent check is SKIPPED: \(reason)\n".utf8))
        #expect(ProcessInfo.processInfo.environment["CI"] != "true", "CI must run the independent receipt check")
        return nil
    }

    /// The verifier's verdict: status 0 and the facts it printed, or its refusal.
    static func verify(receipt: Data, jwks: Data, issuer: String, clientID: String) async throws -> ChildProcess.Finished? {
        guard let python else { return nil }
        let input = "{\"receipt\":\(String(decoding: receipt, as: UTF8.self)),\"jwks\":\(String(decoding: jwks, as: UTF8.self)),"
            + "\"issuer\":\"\(issuer)\",\"client_id\":\"\(clientID)\"}"
        return try await ChildProcess.result(python, [script.path], input: input)
    }
}

@Suite("Device certificates: receipts that verify with the JWKS alone")
struct DeviceCertificateTests {
    private func receipt(_ server: TestServer, _ client: TestClient, _ authReqID: String) async throws -> TestServer.Answer {
        let receipt = try await server.form("/bc-authorize/receipt", [("auth_req_id", authReqID)], basic: client)
        #expect(receipt.status == 200, "\(receipt.error ?? "") \(receipt.errorDescription ?? "")")
        return receipt
    }

    @Test("enrollment returns a certificate binding the device key to the user, signed with a published token key")
    func issuedAtEnrollment() async throws {
        try await TestServer.routed { server in
            let userID = try await server.createUser("ada")
            let device = try await server.enrollFactorDevice(for: userID, pin: true)
            let devices = try await server.admin("GET", "/admin/v1/tenants/default/users/\(userID)/devices")
            #expect((devices["items"] as? [Any])?.count == 1)
            let stored = try #require(try await server.storedDevice(device.deviceID)?.certificate)
            let (type, claims) = try server.verifiedClaims(stored, keys: try await server.jwks())
            #expect(type == DeviceCertificate.type)
            #expect(claims["sub"] as? String == userID && claims["device_id"] as? String == device.deviceID)
            #expect(claims["tenant"] as? String == "default" && claims["iss"] as? String == server.base)
            let cnf = try #require((claims["cnf"] as? [String: any Sendable])?["jwk"] as? [String: any Sendable])
            #expect(cnf["x"] as? String == ECPublicJWK(device.signing.publicKey).x)
            let factorKeys = try #require(claims["factor_keys"] as? [String: any Sendable])
            #expect((factorKeys["pin"] as? [String: any Sendable])?["x"] as? String == device.pin.map { ECPublicJWK($0.publicKey).x })
        }
    }

    @Test("a receipt verifies with the JWKS alone in an independent JOSE library; altered, it does not")
    func independentVerification() async throws {
        try await TestServer.routed { server in
            let client = try await server.createClient()
            let ivy = try await server.enrolledUser("ivy")
            let authReqID = try await server.startApproval(client, user: "ivy", bindingMessage: "Transfer 10 EUR")
            #expect(try await ivy.device.decideNewest(.approve).status == 200)
            let receipt = try await receipt(server, client, authReqID)
            let jwks = try await server.call("GET", "/jwks").data
            guard let verdict = try await ReceiptVerifierPeer.verify(receipt: receipt.data, jwks: jwks, issuer: server.base,
                                                               clientID: client.id) else { return }
            #expect(verdict.status == 0, "\(verdict.output)")
            let facts = try #require(try JSONSerialization.jsonObject(with: Data(verdict.output.utf8)) as? [String: Any])
            #expect(facts["sub"] as? String == ivy.userID && facts["device_id"] as? String == ivy.device.id)
            #expect(facts["decision"] as? String == "approve")
            #expect((facts["details"] as? [String: Any])?["binding_message"] as? String == "Transfer 10 EUR")

            // The same receipt with other details, another user's certificate, or a stranger's JWKS.
            var object = try #require(try JSONSerialization.jsonObject(with: receipt.data) as? [String: Any])
            let details = try #require(object["details"] as? String)
            object["details"] = details.replacingOccurrences(of: "Transfer 10 EUR", with: "Transfer 99 EUR")
            let altered = try await ReceiptVerifierPeer.verify(
                receipt: try JSONSerialization.data(withJSONObject: object), jwks: jwks, issuer: server.base, clientID: client.id)
            #expect(altered?.status == 1 && altered?.output.contains("the device signed other details") == true)

            let bob = try await server.enrolledUser("bob")
            object["details"] = details
            object["device_certificate"] = try #require(try await server.storedDevice(bob.device.id)?.certificate)
            let swapped = try await ReceiptVerifierPeer.verify(
                receipt: try JSONSerialization.data(withJSONObject: object), jwks: jwks, issuer: server.base, clientID: client.id)
            #expect(swapped?.status == 1, "\(swapped?.output ?? "")")

            let stranger = Data(#"{"keys":[]}"#.utf8)
            let unknownKey = try await ReceiptVerifierPeer.verify(receipt: receipt.data, jwks: stranger, issuer: server.base,
                                                            clientID: client.id)
            #expect(unknownKey?.status == 1 && unknownKey?.output.contains("countersign-device+jwt") == true)
        }
    }

    @Test("a receipt signed before its key was retired verifies with /jwks/archive, independently too; a new receipt carries a certificate of the current key")
    func receiptsOutliveTheirKey() async throws {
        try await TestServer.routed { server in
            let client = try await server.createClient()
            let ivy = try await server.enrolledUser("ivy")
            let authReqID = try await server.startApproval(client, user: "ivy", bindingMessage: "Transfer 10 EUR")
            #expect(try await ivy.device.decideNewest(.approve).status == 200)
            let archived = try await receipt(server, client, authReqID)
            let certificate = try #require(archived["device_certificate"] as? String)
            let oldKID = try #require(try CompactJWS(parsing: certificate).keyID)

            // A rotation, the new key signing, and the old key retired once its tokens expired.
            server.clock.advance(by: 90 * 86_400 + 1)
            #expect(try await server.jwks().count == 2)
            server.clock.advance(by: 301)
            _ = try await server.jwks()
            server.clock.advance(by: 600)
            let published = try await server.jwks()
            #expect(published[oldKID] == nil && published.count == 1)
            let every = try await server.jwks(path: "/jwks/archive")
            #expect(Set(every.keys) == Set(published.keys).union([oldKID]))
            _ = try server.verifiedClaims(certificate, keys: every)

            let archive = try await server.call("GET", "/jwks/archive")
            #expect(archive.header("Cache-Control") == "public, max-age=300")
            if let verdict = try await ReceiptVerifierPeer.verify(receipt: archived.data, jwks: archive.data, issuer: server.base,
                                                            clientID: client.id) {
                #expect(verdict.status == 0, "\(verdict.output)")
                let current = try await server.call("GET", "/jwks").data
                let refused = try await ReceiptVerifierPeer.verify(receipt: archived.data, jwks: current, issuer: server.base,
                                                             clientID: client.id)
                #expect(refused?.status == 1, "the retired key is no longer in /jwks")
            }

            // Asked again, the receipt carries a certificate made with the key now published.
            let again = try await receipt(server, client, authReqID)
            let reissued = try #require(again["device_certificate"] as? String)
            #expect(reissued != certificate)
            _ = try server.verifiedClaims(reissued, keys: published)
        }
    }

    @Test("a PIN change drops the certificate; the next receipt carries a new one with the new PIN key")
    func reissuedWhenFactorsChange() async throws {
        try await TestServer.routed { server in
            let client = try await server.createClient()
            let (kit, _) = server.authenticator()
            let userID = try await server.createUser("ada")
            let enrollment = try await kit.enroll(uri: try await server.enrollmentURI(for: userID), deviceName: "phone",
                                                  platform: .linux, factors: .init(pin: "2468"))
            let first = try #require(try await server.storedDevice(enrollment.deviceID)?.certificate)
            _ = try await kit.changePIN(enrollment.id, from: "2468", to: "1357")
            #expect(try await server.storedDevice(enrollment.deviceID)?.certificate == nil)

            let authReqID = try await server.startApproval(client, user: "ada")
            _ = try await kit.approve(try await kit.details(for: try #require(try await kit.pendingRequests().first)))
            let receipt = try await receipt(server, client, authReqID)
            let second = try #require(receipt["device_certificate"] as? String)
            #expect(second != first)
            #expect(try await server.storedDevice(enrollment.deviceID)?.certificate == second)
            let keys = try await server.jwks()
            let before = try server.verifiedClaims(first, keys: keys).claims["factor_keys"] as? [String: any Sendable]
            let after = try server.verifiedClaims(second, keys: keys).claims["factor_keys"] as? [String: any Sendable]
            #expect((before?["pin"] as? [String: any Sendable])?["x"] as? String
                    != (after?["pin"] as? [String: any Sendable])?["x"] as? String)
        }
    }
}

extension TestServer {
    /// The device as stored.
    func storedDevice(_ id: String) async throws -> Device? {
        try await SQLDeviceRepository().find(id: id, on: database)
    }
}
