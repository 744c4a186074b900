import CountersignCore
import CountersignWebAuthn
import Foundation
import Testing
@testable import CountersignServer

/// The FIDO metadata and the tenant's passkey rules at registration: the BLOB loaded through the
/// admin API on either engine, models the metadata reports revoked refused, attestation trusted
/// through a model's metadata roots, AAGUIDs allowed and denied, device-bound only, rules of a
/// group for its members alone, and the passkeys a changed policy no longer allows listed.
@Suite("Passkeys: FIDO metadata and passkey governance")
struct PasskeyGovernanceTests {
    static let good = "4c1f0b1e-2a3b-4c5d-8e9f-a0b1c2d3e4f5"
    static let revoked = "ee882879-721c-4913-9775-3dfcce97072a"
    static let unknown = "11111111-2222-4333-8444-555555555555"

    /// A metadata service, the file its BLOB is read from, and the two models it describes.
    struct Metadata: Sendable {
        let service: TestMetadataService
        let file: URL
        let good: TestAuthenticatorModel
        let revoked: TestAuthenticatorModel

        init() throws {
            service = try TestMetadataService()
            file = FileManager.default.temporaryDirectory.appendingPathComponent("countersign-mds-\(UUID().uuidString).jwt")
            good = try TestAuthenticatorModel(aaguid: PasskeyGovernanceTests.good)
            revoked = try TestAuthenticatorModel(aaguid: PasskeyGovernanceTests.revoked)
            try write(serial: 10)
        }

        /// Writes a BLOB of `serial` describing both models, due `nextUpdate`.
        func write(serial: Int, nextUpdate: String = TestMetadataService.day(30), revokedStatus: String = "REVOKED") throws {
            let entries = [
                try TestMetadataService.entry(aaguid: PasskeyGovernanceTests.good, description: "Countersign Test Key", roots: [good.ca.certificate]),
                try TestMetadataService.entry(
                    aaguid: PasskeyGovernanceTests.revoked, description: "Withdrawn Test Key",
                    statuses: [("FIDO_CERTIFIED_L1", "2023-01-01"), (revokedStatus, "2025-01-01")], roots: [revoked.ca.certificate]),
            ]
            let blob = try service.blob(TestMetadataService.payload(serial: serial, nextUpdate: nextUpdate, entries: entries))
            try Data(blob.utf8).write(to: file)
        }

        var configuration: MetadataConfiguration { MetadataConfiguration(source: file.path, roots: [service.root.certificate]) }
    }

    static func refresh(_ server: TestServer) async throws -> TestServer.Answer {
        try await server.admin("POST", "/admin/v1/authenticator-metadata/refresh")
    }

    /// Makes sure the BLOB of `serial` is loaded: a server that runs its services loads the
    /// first one as it starts (and a refresh meanwhile answers `busy`); one driven through its
    /// router alone is asked to.
    static func loaded(_ server: TestServer, serial: Int = 10) async throws {
        let refreshed = try await refresh(server)
        #expect(refreshed.status == 200, "\(refreshed.text)")
        try await eventually("the metadata BLOB \(serial) is loaded") {
            try await server.admin("GET", "/admin/v1/authenticator-metadata")["serial"] as? Int == serial
        }
    }

