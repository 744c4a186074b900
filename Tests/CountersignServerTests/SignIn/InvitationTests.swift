import CountersignCore
import CountersignKit
import Foundation
import Testing
@testable import CountersignServer

/// Enrollment invitations: the link of a new ticket opens a page with its QR code, which waits
/// for the phone and then starts the invitee's sign-in, approved on that phone.
@Suite("Enrollment invitations")
struct InvitationTests {
    @Test("A first-time user opens the invitation, enrolls the phone from the page, and the page learns it")
    func invitationEnrollsAFirstPhone() async throws {
        try await TestServer.routed { server in
            let userID = try await server.createUser("carol")
            let ticket = try await server.admin("POST", "/admin/v1/tenants/default/users/\(userID)/enrollment-tickets")
            let invitation = try #require(ticket["invitation_url"] as? String)
            #expect(invitation.hasPrefix(server.base + "/invitation?ticket=cst_"))
            let visitor = PageVisitor(server)
            let page = try await visitor.get(String(invitation.dropFirst(server.base.count)))
            #expect(page.status == 200)
            #expect(page.text.contains("src=\"data:image/png;base64,"))
            #expect(page.header("Referrer-Policy") == "no-referrer")
            let uri = try #require(Self.enrollmentURI(in: page.text))
            #expect(uri == ticket["enrollment_uri"] as? String)
            let secret = try #require(page.hidden("ticket"))

            let (kit, _) = server.authenticator()
            let enrollment = try await kit.enroll(uri: uri, deviceName: "Carol's phone", platform: .android)
            #expect(enrollment.user.username == "carol")
            let enrolled = try await visitor.post("/invitation/wait", [("ticket", secret)])
            #expect(enrolled["state"] as? String == "enrolled")

            let again = try await visitor.get(String(invitation.dropFirst(server.base.count)))
            #expect(again.status == 400)
            #expect(again.text.contains("already used"))
        }
    }

    @Test("An expired, withdrawn or unknown invitation gets its own message and no QR code")
    func unusableInvitations() async throws {
        try await TestServer.routed { server in
            let userID = try await server.createUser("carol")
            let first = try await server.admin("POST", "/admin/v1/tenants/default/users/\(userID)/enrollment-tickets")
            let second = try await server.admin("POST", "/admin/v1/tenants/default/users/\(userID)/enrollment-tickets")
            let withdrawnID = try #require((second["ticket"] as? [String: any Sendable])?["id"] as? String)
            #expect(try await server.admin(
                "DELETE", "/admin/v1/tenants/default/users/\(userID)/enrollment-tickets/\(withdrawnID)").status == 204)
            let visitor = PageVisitor(server)
            func page(_ answer: TestServer.Answer) async throws -> String {
                try await visitor.get(String(try #require(answer["invitation_url"] as? String).dropFirst(server.base.count))).text
            }
            #expect(try await page(second).contains("withdrawn"))
            server.clock.advance(by: EnrollmentTicket.defaultLifetime + 1)
            let expired = try await page(first)
            #expect(expired.contains("expired"))
            #expect(!expired.contains("data:image/png"))
            let unknown = try await visitor.get("/invitation?ticket=cst_nope")
            #expect(unknown.status == 400)
            #expect(unknown.text.contains("not valid here"))
            let bare = try await visitor.get("/invitation")
            #expect(bare.text.contains("names no invitation"))
        }
    }

