import CountersignCore
import Foundation
import Testing
@testable import CountersignServer

/// `/admin/v1/tenants/{tenant}/users/{id}/passkeys`: a user's passkeys read with `devices:read`
/// and removed with `devices:manage`, within the key's tenant only.
@Suite("Passkeys in the administration API")
struct PasskeyAdminTests {
    /// A tenant key of the default tenant holding `rights`: its id and the key itself.
    static func key(_ server: TestServer, rights: [String]) async throws -> (id: String, secret: String) {
        let created = try await server.admin(
            "POST", "/admin/v1/tenants/default/admin-keys", json: ["name": "helpdesk", "rights": rights])
        #expect(created.status == 201, "\(created.errorDescription ?? "")")
        let key = try #require(created["admin_key"] as? [String: any Sendable])
        return (try #require(key["id"] as? String), try #require(created["secret"] as? String))
    }

    @Test("List, show and delete a user's passkeys; the delete is audited as the key's and the passkey signs in no more",
          arguments: Engine.available)
    func listShowAndDelete(engine: Engine) async throws {
        try await PasskeyBench.run(engine) { bench in
            let server = bench.server
            let alice = bench.alice.user
            let passkey = try await bench.alicesPasskey(backupEligible: true, name: "Phone")
            let path = "/admin/v1/tenants/default/users/\(alice.userID)/passkeys"
            let reader = try await Self.key(server, rights: ["devices:read"])
            let manager = try await Self.key(server, rights: ["devices:manage"])

            let list = try await server.call("GET", path, key: reader.secret)
            #expect(list.status == 200)
            let items = try #require(list["items"] as? [[String: any Sendable]])
            #expect(items.count == 1)
            let id = try #require(items.first?["id"] as? String)
            let shown = try await server.call("GET", "\(path)/\(id)", key: reader.secret)
            #expect(shown.status == 200)
            #expect(shown["name"] as? String == "Phone" && shown["credential_id"] as? String == passkey.credentialID)
            #expect(shown["backup_eligible"] as? Bool == true && shown["backup_state"] as? Bool == true)
            #expect(shown["aaguid"] as? String == "00000000-0000-0000-0000-000000000000")
            #expect(shown["transports"] as? [String] == [] && shown["sign_count"] as? Int == 0)
            #expect(shown["attestation_kind"] as? String == "none" && shown["attestation_trusted"] as? Bool == false)
            #expect(shown["created_at"] as? String != nil && shown["last_used_at"] == nil)
            #expect(shown["public_key"] == nil && shown["attestation_object"] == nil)

            let deleted = try await server.call("DELETE", "\(path)/\(id)", key: manager.secret)
            #expect(deleted.status == 204 && deleted.data.isEmpty)
            let gone = try await server.call("GET", "\(path)/\(id)", key: reader.secret)
            #expect(gone.status == 404 && gone.errorDescription == "passkey \(id) was not found")
            let again = try await server.call("DELETE", "\(path)/\(id)", key: manager.secret)
            #expect(again.status == 404)
            let events = try await bench.audit("passkey.removed")
            #expect(events.count == 1 && events.first?["actor"] as? String == "admin-key:\(manager.id)")
            #expect(events.first?["target_id"] as? String == id)
            #expect(try await bench.alice.page().text.contains("Passkey removed by an administrator: Phone"))

            let client = try await server.createCodeFlowClient()
            let signIn = try await bench.openSignIn(client, challenge: CodeFlowClient.challenge(CodeFlowClient.verifier()))
            let refused = try await signIn.signIn(with: passkey)
            #expect(refused.status == 400 && refused.error == "unknown_credential", "\(refused.text)")
        }
    }

    @Test("Resetting a user's factors deregisters every device and removes every passkey in one audited step; the phone and the passkey stop working",
          arguments: Engine.available)
    func resetFactors(engine: Engine) async throws {
        try await PasskeyBench.run(engine) { bench in
            let server = bench.server
            let alice = bench.alice.user
            let passkey = try await bench.alicesPasskey(name: "Laptop")
            let path = "/admin/v1/tenants/default/users/\(alice.userID)/factor-reset"
            let reader = try await Self.key(server, rights: ["devices:read", "users:manage"])
            let refused = try await server.call("POST", path, key: reader.secret)
            #expect(refused.status == 403 && refused.errorDescription?.contains("devices:manage") == true)
            #expect(try await bench.passkeys(of: alice.userID).count == 1, "nothing changed")

            let manager = try await Self.key(server, rights: ["devices:manage"])
            let ticket = try await server.admin("POST", "/admin/v1/tenants/default/users/\(alice.userID)/enrollment-tickets")
            let ticketID = try #require((ticket["ticket"] as? [String: any Sendable])?["id"] as? String)
            let reset = try await server.call("POST", path, key: manager.secret)
            #expect(reset.status == 200, "\(reset.errorDescription ?? "")")
            #expect(reset["devices_removed"] as? Int == 1 && reset["passkeys_removed"] as? Int == 1)
            #expect(try await bench.passkeys(of: alice.userID).isEmpty)
            let devices = try await server.admin("GET", "/admin/v1/tenants/default/users/\(alice.userID)/devices")
            #expect((devices["items"] as? [Any])?.isEmpty == true)
            let events = try await bench.audit("user.factors_reset")
            #expect(events.count == 1 && events.first?["actor"] as? String == "admin-key:\(manager.id)")
            let details = events.first?["details"] as? [String: any Sendable]
            #expect(details?["tickets"] as? String == "1" && details?["sessions"] as? String == "1", "\(details ?? [:])")
            // No way back in: the invitation is revoked and the browser signed in with the phone is signed out.
            let tickets = try await server.admin("GET", "/admin/v1/tenants/default/users/\(alice.userID)/enrollment-tickets")
            let revoked = (tickets["items"] as? [[String: any Sendable]])?.first { $0["id"] as? String == ticketID }
            #expect(revoked?["revoked_at"] is String, "\(revoked ?? [:])")
            let account = try await bench.alice.browser.get("/account")
            #expect(account.status == 200 && account.hidden("attempt") != nil && !account.text.contains("Your phones"),
                    "the account page asks to sign in again")
            let deviceEvents = try await bench.audit("device.deleted"), passkeyEvents = try await bench.audit("passkey.removed")
            #expect(deviceEvents.count == 1 && passkeyEvents.count == 1)

            let again = try await server.call("POST", path, key: manager.secret)
            #expect(again.status == 200 && again["devices_removed"] as? Int == 0 && again["passkeys_removed"] as? Int == 0)
            let unknown = try await server.call("POST", "/admin/v1/tenants/default/users/usr_nobody/factor-reset", key: manager.secret)
            #expect(unknown.status == 404 && unknown.errorDescription == "user usr_nobody was not found")

            let phone = try await alice.device.call("GET", "/device/v1/self")
            #expect(phone.status == 401 && phone.error == "device_deregistered")
            let client = try await server.createCodeFlowClient()
            let signIn = try await bench.openSignIn(client, challenge: CodeFlowClient.challenge(CodeFlowClient.verifier()))
            let gone = try await signIn.signIn(with: passkey)
            #expect(gone.status == 400 && gone.error == "unknown_credential")
        }
    }

