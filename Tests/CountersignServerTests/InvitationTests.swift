import CountersignCore
import CountersignKit
import Foundation
import Testing
@testable import CountersignServer

/// Enrollment invitations: the link of a new ticket opens a page with its QR code, which waits
/// for the phone and then leads to the account page.
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

    /// The enrollment URI the page shows, HTML entities undone.
    static func enrollmentURI(in html: String) -> String? {
        guard let start = html.range(of: "<code id=\"enrollment-uri\">"),
              let end = html.range(of: "</code>", range: start.upperBound..<html.endIndex) else { return nil }
        return String(html[start.upperBound..<end.lowerBound]).replacingOccurrences(of: "&amp;", with: "&")
            .replacingOccurrences(of: "&#x3D;", with: "=").replacingOccurrences(of: "&#x2F;", with: "/")
    }
}
