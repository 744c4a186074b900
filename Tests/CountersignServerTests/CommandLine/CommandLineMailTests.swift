import Foundation
import Testing
@testable import CountersignServer

/// `countersign admin mail set|show|test|deliveries|delete` and `admin enroll --email`, run with
/// the real executable against a listening server and aiosmtpd, as docs/mail.md shows them.
@Suite("The countersign admin mail commands")
struct CommandLineMailTests {
    static let enabled = (CommandLineTests.executable != nil || ProcessInfo.processInfo.environment["CI"] == "true")
        && SMTPHarness.available

    @Test("set (password from standard input), show, test, enroll --email, deliveries and delete", .enabled(if: enabled))
    func lifecycle() async throws {
        let smtp = try await SMTPHarness.make(.starttls)
        defer { smtp.shutdown() }
        let files = FileManager.default.temporaryDirectory.appendingPathComponent("mail-cli-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: files, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: files) }
        let ca = files.appendingPathComponent("ca.pem")
        try smtp.caPEM.write(to: ca, atomically: true, encoding: .utf8)
        let templates = files.appendingPathComponent("templates.json")
        try #"{"invitation": {"subject": "Your {{tenant}} phone", "text": "Go to {{invitation_url}}\n"}}"#
            .write(to: templates, atomically: true, encoding: .utf8)

        try await TestServer.with(.sqlite) { server in
            let environment = ["COUNTERSIGN_SERVER": server.base, "COUNTERSIGN_ADMIN_KEY": server.adminKey]
            func json(_ output: String) throws -> [String: Any] {
                try #require(try JSONSerialization.jsonObject(with: Data(output.utf8)) as? [String: Any])
            }
            let set = try await CommandLineTests.run([
                "admin", "mail", "set", "--host", "127.0.0.1", "--port", "\(smtp.port)", "--security", "starttls",
                "--username", SMTPHarness.user, "--password-stdin", "--ca-certificate-file", ca.path,
                "--from", "no-reply@example.com", "--from-name", "Example sign-in", "--template", templates.path,
            ], environment: environment, input: SMTPHarness.password + "\n")
            #expect(set.status == 0, "\(set.output)")
            #expect(!set.output.contains(SMTPHarness.password), "the password is not shown back")
            let settings = try json(set.output)
            #expect(settings["password_set"] as? Bool == true && settings["from_name"] as? String == "Example sign-in")

            let shown = try await CommandLineTests.run(["admin", "mail", "show"], environment: environment)
            #expect(shown.status == 0, "\(shown.output)")
            #expect(try json(shown.output)["host"] as? String == "127.0.0.1")

            let tested = try await CommandLineTests.run(["admin", "mail", "test", "ops@example.com"], environment: environment)
            #expect(tested.status == 0, "\(tested.output)")
            #expect(try json(tested.output)["sent"] as? Bool == true)
            let bounced = try await CommandLineTests.run(["admin", "mail", "test", "bounce@example.com"], environment: environment)
            #expect(bounced.status != 0 && bounced.output.contains("502 mail_unavailable: the mail server answered 550"),
                    "\(bounced.output)")

            let created = try await CommandLineTests.run(
                ["admin", "user", "create", "ada", "--email", "ada@example.com"], environment: environment)
            #expect(created.status == 0, "\(created.output)")
            let userID = try #require(try json(created.output)["id"] as? String)
            #expect(try json(created.output)["email"] as? String == "ada@example.com")
            let enrolled = try await CommandLineTests.run(["admin", "enroll", userID, "--email"], environment: environment)
            #expect(enrolled.status == 0, "\(enrolled.output)")
            #expect(enrolled.output.contains("The link is mailed to the user (mail_"), "\(enrolled.output)")
            let received = try await smtp.waitFor(2)
            let invitation = try #require(received.first { $0.subject == "Your Default phone" })
            #expect(invitation.text?.hasPrefix("Go to \(server.base)/invitation?ticket=") == true, "\(invitation.text ?? "")")

            try await eventually("the invitation shows as sent") {
                let listed = try await CommandLineTests.run(["admin", "mail", "deliveries"], environment: environment)
                return ((try? json(listed.output))?["items"] as? [[String: Any]])?.first?["status"] as? String == "sent"
            }
            // An address changed, then removed: without one, an invitation is not mailed.
            let changed = try await CommandLineTests.run(["admin", "user", "update", userID, "--email", "ada@example.net"],
                                                         environment: environment)
            #expect(changed.status == 0, "\(changed.output)")
            #expect(try json(changed.output)["email"] as? String == "ada@example.net")
            let removed = try await CommandLineTests.run(["admin", "user", "update", userID, "--email", ""], environment: environment)
            #expect(removed.status == 0, "\(removed.output)")
            #expect(try json(removed.output)["email"] == nil)
            let unmailed = try await CommandLineTests.run(["admin", "enroll", userID, "--email"], environment: environment)
            #expect(unmailed.status != 0 && unmailed.output.contains("has no e-mail address"), "\(unmailed.output)")

            let deleted = try await CommandLineTests.run(["admin", "mail", "delete"], environment: environment)
            #expect(deleted.status == 0, "\(deleted.output)")
            let gone = try await CommandLineTests.run(["admin", "mail", "show"], environment: environment)
            #expect(gone.status != 0 && gone.output.contains("404 not_found"), "\(gone.output)")
        }
    }
}