    @Test("A key without the right is refused with 403 naming it, and deletes nothing")
    func rightsAreRequired() async throws {
        try await PasskeyBench.run(.sqlite) { bench in
            let server = bench.server
            _ = try await bench.alicesPasskey()
            let path = "/admin/v1/tenants/default/users/\(bench.alice.user.userID)/passkeys"
            let id = try #require(try await bench.passkeys(of: bench.alice.user.userID).first?["id"] as? String)
            let users = try await Self.key(server, rights: ["users:read", "users:manage", "devices:manage"])
            let reader = try await Self.key(server, rights: ["devices:read"])
            for (method, route, key, right) in [
                ("GET", path, users.secret, "devices:read"), ("GET", "\(path)/\(id)", users.secret, "devices:read"),
                ("DELETE", "\(path)/\(id)", reader.secret, "devices:manage"),
            ] {
                let refused = try await server.call(method, route, key: key)
                #expect(refused.status == 403 && refused.error == "insufficient_rights", "\(method) \(route)")
                #expect(refused["missing_right"] as? String == right)
            }
            #expect(try await bench.passkeys(of: bench.alice.user.userID).count == 1)
            #expect(try await bench.audit("passkey.removed").isEmpty)
        }
    }

    @Test("Another tenant's user or passkey, another user's passkey and an unknown user are not found")
    func otherTenantsAndUsersAreNotFound() async throws {
        try await PasskeyBench.run(.sqlite) { bench in
            let server = bench.server
            let alice = bench.alice.user
            _ = try await bench.alicesPasskey()
            let alicesPasskey = try #require(try await bench.passkeys(of: alice.userID).first?["id"] as? String)
            let created = try await server.admin("POST", "/admin/v1/tenants", json: ["slug": "acme", "display_name": "Acme Bank"])
            #expect(created.status == 201)
            let carol = try await bench.signedIn(try await server.enrolledUser("carol", tenant: "acme"), base: "/t/acme")
            var carols = bench.passkey()
            #expect(try await carol.register(&carols).status == 200)
            let carolsPasskey = try #require(try await bench.passkeys(of: carol.user.userID, tenant: "acme").first?["id"] as? String)
            let bob = try await server.createUser("bob")

            let notFound = [
                ("GET", "/admin/v1/tenants/default/users/\(carol.user.userID)/passkeys", "user \(carol.user.userID)"),
                ("GET", "/admin/v1/tenants/acme/users/\(alice.userID)/passkeys", "user \(alice.userID)"),
                ("GET", "/admin/v1/tenants/acme/users/\(carol.user.userID)/passkeys/\(alicesPasskey)", "passkey \(alicesPasskey)"),
                ("DELETE", "/admin/v1/tenants/acme/users/\(carol.user.userID)/passkeys/\(alicesPasskey)", "passkey \(alicesPasskey)"),
                ("DELETE", "/admin/v1/tenants/default/users/\(alice.userID)/passkeys/\(carolsPasskey)", "passkey \(carolsPasskey)"),
                ("GET", "/admin/v1/tenants/default/users/\(bob)/passkeys/\(alicesPasskey)", "passkey \(alicesPasskey)"),
                ("DELETE", "/admin/v1/tenants/default/users/\(bob)/passkeys/\(alicesPasskey)", "passkey \(alicesPasskey)"),
                ("GET", "/admin/v1/tenants/default/users/usr_unknown/passkeys", "user usr_unknown"),
            ]
            for (method, path, what) in notFound {
                let answer = try await server.admin(method, path)
                #expect(answer.status == 404 && answer.error == "not_found", "\(method) \(path)")
                #expect(answer.errorDescription == "\(what) was not found", "\(method) \(path)")
            }
            #expect(try await bench.passkeys(of: alice.userID).count == 1)
            #expect(try await bench.passkeys(of: carol.user.userID, tenant: "acme").count == 1)
            #expect(try await bench.passkeys(of: bob).isEmpty)
        }
    }
}
