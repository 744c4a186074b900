import CountersignCore
import CountersignKit
import Foundation
import HummingbirdTesting
import Testing
@testable import CountersignServer
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The self-service account pages (`/account`), driven in memory: a person signs in by
/// approving on their SDK phone, then looks at and changes their phones, enrolls another by its
/// QR code, and reports a request they did not make. Where storage matters, on both engines.
@Suite("Account pages: phones, enrollment, activity, and 'This wasn't me'")
struct AccountPageTests {
    @Test("Without a session /account signs in by the phone and comes back with a session to a page listing the phone", arguments: Engine.available)
    func signInByApprovingOnThePhoneListsThePhone(engine: Engine) async throws {
        try await AccountBench.run(engine) { bench in
            let page = try await bench.account()
            #expect(page.header("Content-Security-Policy")?.contains("script-src 'self'") == true)
            #expect(page.header("Cache-Control") == "no-store")
            #expect(page.text.contains(#"<strong id="username">alice</strong>"#))
            #expect(page.text.contains(#"id="device-\#(bench.user.enrollment.deviceID)""#))
            #expect(page.text.contains("<h3>alice&#39;s phone</h3>"))
            #expect(page.text.contains("<dd>Linux</dd>"))
            #expect(page.text.contains("<dd>none: the app looks for requests itself</dd>"))
            #expect(page.text.contains(#"action="/logout""#))
            #expect(page.text.contains("Signed in"), "the sign-in is in the recent activity")
            #expect(page.text.contains("Request approved"), "and so is the approval on the phone")
            #expect(page.hidden("csrf") != nil)
        }
    }

    @Test("Signing out ends the session: /account asks to sign in again, and the signed-out page leads back in")
    func signOutEndsTheSession() async throws {
        try await AccountBench.run(.sqlite) { bench in
            let out = try await bench.post("/logout", [])
            #expect(out.text.contains("You are signed out"))
            #expect(out.text.contains(#"<a href="/account" id="sign-in-again">Sign in again</a>"#))
            let again = try await bench.browser.get("/account")
            #expect(again.status == 200 && again.hidden("attempt") != nil && !again.text.contains("Your phones"))
        }
    }