    @Test("The BLOB loads through the admin API on either engine; a BLOB of the same serial changes nothing; an older, a stale or a tampered one is refused with the reason, and the loaded entries stay",
          arguments: Engine.available)
    func loadingTheBLOB(engine: Engine) async throws {
        let metadata = try Metadata()
        try await TestServer.with(engine, configure: { $0.metadata = metadata.configuration }) { server in
            try await Self.loaded(server)
            let status = try await server.admin("GET", "/admin/v1/authenticator-metadata")
            #expect(status["configured"] as? Bool == true && status["entries"] as? Int == 2 && status["stale"] as? Bool == false)
            #expect(status["source"] as? String == metadata.file.path)
            #expect(status["next_update"] as? String == TestMetadataService.day(30))

            let model = try await server.admin("GET", "/admin/v1/authenticator-metadata/\(Self.revoked.uppercased())")
            #expect(model.status == 200, "\(model.text)")
            #expect(model["description"] as? String == "Withdrawn Test Key")
            #expect(model["status"] as? String == "REVOKED" && model["refused"] as? Bool == true)
            #expect((model["statement"] as? [String: any Sendable])?["frrThreshold"] as? Double == 0.002)
            #expect(try await server.admin("GET", "/admin/v1/authenticator-metadata/\(Self.unknown)").status == 404)
            #expect(try await server.admin("GET", "/admin/v1/authenticator-metadata/not-an-aaguid").status == 400)

            let unchanged = try await Self.refresh(server)
            #expect(unchanged.status == 200 && unchanged["outcome"] as? String == "unchanged", "\(unchanged.text)")
            #expect((unchanged["state"] as? [String: any Sendable])?["serial"] as? Int == 10)

            for (serial, nextUpdate, reason) in [
                (9, TestMetadataService.day(30), "serial number 9 is not above the loaded one, 10"),
                (11, TestMetadataService.day(-2), "is stale"),
            ] {
                try metadata.write(serial: serial, nextUpdate: nextUpdate)
                let refused = try await Self.refresh(server)
                #expect(refused.status == 502 && refused.error == "metadata_not_loaded", "\(refused.text)")
                #expect(refused.errorDescription?.contains(reason) == true, "\(refused.errorDescription ?? "")")
                let status = try await server.admin("GET", "/admin/v1/authenticator-metadata")
                #expect(status["serial"] as? Int == 10, "the loaded BLOB stays")
                #expect((status["last_error"] as? String)?.contains(reason) == true)
            }
            try Data("eyJhbGciOiJFUzI1NiJ9.e30.c2ln".utf8).write(to: metadata.file)
            #expect(try await Self.refresh(server).status == 502)
            #expect(try await server.admin("GET", "/admin/v1/authenticator-metadata/\(Self.good)").status == 200,
                    "the entries of the loaded BLOB are still there")

            try metadata.write(serial: 12, revokedStatus: "FIDO_CERTIFIED_L2")
            #expect(try await Self.refresh(server)["outcome"] as? String == "loaded")
            let recertified = try await server.admin("GET", "/admin/v1/authenticator-metadata/\(Self.revoked)")
            #expect(recertified["status"] as? String == "FIDO_CERTIFIED_L2" && recertified["refused"] as? Bool == false)
            let after = try await server.admin("GET", "/admin/v1/authenticator-metadata")
            #expect(after["serial"] as? Int == 12 && after["last_error"] is NSNull)
        }
    }

    @Test("The BLOB is read over HTTP as from the FIDO Alliance's server; an answer other than 200 is refused with its status, and the loaded entries stay")
    func loadingFromAURL() async throws {
        let metadata = try Metadata()
        let source = try await TestMetadataSource.start()
        source.serve(try String(contentsOf: metadata.file, encoding: .utf8))
        let configuration = MetadataConfiguration(source: source.url, roots: [metadata.service.root.certificate])
        try await TestServer.routed(configure: { $0.metadata = configuration }) { server in
            try await Self.loaded(server)
            #expect(source.requestCount >= 1)
            source.serve("", status: 503)
            let refused = try await Self.refresh(server)
            #expect(refused.status == 502 && refused.errorDescription?.contains("the source answered 503") == true, "\(refused.text)")
            #expect(try await server.admin("GET", "/admin/v1/authenticator-metadata/\(Self.good)").status == 200)
        }
        try await source.stop()
    }

    @Test("Without a metadata source the status says so and a refresh is a conflict")
    func notConfigured() async throws {
        try await TestServer.routed { server in
            let status = try await server.admin("GET", "/admin/v1/authenticator-metadata")
            #expect(status["configured"] as? Bool == false && status["serial"] is NSNull)
            let refresh = try await Self.refresh(server)
            #expect(refresh.status == 409 && refresh.error == "conflict")
        }
    }

    @Test("A passkey of a model the metadata reports revoked is refused (403 authenticator_status_refused) and nothing is stored; a certified model's attestation is trusted through its metadata root")
    func revokedModelsAreRefused() async throws {
        let metadata = try Metadata()
        try await PasskeyBench.run(.sqlite, configure: { $0.metadata = metadata.configuration }) { bench in
            try await Self.loaded(bench.server)
            try await bench.server.setPolicy(["passkeys": ["attestation": "direct"]])
            var revoked = bench.passkey()
            let refused = try await bench.alice.register(&revoked) { metadata.revoked.attest(&$0) }
            #expect(refused.status == 403 && refused.error == "authenticator_status_refused", "\(refused.text)")
            #expect(refused.errorDescription?.contains("Withdrawn Test Key (\(Self.revoked)) as REVOKED") == true,
                    "\(refused.errorDescription ?? "")")
            #expect((try await bench.server.admin("GET", "/admin/v1/tenants/default/users/\(bench.alice.user.userID)/passkeys")["items"]
                    as? [Any])?.isEmpty == true, "nothing stored")

            var certified = bench.passkey()
            let added = try await bench.alice.register(&certified) { metadata.good.attest(&$0) }
            #expect(added.status == 200, "\(added.text)")
            let stored = try await bench.server.admin("GET", "/admin/v1/tenants/default/users/\(bench.alice.user.userID)/passkeys")
            let passkey = try #require((stored["items"] as? [[String: any Sendable]])?.first)
            #expect(passkey["aaguid"] as? String == Self.good)
            #expect(passkey["attestation_trusted"] as? Bool == true, "the model's metadata root is trusted for it")
        }
    }

    @Test("A tenant that refuses unattested authenticators needs no roots of its own with metadata: a model's root is trusted for that model only")
    func metadataRootsForTheirModelOnly() async throws {
        let metadata = try Metadata()
        try await PasskeyBench.run(.sqlite, configure: { $0.metadata = metadata.configuration }) { bench in
            try await Self.loaded(bench.server)
            try await bench.server.setPolicy(["passkeys": ["attestation": "direct", "allow_unattested": false] as [String: any Sendable]])
            // A model the metadata does not know, attested by the good model's CA: the root is
            // the good model's, not this one's.
            let impostor = try TestAuthenticatorModel(aaguid: Self.unknown)
            let borrowed = try TestAuthenticatorModel.Borrowed(aaguid: impostor.aaguid, from: metadata.good)
            var passkey = bench.passkey()
            let untrusted = try await bench.alice.register(&passkey) { borrowed.attest(&$0) }
            #expect(untrusted.status == 400 && untrusted.error == "attestation_not_trusted", "\(untrusted.text)")
            var none = bench.passkey()
            let unattested = try await bench.alice.register(&none)
            #expect(unattested.status == 400 && unattested.error == "attestation_not_trusted")
            var good = bench.passkey()
            #expect(try await bench.alice.register(&good) { metadata.good.attest(&$0) }.status == 200)
        }
    }

    @Test("Denied and allowed AAGUIDs and device-bound only refuse registrations with authenticator_not_allowed, saying why")
    func tenantRules() async throws {
        try await PasskeyBench.run(.sqlite) { bench in
            let model = try TestAuthenticatorModel(aaguid: Self.good)
            try await bench.server.setPolicy(["passkeys": ["denied_aaguids": [Self.good.uppercased()]]])
            var denied = bench.passkey()
            let refused = try await bench.alice.register(&denied) { $0.aaguid = model.aaguid }
            #expect(refused.status == 403 && refused.error == "authenticator_not_allowed", "\(refused.text)")
            #expect(refused.errorDescription?.contains("its model, \(Self.good), is denied") == true, "\(refused.errorDescription ?? "")")

            try await bench.server.setPolicy(["passkeys": ["allowed_aaguids": [Self.unknown]]])
            var other = bench.passkey()
            let notAllowed = try await bench.alice.register(&other) { $0.aaguid = model.aaguid }
            #expect(notAllowed.errorDescription?.contains("is not among the allowed models") == true)
            var allowed = bench.passkey()
            #expect(try await bench.alice.register(&allowed) { $0.aaguid = Array(UUID(uuidString: Self.unknown)!.uuidBytes) }.status == 200)

            try await bench.server.setPolicy(["passkeys": ["device_bound_only": true]])
            var synced = bench.passkey(backupEligible: true)
            let syncedRefused = try await bench.alice.register(&synced)
            #expect(syncedRefused.status == 403 && syncedRefused.errorDescription?.contains("may be synced") == true)
            var bound = bench.passkey()
            #expect(try await bench.alice.register(&bound).status == 200)
        }
    }

    @Test("A group's rule holds its members alone, asks their options for user verification, and the policy keeps the group by id; an unknown group or a bad AAGUID is refused naming the field")
    func groupRules() async throws {
        try await PasskeyBench.run(.sqlite) { bench in
            let server = bench.server
            let group = try await server.admin("POST", "/admin/v1/tenants/default/groups", json: ["name": "treasury"])
            let groupID = try #require(group["id"] as? String)
            #expect(try await server.admin("PUT", "/admin/v1/tenants/default/groups/\(groupID)/members/\(bench.alice.user.userID)").status == 204)
            let rule: [String: any Sendable] = ["group": "treasury", "device_bound_only": true, "user_verification_required": true]
            try await server.setPolicy(["passkeys": ["group_rules": [rule]] as [String: any Sendable]])
            let policy = try await server.admin("GET", "/admin/v1/tenants/default/authentication-policy")
            let rules = try #require((policy["passkeys"] as? [String: any Sendable])?["group_rules"] as? [[String: any Sendable]])
            #expect(rules.first?["group"] as? String == groupID)

            let options = try await bench.alice.creationOptions().decoded(CreationOptionsAnswer.self)
            #expect(options.publicKey.authenticatorSelection?.userVerification == "required")
            var synced = bench.passkey(backupEligible: true)
            #expect(try await bench.alice.register(&synced).error == "authenticator_not_allowed")

            let bob = try await bench.signedIn(try await server.enrolledUser("bob"))
            #expect(try await bob.creationOptions().decoded(CreationOptionsAnswer.self).publicKey.authenticatorSelection?.userVerification
                    == "preferred")
            var bobs = bench.passkey(backupEligible: true)
            #expect(try await bob.register(&bobs).status == 200, "bob is in no group")

            for (rules, field) in [
                ([["group": "nobody-has-this"]], "passkeys.group_rules"),
                ([["group": "treasury", "allowed_aaguids": ["yubikey"]]], "passkeys.group_rules.allowed_aaguids"),
            ] as [([[String: any Sendable]], String)] {
                let answer = try await server.admin(
                    "PUT", "/admin/v1/tenants/default/authentication-policy", json: ["passkeys": ["group_rules": rules]])
                #expect(answer.status == 400 || answer.status == 404, "\(answer.text)")
                #expect(answer.errorDescription?.contains(field) == true, "\(answer.errorDescription ?? "")")
            }
            let bad = try await server.admin(
                "PUT", "/admin/v1/tenants/default/authentication-policy", json: ["passkeys": ["denied_aaguids": ["cb69481e"]]])
            #expect(bad.status == 400 && bad.errorDescription?.hasPrefix("field passkeys.denied_aaguids is invalid") == true)
        }
    }

    @Test("Passkeys a changed policy or a revoked model no longer allows are listed with what is wrong, and an admin revokes them",
          arguments: Engine.available)
    func findings(engine: Engine) async throws {
        let metadata = try Metadata()
        try metadata.write(serial: 10, revokedStatus: "FIDO_CERTIFIED_L1")
        try await PasskeyBench.run(engine, configure: { $0.metadata = metadata.configuration }) { bench in
            let server = bench.server
            try await Self.loaded(server)
            try await server.setPolicy(["passkeys": ["attestation": "direct"]])
            var synced = bench.passkey(backupEligible: true)
            #expect(try await bench.alice.register(&synced).status == 200)
            var later = bench.passkey()
            #expect(try await bench.alice.register(&later) { metadata.revoked.attest(&$0) }.status == 200)
            var fine = bench.passkey()
            #expect(try await bench.alice.register(&fine) { metadata.good.attest(&$0) }.status == 200)
            let none = try await server.admin("GET", "/admin/v1/tenants/default/passkey-findings")
            #expect((none["items"] as? [Any])?.isEmpty == true && none["next_cursor"] is NSNull, "\(none.text)")

            try await server.setPolicy(["passkeys": ["attestation": "direct", "device_bound_only": true] as [String: any Sendable]])
            try metadata.write(serial: 11)
            #expect(try await Self.refresh(server)["outcome"] as? String == "loaded")
            let listed = try await server.admin("GET", "/admin/v1/tenants/default/passkey-findings")
            let items = try #require(listed["items"] as? [[String: any Sendable]], "\(listed.text)")
            #expect(items.count == 2)
            let byAAGUID = Dictionary(uniqueKeysWithValues: items.map { (($0["passkey"] as? [String: any Sendable])?["aaguid"] as? String ?? "", $0) })
            #expect((byAAGUID[Self.revoked]?["findings"] as? [String])?.first?.contains("as REVOKED") == true)
            #expect(byAAGUID[Self.revoked]?["model"] as? String == "Withdrawn Test Key")
            let syncedFinding = try #require(byAAGUID["00000000-0000-0000-0000-000000000000"])
            #expect((syncedFinding["findings"] as? [String]) == ["it may be synced, and only device-bound passkeys are allowed"])
            #expect(syncedFinding["username"] as? String == "alice")

            let paged = try await server.admin("GET", "/admin/v1/tenants/default/passkey-findings?limit=1")
            #expect((paged["items"] as? [Any])?.count == 1)
            let cursor = try #require(paged["next_cursor"] as? String)
            let rest = try await server.admin("GET", "/admin/v1/tenants/default/passkey-findings?limit=1&cursor=\(cursor)")
            #expect((rest["items"] as? [Any])?.count == 1)

            let id = try #require((syncedFinding["passkey"] as? [String: any Sendable])?["id"] as? String)
            let revoke = try await server.admin("DELETE", "/admin/v1/tenants/default/users/\(bench.alice.user.userID)/passkeys/\(id)")
            #expect(revoke.status == 204)
            let after = try await server.admin("GET", "/admin/v1/tenants/default/passkey-findings")
            #expect((after["items"] as? [Any])?.count == 1)
        }
    }

    @Test("The console shows the metadata loaded and the passkeys the rules no longer allow, and revokes one")
    func theConsolesPasskeysPage() async throws {
        let metadata = try Metadata()
        try await PasskeyBench.run(.sqlite, configure: { $0.metadata = metadata.configuration }) { bench in
            let server = bench.server
            try await Self.loaded(server)
            var synced = bench.passkey(backupEligible: true)
            #expect(try await bench.alice.register(&synced, name: "Phone keychain").status == 200)
            let granted = try await server.admin(
                "PUT", "/admin/v1/tenants/default/users/\(bench.alice.user.userID)/console-role", json: ["role": "tenant-admin"])
            #expect(granted.status == 200)
            let browser = bench.browser()
            let dashboard = try await ConsoleTests.signIn(browser, bench.alice.user, base: "")
            let console = ConsoleTests.Bench(
                server: server, browser: browser, admin: bench.alice.user, base: "", csrf: try #require(dashboard.hidden("csrf")))

            let empty = try await browser.get("/console/passkeys")
            #expect(empty.status == 200)
            #expect(empty.text.contains("FIDO metadata number 10, 2 authenticator models"), "\(empty.text.suffix(2500))")
            #expect(empty.text.contains(#"id="no-findings""#) && empty.text.contains(#"aria-current="page">Passkeys"#))

            try await server.setPolicy(["passkeys": ["device_bound_only": true]])
            let listed = try await browser.get("/console/passkeys")
            let id = try #require((try await server.admin("GET", "/admin/v1/tenants/default/passkey-findings")["items"]
                as? [[String: any Sendable]])?.first?["passkey"] as? [String: any Sendable])?["id"] as? String
            #expect(listed.text.contains(#"id="finding-\#(id ?? "")""#) && listed.text.contains("Phone keychain"))
            #expect(listed.text.contains("It may be synced, and only device-bound passkeys are allowed."))

            let forged = try await browser.post("/console/passkeys/\(bench.alice.user.userID)/\(id ?? "")/revoke", [("csrf", "forged")])
            #expect(forged.status == 403)
            let revoked = try await console.post("/console/passkeys/\(bench.alice.user.userID)/\(id ?? "")/revoke", [])
            #expect(revoked.status == 200 && revoked.text.contains("The passkey is revoked"), "\(revoked.text.suffix(2000))")
            #expect(revoked.text.contains(#"id="no-findings""#))
            let again = try await console.post("/console/passkeys/\(bench.alice.user.userID)/\(id ?? "")/revoke", [])
            #expect(again.status == 404 && again.text.contains("was not found"))

            try metadata.write(serial: 9)
            _ = try await Self.refresh(server)
            let failed = try await browser.get("/console/passkeys")
            #expect(failed.text.contains(#"id="metadata-problem""#) && failed.text.contains("is not above the loaded one"))
        }
    }
}

extension TestAuthenticatorModel {
    /// A statement claiming `aaguid` but made with another model's attestation key and
    /// certificate chain, rewritten for the claimed AAGUID by that model's CA.
    struct Borrowed: Sendable {
        let aaguid: [UInt8]
        let model: TestAuthenticatorModel
        let certificate: [UInt8]

        init(aaguid: [UInt8], from model: TestAuthenticatorModel) throws {
            self.aaguid = aaguid
            self.model = model
            certificate = try TestAttestationCA.encoded(try model.ca.issue(
                subject: try TestAttestationCA.packedSubject(), key: .init(model.key.publicKey),
                extensions: [try TestAttestationCA.basicConstraints(isCA: false), try TestAttestationCA.aaguid(aaguid)]))
        }

        func attest(_ parts: inout WebAuthnTestAuthenticator.Parts) {
            model.attest(&parts)
            parts.aaguid = aaguid
            let (key, certificate) = (model.key, certificate)
            parts.statement = { authenticatorData, clientDataHash in
                TestAuthenticatorModel.statement(key: key, certificate: certificate, signing: authenticatorData + clientDataHash)
            }
        }
    }
}
