import CountersignMail
import Foundation
import Testing

/// The SMTP client against aiosmtpd: STARTTLS and implicit TLS with a login, the certificate
/// checked, each way a send fails, and the message as Python's e-mail package reads it.
@Suite struct SMTPClientTests {
    static func message(to recipient: String = "ada@example.com", subject: String = "Un nouvel appareil, « Pixel 9 », a été ajouté")
        throws -> MailMessage {
        try MailMessage(
            from: MailAddress("no-reply@example.com"), fromName: "Acmé \"sign-in\"", to: MailAddress(recipient),
            toName: "Ada Lovelace", subject: subject,
            text: "Bonjour Ada,\n\nUn nouvel appareil a été ajouté à votre compte : « Pixel 9 » 📱.\n"
                + String(repeating: "Une ligne plus longue que soixante-dix-huit caractères, ", count: 4) + "\nFin.\n",
            date: Date(timeIntervalSince1970: 1_796_515_200), messageID: "ml_01.abc@countersign.example")
    }

    static func server(_ harness: SMTPHarness, password: String = SMTPHarness.password, ca: String? = nil,
                       security: SMTPServer.Security? = nil) -> SMTPServer {
        SMTPServer(host: "127.0.0.1", port: harness.port, security: security ?? SMTPServer.Security(rawValue: harness.mode.rawValue)!,
                   username: harness.login ? SMTPHarness.user : nil, password: harness.login ? password : nil,
                   caCertificates: ca ?? harness.caPEM, heloName: "countersign.test", timeout: .seconds(10))
    }

    @Test(arguments: [SMTPHarness.Mode.starttls, .tls])
    func sendsOverTLSWithALogin(mode: SMTPHarness.Mode) async throws {
        guard SMTPHarness.available else { return }
        let harness = try await SMTPHarness.make(mode)
        defer { harness.shutdown() }
        let message = try Self.message()
        try await SMTPClient().send(message, via: Self.server(harness))
        let received = try #require(try await harness.waitFor(1).first)
        #expect(received.mailFrom == "no-reply@example.com")
        #expect(received.rcptTos == ["ada@example.com"])
        #expect(received.tls)
        #expect(received.login == SMTPHarness.user)
        #expect(received.fromName == "Acmé \"sign-in\"")
        #expect(received.fromAddress == "no-reply@example.com")
        #expect(received.to == "Ada Lovelace <ada@example.com>")
        #expect(received.subject == message.subject)
        #expect(received.messageID == "<ml_01.abc@countersign.example>")
        #expect(received.date == "Sun, 06 Dec 2026 00:00:00 +0000")
        #expect(received.autoSubmitted == "auto-generated")
        #expect(received.contentType == "text/plain")
        #expect(received.charset == "utf-8")
        // The text as sent, CRLF line ends and all: the reader's lines are the writer's.
        #expect(received.text?.replacingOccurrences(of: "\r\n", with: "\n") == message.text)
        #expect(received.defects.isEmpty)
        #expect(received.longestLine <= 78)
    }

    @Test func aPlainRelayOnTheSameHost() async throws {
        guard SMTPHarness.available else { return }
        let harness = try await SMTPHarness.make(.plain, login: false)
        defer { harness.shutdown() }
        try await SMTPClient().send(try Self.message(subject: "Plain"), via: Self.server(harness))
        let received = try #require(try await harness.waitFor(1).first)
        #expect(!received.tls)
        #expect(received.login == nil)
        #expect(received.subject == "Plain")
    }

    @Test func failuresAreTypedAndSayWhetherToTryAgain() async throws {
        guard SMTPHarness.available else { return }
        let harness = try await SMTPHarness.make(.starttls)
        defer { harness.shutdown() }
        let client = SMTPClient()
        let message = try Self.message()

        // A certificate from a CA that was not given.
        await #expect { try await client.send(message, via: Self.server(harness, ca: harness.otherCAPEM)) } throws: { error in
            guard case .tls = error as? MailError else { return false }
            return !(error as! MailError).isPermanent
        }
        // The system's roots do not know the test CA either.
        var system = Self.server(harness)
        system.caCertificates = nil
        await #expect { try await client.send(message, via: system) } throws: { error in
            if case .tls = error as? MailError { return true } else { return false }
        }
        // The wrong password.
        await #expect { try await client.send(message, via: Self.server(harness, password: "wrong")) } throws: { error in
            if case .authentication = error as? MailError { return true } else { return false }
        }
        // A recipient refused for good, and one refused for now.
        await #expect(throws: MailError.self) {
            do { try await client.send(try Self.message(to: "bounce@example.com"), via: Self.server(harness)) } catch let error as MailError {
                guard case .refused(550, _) = error, error.isPermanent else { Issue.record("\(error)"); return }
                throw error
            }
        }
        await #expect(throws: MailError.self) {
            do { try await client.send(try Self.message(to: "later@example.com"), via: Self.server(harness)) } catch let error as MailError {
                guard case .refused(451, _) = error, !error.isPermanent else { Issue.record("\(error)"); return }
                throw error
            }
        }
        #expect(try harness.received().isEmpty)
        // Nobody listening.
        harness.stop()
        await #expect { try await client.send(message, via: Self.server(harness)) } throws: { error in
            guard case .connection = error as? MailError else { return false }
            return !(error as! MailError).isPermanent
        }
    }

    /// A server that offers no STARTTLS is not sent to in the clear when STARTTLS was asked for.
    @Test func starttlsIsRequiredNotHopedFor() async throws {
        guard SMTPHarness.available else { return }
        let harness = try await SMTPHarness.make(.plain, login: false)
        defer { harness.shutdown() }
        await #expect { try await SMTPClient().send(try Self.message(), via: Self.server(harness, security: .starttls)) } throws: { error in
            if case .tls = error as? MailError { return true } else { return false }
        }
        #expect(try harness.received().isEmpty)
    }
}