    @Test("A sign-out link or a post without the session's token asks first and ends nothing; the answer to the question ends it",
          arguments: ["GET", "POST"])
    func signOutWithoutTheTokenAsksFirst(method: String) async throws {
        try await AccountBench.run(.sqlite) { bench in
            let question = method == "GET" ? try await bench.browser.get("/logout?state=s1")
                : try await bench.browser.post("/logout", [("state", "s1")])
            #expect(question.status == 200 && question.text.contains("Sign out?"), "\(question.text.prefix(500))")
            #expect(question.text.contains(#"<strong id="username">alice</strong>"#))
            #expect(question.hidden("state") == "s1", "the request's parameters are carried on")
            #expect(try await bench.account().text.contains("Your phones"), "nothing was ended")
            #expect(try await bench.audit("session.ended").isEmpty)

            let out = try await bench.browser.post("/logout", [("csrf", try #require(question.hidden("csrf")))])
            #expect(out.text.contains("You are signed out"))
            #expect(try await bench.browser.get("/account").hidden("attempt") != nil)
        }
    }

    @Test("A sign-out link with a malformed query gets the error page, and the session stays", arguments: [
        "?a=1&a=2", "?state=1&state=2", "?state=%00",
    ])
    func malformedSignOutQueryIsAPage(query: String) async throws {
        try await AccountBench.run(.sqlite) { bench in
            let out = try await bench.browser.get("/logout" + query)
            #expect(out.status == 400 && out.text.contains("invalid_request"))
            let again = try await bench.browser.get("/account")
            #expect(again.text.contains("Your phones"), "nothing was ended")
        }
    }

    @Test("The account page lives below each tenant's base, and its forms post there")
    func eachTenantHasItsOwnAccountPage() async throws {
        try await TestServer.routed { server in
            let created = try await server.admin("POST", "/admin/v1/tenants", json: ["slug": "acme", "display_name": "Acme Bank"])
            #expect(created.status == 201, "\(created.errorDescription ?? "")")
            let user = try await server.enrolledUser("carol", tenant: "acme")
            let browser = AccountBrowser(server: server, send: { try await server.send($0) })
            let back = try await AccountBench.signIn(browser, user: user, base: "/t/acme")
            #expect(back.status == 303)
            #expect(back.header("Location") == server.base + "/t/acme/account")
            let page = try await browser.get("/t/acme/account")
            #expect(page.text.contains("Acme Bank") && page.text.contains("carol&#39;s phone"))
            #expect(page.text.contains(#"action="/t/acme/account/devices/\#(user.enrollment.deviceID)/rename""#))
            #expect(page.text.contains(#"action="/t/acme/logout""#))
            let elsewhere = try await browser.get("/account")
            #expect(elsewhere.hidden("attempt") != nil, "the session is the tenant's, not the default tenant's")
        }
    }

    // MARK: - Renaming

    @Test("A good name renames the phone, recorded as done by the user")
    func renameAPhone() async throws {
        try await AccountBench.run(.sqlite) { bench in
            let renamed = try await bench.post("/account/devices/\(bench.deviceID)/rename", [("name", "  Pixel 9  ")])
            #expect(renamed.status == 303)
            #expect(renamed.header("Location") == "/account")
            #expect(try await bench.device(bench.deviceID)?.name == "Pixel 9")
            #expect(try await bench.account().text.contains("<h3>Pixel 9</h3>"))
            let events = try await bench.audit("device.renamed")
            #expect(events.first?["actor"] as? String == "user:\(bench.user.userID)")
        }
    }

    @Test("A refused name is shown beside its field with what was typed, and changes nothing",
          arguments: [("", "Enter a name for the phone."), ("   ", "Enter a name for the phone."),
                      (String(repeating: "x", count: 65), "A name is at most 64 characters; this one has 65."),
                      ("Tab\there", "A name cannot contain control characters such as tabs or line breaks.")])
    func refusedNameKeepsWhatWasTyped(typed: String, message: String) async throws {
        try await AccountBench.run(.sqlite) { bench in
            let page = try await bench.post("/account/devices/\(bench.deviceID)/rename", [("name", typed)])
            #expect(page.status == 400)
            let id = bench.deviceID
            #expect(page.text.contains(#"value="\#(typed)" aria-invalid="true" aria-describedby="name-error-\#(id)""#))
            #expect(page.text.contains(#"<p class="field-error" id="name-error-\#(id)">\#(message)</p>"#))
            #expect(try await bench.device(id)?.name == "alice's phone")
        }
    }

    // MARK: - Forged forms, other people's things, no session

    @Test("A form without the session's CSRF token is refused with 403 and changes nothing",
          arguments: [nil, "forged-token", String(repeating: "A", count: 32)])
    func formsWithoutTheSessionsTokenChangeNothing(token: String?) async throws {
        try await AccountBench.run(.sqlite) { bench in
            let csrf = token.map { [("csrf", $0)] } ?? []
            let posts: [(String, [(String, String)])] = [
                ("/account/devices/\(bench.deviceID)/rename", [("name", "Taken over")]),
                ("/account/devices/\(bench.deviceID)/remove", [("confirm", "yes")]),
                ("/account/enroll", []),
                ("/account/approvals/\(bench.signInRequestID)/not-me", []),
            ]
            for (path, form) in posts {
                let answer = try await bench.browser.post(path, csrf + form)
                #expect(answer.status == 403, "\(path)")
                #expect(answer.text.contains("invalid_csrf_token"), "\(path)")
            }
            let wait = try await bench.browser.post("/account/enroll/wait", csrf + [("ticket", "tkt_unknown")])
            #expect(wait.status == 403 && wait["error"] as? String == "invalid_csrf_token")
            let device = try #require(try await bench.device(bench.deviceID))
            #expect(device.name == "alice's phone" && device.status == .active)
            let tickets = try await bench.audit("enrollment_ticket.created")
            #expect(tickets.count == 1 && tickets.first?["actor"] as? String != "user:\(bench.user.userID)",
                    "only the administrator's ticket that enrolled the first phone")
            #expect(try await bench.audit(NotRequestedReport.event).isEmpty)
        }
    }

    @Test("Another user's phone or request, or a phone in another tenant, is not found, and nothing changes")
    func otherPeoplesThingsAreNotFound() async throws {
        try await AccountBench.run(.sqlite) { bench in
            let server = bench.server
            let bob = try await server.enrolledUser("bob")
            _ = try await server.admin("POST", "/admin/v1/tenants", json: ["slug": "acme", "display_name": "Acme Bank"])
            let carol = try await server.enrolledUser("carol", tenant: "acme")
            for device in [bob.enrollment.deviceID, carol.enrollment.deviceID, "dev_unknown"] {
                let rename = try await bench.post("/account/devices/\(device)/rename", [("name", "Mine now")])
                #expect(rename.status == 404 && rename.text.contains("unknown_device"), "\(device)")
                let remove = try await bench.post("/account/devices/\(device)/remove", [("confirm", "yes")])
                #expect(remove.status == 404, "\(device)")
            }
            #expect(try await bench.device(bob.enrollment.deviceID)?.name == "bob's phone")
            #expect(try await bench.device(carol.enrollment.deviceID)?.status == .active)

            let client = try await server.createClient()
            _ = try await server.startApproval(client, user: "bob")
            let bobs = try #require(try await bob.kit.pendingRequests().first)
            _ = try await bob.kit.approve(try await bob.kit.details(for: bobs))
            let report = try await bench.post("/account/approvals/\(bobs.id)/not-me", [])
            #expect(report.status == 404 && report.text.contains("unknown_request"))
            #expect(try await bench.audit(NotRequestedReport.event).isEmpty)
            _ = try await server.startApproval(client, user: "bob")
        }
    }

    @Test("Only an approved request can be reported: a denied one is refused with 409")
    func deniedRequestIsNotReported() async throws {
        try await AccountBench.run(.sqlite) { bench in
            let client = try await bench.server.createClient()
            _ = try await bench.server.startApproval(client, user: "alice")
            let request = try #require(try await bench.user.kit.pendingRequests().first)
            _ = try await bench.user.kit.deny(try await bench.user.kit.details(for: request))
            let page = try await bench.account()
            #expect(page.text.contains("Request denied") && !page.text.contains("not-me-\(request.id)"))
            let report = try await bench.post("/account/approvals/\(request.id)/not-me", [])
            #expect(report.status == 409 && report.text.contains("request_not_approved"))
            #expect(try await bench.audit(NotRequestedReport.event).isEmpty)
        }
    }

    @Test("A form posted without a live session goes back to /account to sign in, and changes nothing")
    func signedOutPostGoesBackToSignIn() async throws {
        try await AccountBench.run(.sqlite) { bench in
            let stranger = AccountBrowser(server: bench.server, send: bench.browser.send)
            let answer = try await stranger.post("/account/devices/\(bench.deviceID)/rename", [("csrf", bench.csrf), ("name", "X")])
            #expect(answer.status == 303)
            #expect(answer.header("Location") == "/account")
            #expect(try await bench.device(bench.deviceID)?.name == "alice's phone")
        }
    }

    // MARK: - Removing

    @Test("Removing the only phone asks first, then removes it, recorded as done by the user; the session it signed in ends",
          arguments: Engine.available)
    func removingTheOnlyPhoneAsksFirst(engine: Engine) async throws {
        try await AccountBench.run(engine) { bench in
            let path = "/account/devices/\(bench.deviceID)/remove"
            let question = try await bench.post(path, [])
            #expect(question.status == 200)
            #expect(question.text.contains("This is your only phone; after removing it you cannot sign in until you enroll another."))
            #expect(question.hidden("confirm") == "yes")
            #expect(question.text.contains(#"action="\#(path)""#))
            #expect(try await bench.device(bench.deviceID)?.status == .active, "asking removes nothing")

            let removed = try await bench.post(path, [("confirm", "yes")])
            #expect(removed.status == 303)
            #expect(try await bench.device(bench.deviceID)?.status == .deleted)
            let events = try await bench.audit("device.unenrolled")
            #expect(events.count == 1)
            #expect(events.first?["actor"] as? String == "user:\(bench.user.userID)")
            #expect(events.first?["target_id"] as? String == bench.deviceID)
            let page = try await bench.browser.get("/account")
            #expect(page.hidden("attempt") != nil && !page.text.contains("Your phones"), "the sign-in form, not the account")
        }
    }

    @Test("Removing one of two phones needs no confirmation")
    func removingOneOfTwoPhones() async throws {
        try await AccountBench.run(.sqlite) { bench in
            let tablet = try await bench.server.enrollDevice(for: bench.user.userID, username: "alice", name: "Tablet")
            let removed = try await bench.post("/account/devices/\(tablet.enrollment.deviceID)/remove", [])
            #expect(removed.status == 303)
            #expect(try await bench.device(tablet.enrollment.deviceID)?.status == .deleted)
            #expect(try await bench.device(bench.deviceID)?.status == .active)
        }
    }

    // MARK: - Enrolling

    @Test("Enrolling shows a QR code and the URI of a fresh ticket; once a phone enrolls with it the wait says so and the phone is listed",
          arguments: Engine.available)
    func enrollAnotherPhoneByItsQRCode(engine: Engine) async throws {
        try await AccountBench.run(engine) { bench in
            let page = try await bench.post("/account/enroll", [])
            #expect(page.status == 200)
            let uri = try #require(AccountBench.capture(#"<code id="enrollment-uri">([^<]+)</code>"#, in: page.text))
                .replacingOccurrences(of: "&amp;", with: "&")
            let parsed = try EnrollmentURI(parsing: uri)
            #expect(parsed.ticket.hasPrefix(EnrollmentTicket.secretPrefix))
            #expect(parsed.server.absoluteString == bench.server.base)
            let image = try #require(AccountBench.capture(#"<img class="qr" id="qr" src="data:image/png;base64,([A-Za-z0-9+/=]+)""#,
                                                          in: page.text))
            let png = try #require(Data(base64Encoded: image))
            #expect(png.starts(with: [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]))
            if ZXingReader.isAvailable {
                #expect(try await ZXingReader.decode([png]).first?.first?.text == uri, "the QR code holds the URI shown")
            }
            #expect(page.text.contains(#"<script src="/assets/account-enroll.js" defer></script>"#))
            #expect(page.text.contains(#"<a class="button secondary" id="done" href="/account">Done</a>"#))
            let ticket = try #require(page.hidden("ticket"))

            let (kit, _) = bench.server.authenticator()
            let enrollment = try await kit.enroll(uri: uri, deviceName: "Work phone", platform: .android)
            let wait = try await bench.post("/account/enroll/wait", [("ticket", ticket)])
            #expect(wait.status == 200 && wait["state"] as? String == "enrolled")
            let account = try await bench.account()
            #expect(account.text.contains(#"id="device-\#(enrollment.deviceID)""#) && account.text.contains("<h3>Work phone</h3>"))
            #expect(account.text.contains("<dd>Android</dd>"))
            let issued = try await bench.audit("enrollment_ticket.created")
            #expect(issued.first?["actor"] as? String == "user:\(bench.user.userID)")
        }
    }