    @Test("Once the phone has enrolled, the invitation's sign-in is the invitee's, their username filled in; before, the page asks to scan first")
    func invitationSignsTheInviteeIn() async throws {
        try await TestServer.routed { server in
            let userID = try await server.createUser("carol")
            let ticket = try await server.admin("POST", "/admin/v1/tenants/default/users/\(userID)/enrollment-tickets")
            let visitor = PageVisitor(server)
            let page = try await visitor.get(String(try #require(ticket["invitation_url"] as? String).dropFirst(server.base.count)))
            #expect(page.text.contains("You were invited to sign in as <strong id=\"invitee\">carol</strong>"))
            let secret = try #require(page.hidden("ticket"))

            let early = try await visitor.post("/invitation/sign-in", [("ticket", secret)])
            #expect(early.status == 200)
            #expect(early.text.contains("Your phone is not set up yet. Scan the code with the app first; then sign in."))
            #expect(early.text.contains("src=\"data:image/png;base64,"), "the code is still there to scan")
            #expect(!early.text.contains("name=\"attempt\""), "no sign-in begins before the phone is enrolled")

            let (kit, _) = server.authenticator()
            _ = try await kit.enroll(uri: try #require(Self.enrollmentURI(in: page.text)), deviceName: "Carol's phone", platform: .android)
            let signIn = try await visitor.post("/invitation/sign-in", [("ticket", secret)])
            #expect(signIn.status == 200)
            #expect(signIn.text.contains("<strong>your Default account</strong>"))
            #expect(signIn.text.contains("value=\"carol\""), "the username is filled in")
            #expect(signIn.text.contains("name=\"attempt\""))
        }
    }

    @Test("An invitation that expires while its page waits is answered as reloading the page would answer it")
    func expiryWhileThePageWaits() async throws {
        try await TestServer.routed { server in
            let userID = try await server.createUser("carol")
            let ticket = try await server.admin("POST", "/admin/v1/tenants/default/users/\(userID)/enrollment-tickets")
            let invitation = String(try #require(ticket["invitation_url"] as? String).dropFirst(server.base.count))
            let visitor = PageVisitor(server)
            let secret = try #require(try await visitor.get(invitation).hidden("ticket"))
            server.clock.advance(by: EnrollmentTicket.defaultLifetime + 1)
            let answer = try await visitor.post("/invitation/wait", [("ticket", secret)])
            #expect(answer.status == 400 && answer["error"] as? String == "invalid_ticket")
            #expect(answer["error_description"] as? String == "This invitation has expired. Ask for a new one.")
            let reloaded = try await visitor.get(invitation)
            #expect(reloaded.text.contains("This invitation cannot be used"))
            #expect(reloaded.text.contains("This invitation has expired. Ask for a new one."))
            let signIn = try await visitor.post("/invitation/sign-in", [("ticket", secret)])
            #expect(signIn.status == 400)
            #expect(signIn.text.contains("This invitation has expired. Ask for a new one."))
        }
    }

    @Test("An invitation withdrawn while its page waits is answered as reloading the page would answer it")
    func withdrawalWhileThePageWaits() async throws {
        try await TestServer.routed { server in
            let userID = try await server.createUser("carol")
            let ticket = try await server.admin("POST", "/admin/v1/tenants/default/users/\(userID)/enrollment-tickets")
            let invitation = String(try #require(ticket["invitation_url"] as? String).dropFirst(server.base.count))
            let visitor = PageVisitor(server)
            let secret = try #require(try await visitor.get(invitation).hidden("ticket"))
            let ticketID = try #require((ticket["ticket"] as? [String: any Sendable])?["id"] as? String)
            #expect(try await server.admin(
                "DELETE", "/admin/v1/tenants/default/users/\(userID)/enrollment-tickets/\(ticketID)").status == 204)
            let answer = try await visitor.post("/invitation/wait", [("ticket", secret)])
            #expect(answer.status == 400 && answer["error"] as? String == "invalid_ticket")
            #expect(answer["error_description"] as? String == "This invitation was withdrawn. Ask for a new one.")
            #expect(try await visitor.get(invitation).text.contains("This invitation was withdrawn. Ask for a new one."))
        }
    }

    /// The enrollment URI the page shows, HTML entities undone.
    static func enrollmentURI(in html: String) -> String? {
        guard let start = html.range(of: "<code id=\"enrollment-uri\">"),
              let end = html.range(of: "</code>", range: start.upperBound..<html.endIndex) else { return nil }
        return String(html[start.upperBound..<end.lowerBound]).replacingOccurrences(of: "&amp;", with: "&")
            .replacingOccurrences(of: "&#x3D;", with: "=").replacingOccurrences(of: "&#x2F;", with: "/")
    }
}