/// Addresses and messages as written, without a server.
@Suite struct MailMessageTests {
    @Test func addresses() throws {
        let address = try MailAddress("ada.lovelace+tag@mail.example.com")
        #expect(address.localPart == "ada.lovelace+tag")
        #expect(address.domain == "mail.example.com")
        for bad in ["ada", "@example.com", "ada@", "a..b@example.com", ".a@example.com", "ada@exa mple.com",
                    "ada@-example.com", "ada@example..com", "\"ada\"@example.com", "josé@example.com",
                    "ada@exämple.com", "ada@[127.0.0.1]", "ada@example.com>\r\nRCPT TO:<eve@example.com",
                    String(repeating: "a", count: 65) + "@example.com"] {
            #expect(throws: MailError.self, "\(bad)") { try MailAddress(bad) }
        }
    }

    @Test func headerValuesCannotAddHeaders() throws {
        var message = try SMTPClientTests.message(subject: "Hello\r\nBcc: eve@example.com")
        #expect { try message.rendered() } throws: { error in
            guard case .invalidHeader("subject", _) = error as? MailError else { return false }
            return (error as! MailError).isPermanent
        }
        message.subject = "Hello"
        message.fromName = "Acme\nBcc: eve@example.com"
        #expect(throws: MailError.self) { try message.rendered() }
        message.fromName = "Acme"
        message.messageID = "x>\r\nBcc: eve@example.com"
        #expect(throws: MailError.self) { try message.rendered() }
    }

    @Test func rendering() throws {
        var message = try SMTPClientTests.message(subject: "A short subject")
        message.fromName = "Acme"
        let text = String(decoding: try message.rendered(), as: UTF8.self)
        let head = text.components(separatedBy: "\r\n\r\n")[0]
        #expect(head == """
            Date: Sun, 06 Dec 2026 00:00:00 +0000\r
            From: "Acme" <no-reply@example.com>\r
            To: "Ada Lovelace" <ada@example.com>\r
            Subject: A short subject\r
            Message-ID: <ml_01.abc@countersign.example>\r
            Auto-Submitted: auto-generated\r
            MIME-Version: 1.0\r
            Content-Type: text/plain; charset=utf-8\r
            Content-Transfer-Encoding: base64
            """)
        // Every line ends in CRLF, and none is longer than 78.
        #expect(!text.replacingOccurrences(of: "\r\n", with: "").contains("\n"))
        #expect(text.components(separatedBy: "\r\n").allSatisfy { $0.utf8.count <= 78 })
        // Text that looks like an encoded word is encoded, so that it reads as itself.
        message.subject = "=?utf-8?b?SGk=?="
        let encoded = String(decoding: try message.rendered(), as: UTF8.self)
        #expect(encoded.contains("Subject: =?utf-8?b?PT91dGYtOD9iP1NHaz0/PQ==?="))
    }

    /// FuzzMail's find: a short printable name that its escapes make too long for one line (47
    /// backslashes are 94 quoted) is written as encoded words, which fold, and reads back.
    @Test func aNameLongOnceEscapedIsEncoded() throws {
        var message = try SMTPClientTests.message(subject: "A short subject")
        let name = String(repeating: "\\", count: 47) + "/S"
        message.fromName = name
        let text = String(decoding: try message.rendered(), as: UTF8.self)
        #expect(text.components(separatedBy: "\r\n").allSatisfy { $0.utf8.count <= 78 }, "\(text)")
        let head = text.components(separatedBy: "\r\n\r\n")[0].replacingOccurrences(of: "\r\n ", with: " ")
        let from = try #require(head.components(separatedBy: "\r\n").first { $0.hasPrefix("From: ") })
        let words = from.dropFirst("From: ".count).components(separatedBy: " ").filter { $0.hasPrefix("=?utf-8?b?") }
        let read = words.compactMap { Data(base64Encoded: String($0.dropFirst(10).dropLast(2))) }
            .map { String(decoding: $0, as: UTF8.self) }.joined()
        #expect(read == name)
        // A name that fits once escaped stays a quoted string.
        message.fromName = #"Ops "night" \ desk"#
        #expect(String(decoding: try message.rendered(), as: UTF8.self).contains(#"From: "Ops \"night\" \\ desk" <no-reply@example.com>"#))
    }
}