    @Test("Adding a phone asks for a fresh sign-in when the last one is older than ten minutes, and issues no ticket")
    func addingAPhoneNeedsAFreshSignIn() async throws {
        try await AccountBench.run(.sqlite) { bench in
            bench.server.clock.advance(by: AccountFlow.freshSignIn + 1)
            _ = try await bench.account()          // the session is still live: it is used, not idle
            let page = try await bench.post("/account/enroll", [])
            #expect(page.hidden("attempt") != nil, "the username form of a new sign-in")
            #expect(page.text.contains(#"value="alice""#), "with the username filled in")
            #expect(!page.text.contains("data:image/png"))
            #expect(try await bench.audit("enrollment_ticket.created").allSatisfy {
                $0["actor"] as? String != "user:\(bench.user.userID)"
            }, "no ticket issued by the user")
        }
    }

    @Test("The wait says an expired ticket is expired, and knows no ticket of another id")
    func waitForAnExpiredTicket() async throws {
        try await AccountBench.run(.sqlite) { bench in
            let ticket = try #require(try await bench.post("/account/enroll", []).hidden("ticket"))
            bench.server.clock.advance(by: EnrollmentTicket.defaultLifetime + 1)
            let wait = try await bench.post("/account/enroll/wait", [("ticket", ticket)])
            #expect(wait.status == 200 && wait["state"] as? String == "expired")
            let unknown = try await bench.post("/account/enroll/wait", [("ticket", "tkt_unknown")])
            #expect(unknown.status == 404 && unknown["error"] as? String == "unknown_ticket")
        }
    }

    @Test("The wait answers a browser without a session with the scripts' one error shape, and where to go")
    func waitWithoutASession() async throws {
        try await AccountBench.run(.sqlite) { bench in
            let ticket = try #require(try await bench.post("/account/enroll", []).hidden("ticket"))
            let stranger = AccountBrowser(server: bench.server, send: { try await bench.server.send($0) })
            let wait = try await stranger.post("/account/enroll/wait", [("ticket", ticket)])
            #expect(wait.status == 401 && wait["error"] as? String == "login_required")
            #expect(wait["redirect"] as? String == "/account" && wait["state"] == nil)
            #expect(wait["error_description"] as? String == "You are signed out.")
        }
    }

    // MARK: - "This wasn't me"

    @Test("'This wasn't me' on an approval pauses new requests for the user, is audited as theirs, and counts once",
          arguments: Engine.available)
    func thisWasntMePausesNewRequests(engine: Engine) async throws {
        try await AccountBench.run(engine) { bench in
            let server = bench.server
            let client = try await server.createClient()
            _ = try await server.startApproval(client, user: "alice")
            let request = try #require(try await bench.user.kit.pendingRequests().first)
            _ = try await bench.user.kit.approve(try await bench.user.kit.details(for: request))
            let page = try await bench.account()
            #expect(page.text.contains(#"action="/account/approvals/\#(request.id)/not-me""#))
            #expect(page.text.contains("Online banking"), "the approval names its client")

            let reported = try await bench.post("/account/approvals/\(request.id)/not-me", [])
            #expect(reported.status == 200 && reported.text.contains("Thank you for reporting it"))
            let refused = try await server.bcAuthorize(client, [("scope", "openid"), ("login_hint", "alice")])
            #expect(refused.status == 403 && refused.error == "access_denied")
            let events = try await bench.audit(NotRequestedReport.event)
            #expect(events.count == 1)
            #expect(events.first?["actor"] as? String == "user:\(bench.user.userID)")
            #expect(events.first?["target_id"] as? String == request.id)
            let details = try #require(events.first?["details"] as? [String: any Sendable])
            #expect(details["device_id"] as? String == bench.deviceID, "the device that approved it")
            #expect(details["requests_suppressed_until"] != nil)

            let again = try await bench.post("/account/approvals/\(request.id)/not-me", [])
            #expect(again.text.contains("Already reported"))
            #expect(try await bench.audit(NotRequestedReport.event).count == 1)
            let after = try await bench.account()
            #expect(after.text.contains(#"id="paused""#) && after.text.contains("Reported as not requested"))
            #expect(!after.text.contains("not-me-\(request.id)"))
        }
    }
}

