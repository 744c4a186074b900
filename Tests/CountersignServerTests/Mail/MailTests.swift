import CountersignCore
import CountersignKit
import Foundation
import Testing
@testable import CountersignServer

/// A tenant's mail, end to end: settings through the admin API, a test message, an invitation
/// mailed with its ticket, the notices' mail (a device added, a pass issued), a mail server that
/// is down when the mail is queued, a recipient refused for good, and every bad input. The
/// mail goes to aiosmtpd over STARTTLS or implicit TLS with a login.
@Suite("Mail: settings, invitations and notices by mail, through an outbox that loses nothing")
struct MailTests {
    static let base = "/admin/v1/tenants/default/mail"

    static func settings(_ smtp: SMTPHarness, _ extra: [String: any Sendable] = [:]) -> [String: any Sendable] {
        var body: [String: any Sendable] = [
            "host": "127.0.0.1", "port": smtp.port, "security": smtp.mode.rawValue, "ca_certificate": smtp.caPEM,
            "from_address": "no-reply@example.com",
        ]
        if smtp.login {
            body["username"] = SMTPHarness.user
            body["password"] = SMTPHarness.password
        }
        return body.merging(extra) { $1 }
    }

    static func configure(_ server: TestServer, _ smtp: SMTPHarness, _ extra: [String: any Sendable] = [:]) async throws {
        let answer = try await server.admin("PUT", base, json: settings(smtp, extra))
        #expect(answer.status == 201 || answer.status == 200, "\(answer.errorDescription ?? "")")
    }

    static func deliveries(_ server: TestServer) async throws -> [[String: any Sendable]] {
        let answer = try await server.admin("GET", base + "/deliveries")
        #expect(answer.status == 200, "\(answer.errorDescription ?? "")")
        return try #require(answer["items"] as? [[String: any Sendable]])
    }

    static func userWithAddress(_ server: TestServer, _ username: String, email: String = "ada@example.com",
                                name: String = "Ada Lovelace") async throws -> String {
        let answer = try await server.admin(
            "POST", "/admin/v1/tenants/default/users", json: ["username": username, "email": email, "display_name": name])
        #expect(answer.status == 201, "\(answer.errorDescription ?? "")")
        return try #require(answer["id"] as? String)
    }

    @Test("Settings are set, shown without the password, and checked with a test message", arguments: Engine.available)
    func settingsAndTest(engine: Engine) async throws {
        guard SMTPHarness.available else { return }
        let smtp = try await SMTPHarness.make(.starttls)
        defer { smtp.shutdown() }
        try await TestServer.with(engine) { server in
            #expect(try await server.admin("GET", Self.base).status == 404)
            let created = try await server.admin("PUT", Self.base, json: Self.settings(smtp, ["from_name": "Acme sign-in"]))
            #expect(created.status == 201, "\(created.errorDescription ?? "")")
            #expect(created["password"] == nil && created["password_set"] as? Bool == true)
            #expect(created["port"] as? Int == smtp.port && created["security"] as? String == "starttls")
            let shown = try await server.admin("GET", Self.base)
            #expect(shown.status == 200 && shown["password"] == nil && shown["password_set"] as? Bool == true)
            #expect(shown["username"] as? String == SMTPHarness.user)

            let test = try await server.admin("POST", Self.base + "/test", json: ["to": "ops@example.com"])
            #expect(test.status == 200, "\(test.errorDescription ?? "")")
            let received = try #require(try await smtp.waitFor(1).first)
            #expect(received.rcptTos == ["ops@example.com"] && received.tls && received.login == SMTPHarness.user)
            #expect(received.fromName == "Acme sign-in" && received.fromAddress == "no-reply@example.com")
            #expect(received.subject == "Test message from Default")
            #expect(try await Self.deliveries(server).isEmpty, "a test message is sent at once, not queued")

            // Saving again without the password keeps it when the server is the same…
            let again = try await server.admin("PUT", Self.base, json: Self.settings(smtp).filter { $0.key != "password" })
            #expect(again.status == 200 && again["password_set"] as? Bool == true, "\(again.errorDescription ?? "")")
            // …and the audit log says what changed, never the password.
            let audit = try await server.admin("GET", "/admin/v1/tenants/default/audit?limit=200")
            let createdEvent = (audit["items"] as? [[String: any Sendable]])?.first { $0["action"] as? String == "mail.settings_created" }
            let details = try #require(createdEvent?["details"] as? [String: any Sendable])
            #expect(details["password"] as? String == "set" && details["host"] as? String == "127.0.0.1")

            #expect(try await server.admin("DELETE", Self.base).status == 204)
            #expect(try await server.admin("GET", Self.base).status == 404)
            #expect(try await server.admin("DELETE", Self.base).status == 404)
        }
    }