/// A person at the account pages: a browser, the server, and the user signed in by approving
/// on their SDK phone.
struct AccountBench: Sendable {
    let server: TestServer
    let browser: AccountBrowser
    let user: EnrolledUser
    /// The account page's CSRF token.
    let csrf: String
    /// The request the sign-in approved.
    let signInRequestID: String

    var deviceID: String { user.enrollment.deviceID }

    /// Runs `body` with alice signed in to the default tenant's account page, on a server on
    /// `engine` whose router is driven in memory (on PostgreSQL the server also listens; its
    /// phone talks to it over HTTP).
    static func run(_ engine: Engine, _ body: @escaping @Sendable (AccountBench) async throws -> Void) async throws {
        switch engine {
        case .sqlite:
            try await TestServer.routed { server in
                try await body(try await signedIn(server, send: { try await server.send($0) }))
            }
        case .postgres:
            try await TestServer.with(.postgres) { server in
                try await server.server.application.test(.router) { client in
                    try await body(try await signedIn(server, send: { request in
                        let path = String(try #require(request.url?.absoluteString).dropFirst(server.base.count))
                        return try await TestServer.route(request, path: path, through: client)
                    }))
                }
            }
        }
    }

    private static func signedIn(_ server: TestServer, send: @escaping AccountBrowser.Send) async throws -> AccountBench {
        let user = try await server.enrolledUser("alice")
        let browser = AccountBrowser(server: server, send: send)
        let back = try await signIn(browser, user: user, base: "")
        #expect(back.status == 303, "\(back.text.prefix(500))")
        #expect(back.header("Location") == server.base + "/account")
        let page = try await browser.get("/account")
        #expect(page.status == 200, "\(page.text.prefix(500))")
        let requestID = try #require(try await server.auditEvents("approval.approved").first?["target_id"] as? String)
        return AccountBench(server: server, browser: browser, user: user, csrf: try #require(page.hidden("csrf")),
                            signInRequestID: requestID)
    }

    /// Signs in at `<base>/account` as `user`, approving with the SDK; the answer is the
    /// redirect back to the account page.
    static func signIn(_ browser: AccountBrowser, user: EnrolledUser, base: String) async throws -> TestServer.Answer {
        let form = try await browser.get(base + "/account")
        #expect(form.status == 200 && form.text.contains("Sign in"), "\(form.text.prefix(500))")
        let attempt = try #require(form.hidden("attempt"))
        let waiting = try await browser.post(base + "/authorize/sign-in", [("attempt", attempt), ("username", user.username)])
        #expect(waiting.text.contains("Approve on your phone"), "\(waiting.text.prefix(800))")
        let request = try #require(try await user.kit.pendingRequests().first)
        _ = try await user.kit.approve(try await user.kit.details(for: request))
        return try await browser.post(base + "/authorize/continue", [("attempt", attempt)])
    }

    func account() async throws -> TestServer.Answer {
        let page = try await browser.get("/account")
        #expect(page.status == 200, "\(page.text.prefix(500))")
        return page
    }

    /// A form post of the account pages, with the session's CSRF token.
    func post(_ path: String, _ form: [(String, String)]) async throws -> TestServer.Answer {
        try await browser.post(path, [("csrf", csrf)] + form)
    }

    func device(_ id: String) async throws -> Device? {
        try await SQLDeviceRepository().find(id: id, on: server.database)
    }

    /// The default tenant's audit events of `action`, newest first.
    func audit(_ action: String) async throws -> [[String: any Sendable]] {
        try await server.auditEvents(action)
    }

    /// The first capture group of `pattern` in `text`.
    static func capture(_ pattern: String, in text: String) -> String? {
        guard let regex = try? Regex(pattern), let match = text.firstMatch(of: regex), match.output.count > 1 else { return nil }
        return match.output[1].substring.map(String.init)
    }
}

extension TestServer {
    /// The default tenant's audit events of `action`, newest first, as the administration API lists them.
    fileprivate func auditEvents(_ action: String) async throws -> [[String: any Sendable]] {
        let answer = try await admin("GET", "/admin/v1/tenants/default/audit?limit=200")
        #expect(answer.status == 200, "\(answer.errorDescription ?? "")")
        let items = try #require(answer["items"] as? [[String: any Sendable]])
        return items.filter { $0["action"] as? String == action }
    }
}