    @Test("Bad settings are refused with the member and why, and change nothing")
    func badSettings() async throws {
        guard SMTPHarness.available else { return }
        let smtp = try await SMTPHarness.make(.tls)
        defer { smtp.shutdown() }
        try await TestServer.with(.sqlite) { server in
            func refused(_ body: [String: any Sendable], _ description: String) async throws {
                let answer = try await server.admin("PUT", Self.base, json: body)
                #expect(answer.status == 400 && answer.errorDescription?.hasPrefix(description) == true,
                        "\(answer.status) \(answer.errorDescription ?? "")")
            }
            let good = Self.settings(smtp)
            try await refused(good.filter { $0.key != "host" }, "field host is required")
            try await refused(good.merging(["host": "smtp://mail.example.com"]) { $1 }, "field host is invalid")
            try await refused(good.merging(["security": "ssl"]) { $1 }, "field security is invalid")
            try await refused(good.merging(["host": "mail.example.com", "security": "plain"]) { $1 }.filter { $0.key != "ca_certificate" },
                              "field security is invalid: plain sends mail and passwords unencrypted")
            try await refused(good.merging(["port": 70000]) { $1 }, "field port is invalid")
            try await refused(good.filter { $0.key != "password" }, "field password is required")
            try await refused(good.merging(["from_address": "no reply@example.com"]) { $1 }, "field from_address is invalid")
            try await refused(good.merging(["ca_certificate": "not a certificate"]) { $1 }, "field ca_certificate is invalid")
            try await refused(good.merging(["templates": ["welcome": ["subject": "Hi", "text": "Hi"]]]) { $1 },
                              "field templates is invalid: \"welcome\" is not a kind of mail")
            try await refused(good.merging(["templates": ["device_added": ["subject": "{{#tenant}}", "text": "x"]]]) { $1 },
                              "field templates.device_added.subject is invalid: is not a Mustache template")
            #expect(try await server.admin("GET", Self.base).status == 404, "nothing was stored")

            try await Self.configure(server, smtp)
            // The stored password only goes to the server it was given for.
            let moved = Self.settings(smtp, ["host": "mail.example.net"]).filter { $0.key != "password" }
            try await refused(moved, "field password is invalid: is required again when host")
            let shown = try await server.admin("GET", Self.base)
            #expect(shown["host"] as? String == "127.0.0.1")

            // A test message to an address mail cannot go to; then one the server refuses.
            let badTo = try await server.admin("POST", Self.base + "/test", json: ["to": "ops@example.com>\r\nRCPT TO:<eve@example.com"])
            #expect(badTo.status == 400 && badTo.errorDescription?.hasPrefix("field to is invalid") == true)
            let bounced = try await server.admin("POST", Self.base + "/test", json: ["to": "bounce@example.com"])
            #expect(bounced.status == 502 && bounced.error == "mail_unavailable")
            #expect(bounced.errorDescription?.contains("550") == true, "\(bounced.errorDescription ?? "")")
            // The wrong password.
            let wrong = try await server.admin("PUT", Self.base, json: Self.settings(smtp, ["password": "wrong"]))
            #expect(wrong.status == 200)
            let refusedLogin = try await server.admin("POST", Self.base + "/test", json: ["to": "ops@example.com"])
            #expect(refusedLogin.status == 502 && refusedLogin.errorDescription?.hasPrefix("the mail server refused the login") == true,
                    "\(refusedLogin.errorDescription ?? "")")
            #expect(try smtp.received().isEmpty)
        }
    }

    @Test("An invitation is mailed with its ticket; the link in the mail enrolls the phone", arguments: Engine.available)
    func invitationByMail(engine: Engine) async throws {
        guard SMTPHarness.available else { return }
        let smtp = try await SMTPHarness.make(.tls)
        defer { smtp.shutdown() }
        try await TestServer.with(engine) { server in
            let userID = try await Self.userWithAddress(server, "ada")
            let tickets = "/admin/v1/tenants/default/users/\(userID)/enrollment-tickets"
            // No mail settings yet: refused, and no ticket is made.
            let early = try await server.admin("POST", tickets, json: ["send_email": true])
            #expect(early.status == 409 && early.errorDescription?.hasPrefix("the invitation cannot be mailed") == true)
            #expect((try await server.admin("GET", tickets)["items"] as? [Any])?.isEmpty == true)

            try await Self.configure(server, smtp, ["templates": ["invitation": [
                "subject": "Welcome to {{tenant}}, {{user}}", "text": "Open {{invitation_url}} before {{expires}}.\n"]]])
            let issued = try await server.admin("POST", tickets, json: ["send_email": true, "lifetime_seconds": 3600])
            #expect(issued.status == 201, "\(issued.errorDescription ?? "")")
            let mailID = try #require(issued["mail_id"] as? String)
            let link = try #require(issued["invitation_url"] as? String)
            let received = try #require(try await smtp.waitFor(1).first)
            #expect(received.rcptTos == ["ada@example.com"] && received.to == "Ada Lovelace <ada@example.com>")
            #expect(received.subject == "Welcome to Default, Ada Lovelace")
            #expect(received.text?.contains("Open \(link) before ") == true, "\(received.text ?? "")")
            #expect(received.messageID == "<\(mailID)@example.com>")
            try await eventually("the invitation shows as sent") {
                try await Self.deliveries(server).first?["status"] as? String == "sent"
            }
            let delivery = try #require(try await Self.deliveries(server).first)
            #expect(delivery["id"] as? String == mailID && delivery["kind"] as? String == "invitation")
            #expect(delivery["to"] as? String == "ada@example.com" && delivery["user_id"] as? String == userID)
            #expect(delivery["text"] == nil && delivery["body"] == nil, "the deliveries view never shows the link")

            // The URI in the mail's link is the ticket: the phone enrolls with it.
            let (kit, _) = server.authenticator()
            let ticket = try #require(URLComponents(string: link)?.queryItems?.first { $0.name == "ticket" }?.value)
            let uri = try #require(issued["enrollment_uri"] as? String)
            #expect(uri.contains(ticket))
            _ = try await kit.enroll(uri: uri, deviceName: "Ada's phone", platform: .linux)

            // A user without an address: refused, nothing made.
            let bob = try await server.createUser("bob")
            let noAddress = try await server.admin("POST", "/admin/v1/tenants/default/users/\(bob)/enrollment-tickets",
                                                  json: ["send_email": true])
            #expect(noAddress.status == 409 && noAddress.errorDescription == "user \(bob) has no e-mail address to send the invitation to")
        }
    }

    @Test("A device added and a pass issued are mailed; mail queued while the server is down arrives when it is back",
          arguments: Engine.available)
    func noticesByMailSurviveADownServer(engine: Engine) async throws {
        guard SMTPHarness.available else { return }
        let smtp = try await SMTPHarness.make(.starttls, running: false)
        defer { smtp.shutdown() }
        try await TestServer.with(engine) { server in
            try await Self.configure(server, smtp)
            let userID = try await Self.userWithAddress(server, "ada")
            _ = try await server.enrollDevice(for: userID, username: "ada", name: "Pixel 9")
            _ = try await server.enrollDevice(for: userID, username: "ada", name: "iPad")
            let pass = try await server.admin("POST", "/admin/v1/tenants/default/users/\(userID)/temporary-access-passes",
                                              json: ["lifetime_seconds": 3600])
            #expect(pass.status == 201, "\(pass.errorDescription ?? "")")

            try await eventually("every message was tried once and is waiting", within: 10) {
                let items = try await Self.deliveries(server)
                return items.count == 3 && items.allSatisfy { $0["status"] as? String == "queued" && $0["attempts"] as? Int == 1 }
            }
            let waiting = try await Self.deliveries(server)
            #expect(waiting.allSatisfy { ($0["last_error"] as? String)?.hasPrefix("the mail server could not be reached") == true },
                    "\(waiting.map { $0["last_error"] ?? "" })")
            // The first device too: a phone enrolled with an invitation that went astray is news
            // to its owner, who has no other device to be pushed to.
            #expect(waiting.compactMap { $0["kind"] as? String }.sorted() == ["access_pass_issued", "device_added", "device_added"])

            try await smtp.start()
            server.clock.advance(by: 6)
            let received = try await smtp.waitFor(3)
            #expect(received.map(\.subject).sorted() == ["A new device was added to your Default account",
                                                        "A new device was added to your Default account",
                                                        "A temporary access pass was issued for your Default account"])
            for name in ["Pixel 9", "iPad"] {
                #expect(received.contains { $0.text?.contains("A new device, “\(name)”, was added to your Default account on ") == true })
            }
            let issued = try #require(received.first { $0.subject.hasPrefix("A temporary") })
            #expect(issued.text?.contains(", once, to sign in") == true, "a pass is one-time unless asked otherwise")
            #expect(issued.text?.contains(try #require(pass["code"] as? String)) == false, "never the pass itself")
            try await eventually("each shows as sent after two attempts") {
                try await Self.deliveries(server).allSatisfy { $0["status"] as? String == "sent" && $0["attempts"] as? Int == 2 }
            }
            // Each attempt is counted by its outcome.
            let metrics = String(decoding: try await server.call("GET", "/metrics").data, as: UTF8.self)
            #expect(metrics.contains(#"countersign_mail_messages_total{kind="device_added",outcome="retry"} 2"#), "\(metrics)")
            #expect(metrics.contains(#"countersign_mail_messages_total{kind="device_added",outcome="sent"} 2"#))
            #expect(metrics.contains(#"countersign_mail_messages_total{kind="access_pass_issued",outcome="sent"} 1"#))
        }
    }

    @Test("A recipient refused for good fails at once with the server's reason; no settings, no mail")
    func refusedForGood() async throws {
        guard SMTPHarness.available else { return }
        let smtp = try await SMTPHarness.make(.starttls)
        defer { smtp.shutdown() }
        try await TestServer.with(.sqlite) { server in
            let userID = try await Self.userWithAddress(server, "ada", email: "bounce@example.com")
            _ = try await server.enrollDevice(for: userID, username: "ada", name: "Pixel 9")
            _ = try await server.enrollDevice(for: userID, username: "ada", name: "iPad")
            #expect(try await server.database.run("SELECT id FROM mail_outbox").isEmpty, "no settings, nothing queued")

            try await Self.configure(server, smtp)
            _ = try await server.enrollDevice(for: userID, username: "ada", name: "Laptop")
            try await eventually("the message failed") {
                try await Self.deliveries(server).first?["status"] as? String == "failed"
            }
            let failed = try #require(try await Self.deliveries(server).first)
            #expect(failed["attempts"] as? Int == 1)
            #expect((failed["last_error"] as? String)?.hasPrefix("the mail server answered 550") == true, "\(failed["last_error"] ?? "")")
        }
    }

    @Test("Mail is given up after the last attempt, and at once when the tenant's settings are removed")
    func givenUp() async throws {
        guard SMTPHarness.available else { return }
        let smtp = try await SMTPHarness.make(.starttls, running: false)
        defer { smtp.shutdown() }
        try await TestServer.with(.sqlite, configure: { $0.mail.maximumAttempts = 2 }) { server in
            try await Self.configure(server, smtp)
            let userID = try await Self.userWithAddress(server, "ada")
            let first = try await server.admin("POST", "/admin/v1/tenants/default/users/\(userID)/enrollment-tickets",
                                               json: ["send_email": true])
            let firstID = try #require(first["mail_id"] as? String)
            // The attempt's outcome, not its claim (which counts the attempt): the retry is
            // scheduled from the clock when the failure is recorded, so the clock moves only after.
            try await eventually("the first attempt failed") {
                let row = try await Self.deliveries(server).first
                return row?["attempts"] as? Int == 1 && row?["status"] as? String == "queued" && row?["last_error"] != nil
            }
            server.clock.advance(by: 6)
            try await eventually("the message was given up after its second attempt") {
                try await Self.deliveries(server).first?["status"] as? String == "failed"
            }
            let failed = try #require(try await Self.deliveries(server).first)
            #expect(failed["id"] as? String == firstID && failed["attempts"] as? Int == 2)
            #expect((failed["last_error"] as? String)?.hasPrefix("the mail server could not be reached") == true)

            // Queued, then the settings removed before it went: it fails with that reason.
            let second = try await server.admin("POST", "/admin/v1/tenants/default/users/\(userID)/enrollment-tickets",
                                                json: ["send_email": true])
            let secondID = try #require(second["mail_id"] as? String)
            try await eventually("the second message waits for a retry") {
                let row = try await Self.deliveries(server).first { $0["id"] as? String == secondID }
                return row?["attempts"] as? Int == 1 && row?["status"] as? String == "queued" && row?["last_error"] != nil
            }
            #expect(try await server.admin("DELETE", Self.base).status == 204)
            server.clock.advance(by: 6)
            try await eventually("the second message failed") {
                let row = try await server.database.first(
                    "SELECT status, last_error FROM mail_outbox WHERE id = \(secondID)", as: OutboxState.self)
                return row?.status == "failed" && row?.lastError == "the tenant no longer has mail settings"
            }
        }
    }

    private struct OutboxState: Decodable {
        let status: String
        let lastError: String?
        enum CodingKeys: String, CodingKey {
            case status
            case lastError = "last_error"
        }
    }

    @Test("Retries wait 5 s, doubling, up to an hour, for about a day")
    func backoff() {
        let configuration = MailConfiguration()
        #expect((1...12).map(configuration.retryDelay(afterAttempts:))
            == [5, 10, 20, 40, 80, 160, 320, 640, 1280, 2560, 3600, 3600])
        let total = (1..<configuration.maximumAttempts).map(configuration.retryDelay(afterAttempts:)).reduce(0, +)
        #expect((20 * 3600...30 * 3600).contains(total), "\(total / 3600) hours")
    }
}
