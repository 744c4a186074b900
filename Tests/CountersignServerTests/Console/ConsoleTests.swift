import CountersignCore
import CountersignKit
import Crypto
import Foundation
import Testing
@testable import CountersignServer

/// The console, driven in memory: an administrator signs in through Countersign's own code flow
/// (approving on their SDK phone), and every action is an administration API call with the
/// session's key, so rights, tenant isolation and the audit are the API's.
@Suite("Console: sign-in, users, invitations, CSRF, sign-out, tenants")
struct ConsoleTests {
    /// An administrator signed in to the console of `tenant`.
    struct Bench: Sendable {
        let server: TestServer
        let browser: AccountBrowser
        let admin: EnrolledUser
        let base: String
        let csrf: String

        func post(_ path: String, _ form: [(String, String)]) async throws -> TestServer.Answer {
            try await browser.post(base + path, [("csrf", csrf)] + form)
        }
    }

    /// Runs `body` with `admin` (a user of `tenant` with `role`) signed in to that tenant's console.
    static func signedIn(tenant: String = "default", role: String = "tenant-admin",
                         _ body: @escaping @Sendable (Bench) async throws -> Void) async throws {
        try await TestServer.routed { server in
            if tenant != "default" {
                let made = try await server.admin("POST", "/admin/v1/tenants", json: ["slug": tenant, "display_name": "Acme"])
                #expect(made.status == 201)
            }
            let admin = try await server.enrolledUser("root", tenant: tenant)
            let granted = try await server.admin(
                "PUT", "/admin/v1/tenants/\(tenant)/users/\(admin.userID)/console-role", json: ["role": role])
            #expect(granted.status == 200, "\(granted.errorDescription ?? "")")
            let browser = AccountBrowser(server: server, send: { try await server.send($0) })
            let base = tenant == "default" ? "" : "/t/\(tenant)"
            let dashboard = try await signIn(browser, admin, base: base)
            #expect(dashboard.status == 200, "\(dashboard.text.prefix(600))")
            #expect(dashboard.text.contains("Dashboard"))
            try await body(Bench(server: server, browser: browser, admin: admin, base: base,
                                 csrf: try #require(dashboard.hidden("csrf"))))
        }
    }

    /// The code flow as the browser walks it: the console sends it to `/authorize`, the person
    /// names themselves and approves on the phone, the authorization endpoint sends the code back
    /// to the console's callback, which opens the session. Returns the dashboard.
    static func signIn(_ browser: AccountBrowser, _ user: EnrolledUser, base: String) async throws -> TestServer.Answer {
        let start = try await browser.get(base + "/console")
        #expect(start.status == 303)
        let authorize = try #require(start.header("Location"))
        #expect(authorize.hasPrefix(base + "/authorize?") && authorize.contains("code_challenge_method=S256"))
        let form = try await browser.get(authorize)
        let attempt = try #require(form.hidden("attempt"), "\(form.text.prefix(600))")
        _ = try await browser.post(base + "/authorize/sign-in", [("attempt", attempt), ("username", user.username)])
        let request = try #require(try await user.kit.pendingRequests().first)
        _ = try await user.kit.approve(try await user.kit.details(for: request))
        let back = try await browser.post(base + "/authorize/continue", [("attempt", attempt)])
        let callback = try #require(back.header("Location"), "\(back.status) \(back.text.prefix(400))")
        #expect(callback.contains("/console/callback?code="))
        let opened = try await browser.get(callback)
        guard opened.status == 303 else { return opened }
        return try await browser.get(try #require(opened.header("Location")))
    }

    @Test("Signing in through the code flow opens the dashboard with a key of the role's rights, audited")
    func signInOpensTheDashboard() async throws {
        try await Self.signedIn { bench in
            let keys = try await bench.server.admin("GET", "/admin/v1/tenants/default/admin-keys")
            let items = try #require(keys["items"] as? [[String: any Sendable]])
            let key = try #require(items.first { ($0["name"] as? String) == "Console session of root" })
            #expect((key["rights"] as? [String])?.contains("tenants:manage") == false)
            #expect((key["rights"] as? [String])?.contains("users:manage") == true)
            let audit = try await bench.server.admin("GET", "/admin/v1/tenants/default/audit?limit=50")
            let actions = (audit["items"] as? [[String: any Sendable]] ?? []).compactMap { $0["action"] as? String }
            #expect(actions.contains("console.signed_in"))
        }
    }

    @Test("A user without a console role is refused after signing in, and gets no session")
    func userWithoutRoleIsRefused() async throws {
        try await TestServer.routed { server in
            let user = try await server.enrolledUser("bob")
            let browser = AccountBrowser(server: server, send: { try await server.send($0) })
            let refused = try await Self.signIn(browser, user, base: "")
            #expect(refused.status == 403 && refused.text.contains("No access to the console"))
            let again = try await browser.get("/console")
            #expect(again.status == 303, "still no session: the sign-in starts again")
        }
    }

    @Test("A callback whose state is not the sign-in's is refused")
    func callbackWithForeignStateIsRefused() async throws {
        try await TestServer.routed { server in
            let browser = AccountBrowser(server: server, send: { try await server.send($0) })
            _ = try await browser.get("/console")
            let forged = try await browser.get("/console/callback?code=abc&state=not-the-one")
            #expect(forged.status == 400 && forged.text.contains("This sign-in cannot continue"))
        }
    }

    @Test("Creating a user with a bad username keeps what was typed and says why beside the field; nothing is made")
    func badUsernameIsShownBesideTheField() async throws {
        try await Self.signedIn { bench in
            let page = try await bench.post("/console/users", [("username", "has space"), ("display_name", "Carol")])
            #expect(page.status == 400)
            #expect(page.text.contains(#"id="username-error""#) && page.text.contains("white space"), "\(page.text)")
            #expect(page.text.contains(#"value="has space""#) && page.text.contains(#"value="Carol""#))
            let users = try await bench.server.admin("GET", "/admin/v1/tenants/default/users")
            #expect((users["items"] as? [Any])?.count == 1, "only the administrator")
        }
    }

    @Test("Creating a user, searching for them, and inviting them shows a QR code and a link that enrolls a phone")
    func createSearchAndInvite() async throws {
        try await Self.signedIn { bench in
            let created = try await bench.post("/console/users", [("username", "carol"), ("display_name", "Carol C")])
            #expect(created.status == 303)
            let userPage = try await bench.browser.get(try #require(created.header("Location")))
            #expect(userPage.text.contains(#"<h1 id="user-heading">carol</h1>"#))
            let found = try await bench.browser.get("/console/users?q=CA")
            #expect(found.text.contains(#"id="user-carol""#) && !found.text.contains(#"id="user-root""#))
            let userID = try #require(AccountBench.capture(#"/console/users/(usr_[a-z0-9]+)/invitations"#, in: userPage.text))
            let invited = try await bench.post("/console/users/\(userID)/invitations", [])
            #expect(invited.status == 200 && invited.text.contains(#"id="invitation-qr""#))
            let uri = try #require(AccountBench.capture(#"<code id="enrollment-uri">([^<]+)</code>"#, in: invited.text))
            let (kit, _) = bench.server.authenticator()
            _ = try await kit.enroll(
                uri: uri.replacingOccurrences(of: "&amp;", with: "&"), deviceName: "Carol's phone", platform: .linux)
            let after = try await bench.browser.get("/console/users/\(userID)")
            #expect(after.text.contains("Carol&#39;s phone") || after.text.contains("Carol's phone"))
            let audit = try await bench.server.admin("GET", "/admin/v1/tenants/default/audit?limit=50")
            let created_by = (audit["items"] as? [[String: any Sendable]] ?? []).first { $0["action"] as? String == "user.created" }
            #expect((created_by?["actor"] as? String)?.hasPrefix("admin-key:") == true, "the console's key is the actor")
        }
    }

    @Test("A form without the session's CSRF token changes nothing")
    func formWithoutCSRFChangesNothing() async throws {
        try await Self.signedIn { bench in
            let forged = try await bench.browser.post("/console/users", [("csrf", "wrong"), ("username", "mallory")])
            #expect(forged.status == 403)
            let users = try await bench.server.admin("GET", "/admin/v1/tenants/default/users?q=mallory")
            #expect((users["items"] as? [Any])?.isEmpty == true)
        }
    }

    @Test("Disabling and deleting a user, deleting only when confirmed")
    func disableAndDelete() async throws {
        try await Self.signedIn { bench in
            let userID = try await bench.server.createUser("dave")
            let disabled = try await bench.post("/console/users/\(userID)/status", [("status", "disabled")])
            #expect(disabled.text.contains(#"<dd id="status">disabled</dd>"#))
            let unconfirmed = try await bench.post("/console/users/\(userID)/delete", [])
            #expect(unconfirmed.status == 400 && unconfirmed.text.contains(#"id="confirm-error""#))
            let deleted = try await bench.post("/console/users/\(userID)/delete", [("confirm", "yes")])
            #expect(deleted.status == 303)
            let gone = try await bench.server.admin("GET", "/admin/v1/tenants/default/users/\(userID)")
            #expect(gone.status == 404)
        }
    }

    @Test("Signing out revokes the session's key: the old cookie opens nothing")
    func signOutRevokesTheKey() async throws {
        try await Self.signedIn { bench in
            let cookieHolder = bench.browser
            let out = try await bench.post("/console/sign-out", [])
            #expect(out.status == 200 && out.text.contains("Signed out"))
            let keys = try await bench.server.admin("GET", "/admin/v1/tenants/default/admin-keys")
            let key = (keys["items"] as? [[String: any Sendable]] ?? []).first { ($0["name"] as? String) == "Console session of root" }
            #expect(key?["revoked_at"] != nil)
            let again = try await cookieHolder.get("/console/users")
            #expect(again.status == 303, "no session: the sign-in starts")
        }
    }

    @Test("A sign-out without the session's token ends nothing and says so; a signed-out cookie, replayed, starts the sign-in")
    func signOutNeedsTheTokenAndEndsTheCookieForGood() async throws {
        try await Self.signedIn { bench in
            let forged = try await bench.browser.post("/console/sign-out", [])
            #expect(forged.status == 403 && forged.text.contains("you are still signed in"), "\(forged.text.prefix(500))")
            #expect(forged.header("Set-Cookie") == nil, "the cookie is kept")
            #expect(try await bench.browser.get("/console").status == 200, "the session goes on")

            let copied = await bench.browser.replica()
            #expect(try await bench.post("/console/sign-out", []).text.contains("Signed out"))
            for path in ["/console", "/console/users"] {
                let again = try await copied.replica().get(path)
                #expect(again.status == 303 && again.header("Location")?.contains("/authorize?") == true,
                        "\(path): \(again.status) \(again.text.prefix(300))")
                #expect(again.header("Set-Cookie")?.contains("countersign-console=;") == true, "the old cookie is forgotten")
            }
            let invited = try await copied.replica().post("/console/users", [("csrf", bench.csrf), ("username", "mallory")])
            #expect(invited.status == 401 && invited.text.contains("Session ended"))
            let users = try await bench.server.admin("GET", "/admin/v1/tenants/default/users?q=mallory")
            #expect((users["items"] as? [Any])?.isEmpty == true)
        }
    }

    @Test("A tenant's administrator sees only their tenant: another tenant's user is not found")
    func tenantAdministratorStaysInTheirTenant() async throws {
        try await Self.signedIn(tenant: "acme") { bench in
            let outsider = try await bench.server.createUser("eve")
            let page = try await bench.browser.get("/t/acme/console/users/\(outsider)")
            #expect(page.status == 404)
            let list = try await bench.browser.get("/t/acme/console/users")
            #expect(list.text.contains(#"id="user-root""#) && !list.text.contains(#"id="user-eve""#) && !list.text.contains(">eve<"))
            let defaultConsole = try await bench.browser.get("/console")
            #expect(defaultConsole.status == 303, "the default tenant's console needs its own sign-in")
        }
    }

    @Test("Console roles: system-admin only for the default tenant's users and only by a system key holding every right")
    func roleRules() async throws {
        try await TestServer.routed { server in
            _ = try await server.admin("POST", "/admin/v1/tenants", json: ["slug": "acme", "display_name": "Acme"])
            let outsider = try await server.createUser("frank", tenant: "acme")
            let wrong = try await server.admin(
                "PUT", "/admin/v1/tenants/acme/users/\(outsider)/console-role", json: ["role": "system-admin"])
            #expect(wrong.status == 400)
            let unknown = try await server.admin(
                "PUT", "/admin/v1/tenants/acme/users/\(outsider)/console-role", json: ["role": "owner"])
            #expect(unknown.status == 400 && unknown.errorDescription?.contains("role") == true)
            let limited = try await server.admin("POST", "/admin/v1/tenants/acme/admin-keys", json: [
                "name": "helpdesk", "rights": ["admin-keys:manage", "users:read"],
            ])
            let secret = try #require(limited["secret"] as? String)
            let refused = try await server.call(
                "PUT", "/admin/v1/tenants/acme/users/\(outsider)/console-role", key: secret, json: ["role": "tenant-admin"])
            #expect(refused.status == 403 && refused.error == "insufficient_rights")
            let granted = try await server.admin(
                "PUT", "/admin/v1/tenants/acme/users/\(outsider)/console-role", json: ["role": "tenant-admin"])
            #expect(granted.status == 200 && granted["role"] as? String == "tenant-admin")
            let removed = try await server.admin("DELETE", "/admin/v1/tenants/acme/users/\(outsider)/console-role")
            #expect(removed.status == 204)
            let none = try await server.admin("GET", "/admin/v1/tenants/acme/users/\(outsider)/console-role")
            #expect(none.status == 404)
        }
    }

    @Test("The audit page filters by user and action, says why a bad time is refused, and exports CSV and JSON lines of what it shows")
    func auditFilterAndExport() async throws {
        try await Self.signedIn { bench in
            let created = try await bench.post("/console/users", [("username", "grace")])
            let userID = try #require(created.header("Location").flatMap { $0.split(separator: "/").last.map(String.init) })
            _ = try await bench.post("/console/users/\(userID)/status", [("status", "disabled")])

            let byUser = try await bench.browser.get("/console/audit?user_id=\(userID)")
            #expect(byUser.status == 200)
            #expect(byUser.text.contains("<code>user.created</code>") && byUser.text.contains("<code>user.updated</code>"))
            #expect(!byUser.text.contains("<code>console.signed_in</code>"), "another user's event is not shown")
            let byAction = try await bench.browser.get("/console/audit?user_id=\(userID)&action=user.created")
            #expect(byAction.text.contains("<code>user.created</code>") && !byAction.text.contains("<code>user.updated</code>"))
            let badTime = try await bench.browser.get("/console/audit?since=yesterday")
            #expect(badTime.status == 400 && badTime.text.contains(#"id="filter-error""#))
            #expect(badTime.text.contains(#"value="yesterday""#), "what was typed is kept")

            let csv = try await bench.browser.get("/console/audit/export?format=csv&user_id=\(userID)")
            #expect(csv.status == 200 && csv.header("Content-Type") == "text/csv; charset=utf-8")
            #expect(csv.header("Content-Disposition")?.hasPrefix("attachment; filename=\"audit-default-") == true)
            let lines = csv.text.split(separator: "\r\n")
            #expect(lines.first == "occurred_at,action,actor,actor_name,target_type,target_id,target_name,tenant_id,id,details")
            #expect(lines.count == 3, "the header, user.updated and user.created: \(csv.text)")
            #expect(lines.dropFirst().allSatisfy { $0.contains(",Console session of root,user,\(userID),grace,") },
                    "who acted and on whom, by name: \(csv.text)")
            let jsonl = try await bench.browser.get("/console/audit/export?format=jsonl&user_id=\(userID)")
            let events = try jsonl.text.split(separator: "\n").map {
                try #require(try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any])
            }
            #expect(events.map { $0["action"] as? String } == ["user.updated", "user.created"])
        }
    }

    @Test("The audit API refuses a filter given twice or a time that is not RFC 3339, and narrows by time")
    func auditFilterInTheAPI() async throws {
        try await TestServer.routed { server in
            _ = try await server.createUser("heidi")
            let twice = try await server.admin("GET", "/admin/v1/tenants/default/audit?action=a&action=b")
            #expect(twice.status == 400 && twice.errorDescription?.contains("action") == true)
            let badTime = try await server.admin("GET", "/admin/v1/tenants/default/audit?until=tomorrow")
            #expect(badTime.status == 400 && badTime.errorDescription?.contains("RFC 3339") == true)
            let future = try await server.admin("GET", "/admin/v1/audit?since=2999-01-01T00:00:00Z")
            #expect((future["items"] as? [Any])?.isEmpty == true)
            let created = try await server.admin("GET", "/admin/v1/tenants/default/audit?action=user.created")
            #expect((created["items"] as? [[String: any Sendable]])?.count == 1)
        }
    }

    @Test("Registering a client shows its secret once; a bad redirect URI is shown beside its field with the form as typed; edit, new secret, delete")
    func clients() async throws {
        try await Self.signedIn { bench in
            let refused = try await bench.post("/console/clients", [
                ("name", "Bank"), ("token_delivery_mode", "poll"), ("token_endpoint_auth_method", "client_secret_basic"),
                ("redirect_uris", "not a uri"),
            ])
            #expect(refused.status == 400)
            #expect(refused.text.contains(#"id="redirect-error""#), "\(refused.text.suffix(3000))")
            #expect(refused.text.contains(">not a uri</textarea>") && refused.text.contains(#"value="Bank""#))
            let none = try await bench.server.admin("GET", "/admin/v1/tenants/default/clients")
            #expect((none["items"] as? [[String: any Sendable]] ?? []).allSatisfy { ($0["client_id"] as? String)?.hasPrefix("console-") == true })

            let made = try await bench.post("/console/clients", [
                ("name", "Bank"), ("token_delivery_mode", "poll"), ("token_endpoint_auth_method", "client_secret_basic"),
                ("redirect_uris", "https://bank.example/callback\nhttps://bank.example/other"),
            ])
            #expect(made.status == 200)
            let secret = try #require(AccountBench.capture(#"<code id="client-secret">([^<]+)</code>"#, in: made.text))
            let clientID = try #require(AccountBench.capture(#"<code id="client-id">([^<]+)</code>"#, in: made.text))
            let shownAgain = try await bench.browser.get("/console/clients/\(clientID)")
            #expect(!shownAgain.text.contains(secret), "the secret is shown once")
            #expect(shownAgain.text.contains("https://bank.example/callback\nhttps://bank.example/other</textarea>"))

            let saved = try await bench.post("/console/clients/\(clientID)", [
                ("name", "Bank online"), ("token_delivery_mode", "ping"), ("notification_endpoint", "https://bank.example/ciba"),
                ("token_endpoint_auth_method", "client_secret_basic"), ("redirect_uris", "https://bank.example/callback"),
            ])
            #expect(saved.status == 200 && saved.text.contains(#"id="notice""#), "\(saved.text.prefix(2000))")
            let stored = try await bench.server.admin("GET", "/admin/v1/tenants/default/clients/\(clientID)")
            #expect(stored["token_delivery_mode"] as? String == "ping" && stored["name"] as? String == "Bank online")

            let renewed = try await bench.post("/console/clients/\(clientID)/secret", [])
            let second = try #require(AccountBench.capture(#"<code id="client-secret">([^<]+)</code>"#, in: renewed.text))
            #expect(second != secret)

            let deleted = try await bench.post("/console/clients/\(clientID)/delete", [("confirm", "yes")])
            #expect(deleted.status == 303)
            #expect(try await bench.server.admin("GET", "/admin/v1/tenants/default/clients/\(clientID)").status == 404)
        }
    }

    @Test("The dashboard draws the last day's requests and outcomes from the statistics, which count by the hour")
    func dashboardCharts() async throws {
        try await Self.signedIn { bench in
            let stats = try await bench.server.admin("GET", "/admin/v1/tenants/default/statistics?hours=3")
            #expect(stats.status == 200)
            let buckets = try #require(stats["buckets"] as? [[String: any Sendable]])
            #expect(buckets.count == 3)
            // The administrator's own sign-in was one approved request, this hour.
            #expect(buckets.last?["requests"] as? Int == 1 && buckets.last?["approved"] as? Int == 1)
            let refused = try await bench.server.admin("GET", "/admin/v1/tenants/default/statistics?hours=169")
            #expect(refused.status == 400)

            let dashboard = try await bench.browser.get("/console")
            #expect(dashboard.text.contains(#"<strong id="total-requests">1</strong>"#))
            #expect(dashboard.text.contains(#"<strong id="total-approved">1</strong>"#))
            #expect(dashboard.text.contains(#"<strong id="total-denied">0</strong>"#))
            #expect(dashboard.text.contains("<svg viewBox=\"0 0 480 120\""))
        }
    }

    @Test("Devices: the tenant's list with users and push state, filtered by push; deregistering one; a bad filter to the API is a 400")
    func tenantDevices() async throws {
        try await Self.signedIn { bench in
            let dan = try await bench.server.enrolledUser("dan", push: PushRegistration(provider: .apns, token: apnsDeviceToken()))
            let eve = try await bench.server.enrolledUser("eve", push: PushRegistration(provider: .fcm, token: "fcm-token-of-eve-0001"))
            let refused = try await SQLDeviceRepository().invalidatePushToken(
                id: eve.enrollment.deviceID, token: "fcm-token-of-eve-0001", reason: "UNREGISTERED", registeredBefore: nil, at: Date(),
                on: bench.server.database)
            #expect(refused)

            let all = try await bench.browser.get("/console/devices")
            #expect(all.status == 200)
            for user in [bench.admin, dan, eve] { #expect(all.text.contains(#"id="device-\#(user.enrollment.deviceID)""#)) }
            #expect(all.text.contains(">dan</a>") && all.text.contains("refused: UNREGISTERED"), "\(all.text.suffix(3000))")
            #expect(all.text.contains(#"aria-current="page">Devices"#))

            let broken = try await bench.browser.get("/console/devices?push=invalid")
            #expect(broken.text.contains(#"id="device-\#(eve.enrollment.deviceID)""#))
            #expect(!broken.text.contains(#"id="device-\#(dan.enrollment.deviceID)""#))
            #expect(broken.text.contains(#"<option value="invalid" selected>"#))
            let none = try await bench.browser.get("/console/devices?push=none")
            #expect(none.text.contains(#"id="device-\#(bench.admin.enrollment.deviceID)""#))
            #expect(!none.text.contains(#"id="device-\#(eve.enrollment.deviceID)""#))

            let removed = try await bench.post("/console/devices/\(eve.enrollment.deviceID)/remove", [("push", "invalid")])
            #expect(removed.status == 200 && removed.text.contains("The device is deregistered."))
            #expect(removed.text.contains(#"id="no-devices""#), "the list as it was filtered, now empty")
            let again = try await bench.post("/console/devices/\(eve.enrollment.deviceID)/remove", [])
            #expect(again.status == 409 && again.text.contains("already deleted"))
            let stolen = try await bench.browser.post("/console/devices/\(dan.enrollment.deviceID)/remove", [("csrf", "forged")])
            #expect(stolen.status == 403)
            let device = try await bench.server.admin("GET", "/admin/v1/tenants/default/devices/\(dan.enrollment.deviceID)")
            #expect(device["status"] as? String == "active")

            let bad = try await bench.server.admin("GET", "/admin/v1/tenants/default/devices?push=broken")
            #expect(bad.status == 400 && bad.errorDescription == "push must be valid, invalid or none")
            let twice = try await bench.server.admin("GET", "/admin/v1/tenants/default/devices?push=none&push=valid")
            #expect(twice.status == 400)
            let paged = try await bench.server.admin("GET", "/admin/v1/tenants/default/devices?limit=1")
            #expect((paged["items"] as? [Any])?.count == 1 && paged["next_cursor"] is String)
            let audit = try await bench.server.admin("GET", "/admin/v1/tenants/default/audit?action=device.deleted")
            #expect((audit["items"] as? [Any])?.count == 1)
        }
    }

    @Test("A user's factors and locks: resetting asks for confirmation, then deregisters the phone; the user code is set and removed; a pause is lifted")
    func factorsAndLocks() async throws {
        try await Self.signedIn { bench in
            let fay = try await bench.server.enrolledUser("fay")
            try await SQLUserRepository().suppressRequests(
                userID: fay.userID, until: Date().addingTimeInterval(600), on: bench.server.database)
            let shown = try await bench.browser.get("/console/users/\(fay.userID)")
            #expect(shown.text.contains(#"id="suppressed""#) && shown.text.contains(#"id="user-code-state">not set"#))

            let lifted = try await bench.post("/console/users/\(fay.userID)/request-suppression/delete", [])
            #expect(lifted.status == 200 && lifted.text.contains("Requests reach the user again.") && !lifted.text.contains(#"id="suppressed""#))

            let empty = try await bench.post("/console/users/\(fay.userID)/user-code", [("user_code", "")])
            #expect(empty.status == 400 && empty.text.contains(#"id="user-code-error""#))
            let short = try await bench.post("/console/users/\(fay.userID)/user-code", [("user_code", "ab")])
            #expect(short.status == 400 && short.text.contains(#"id="user-code-error""#), "\(short.text.suffix(3000))")
            let set = try await bench.post("/console/users/\(fay.userID)/user-code", [("user_code", "blue-heron-42")])
            #expect(set.status == 200 && set.text.contains(#"id="user-code-state">set"#) && !set.text.contains("blue-heron-42"))
            let removed = try await bench.post("/console/users/\(fay.userID)/user-code", [("user_code", ""), ("remove", "yes")])
            #expect(removed.status == 200 && removed.text.contains(#"id="user-code-state">not set"#))

            let unconfirmed = try await bench.post("/console/users/\(fay.userID)/factor-reset", [])
            #expect(unconfirmed.status == 400 && unconfirmed.text.contains(#"id="reset-confirm-error""#))
            #expect(unconfirmed.text.contains(#"id="device-\#(fay.enrollment.deviceID)""#), "nothing changed")
            let reset = try await bench.post("/console/users/\(fay.userID)/factor-reset", [("confirm", "yes")])
            #expect(reset.status == 200 && reset.text.contains("1 device deregistered and 0 passkeys removed"), "\(reset.text.suffix(3000))")
            #expect(reset.text.contains(#"id="no-devices""#))
        }
    }

    @Test("Policies: the form shows the stored policy; a number that is not one, or one the API refuses, is shown beside its field and nothing changes; saving keeps what the form does not show")
    func authenticationPolicy() async throws {
        try await Self.signedIn { bench in
            let seeded = try await bench.server.admin(
                "PUT", "/admin/v1/tenants/default/authentication-policy",
                json: ["passkeys": ["rp_name": "Acme Bank"], "post_quantum_sealing": true, "disabled_factors": ["custom"]])
            #expect(seeded.status == 200)
            let shown = try await bench.browser.get("/console/policies")
            #expect(shown.status == 200 && shown.text.contains(#"id="pin_attempt_limit" name="pin_attempt_limit" type="text" inputmode="numeric" autocomplete="off" value="3""#))
            #expect(shown.text.contains(#"aria-current="page">Policies"#))

            var form: [(String, String)] = [
                ("default_acr", ""), ("minimum_acr", "urn:countersign:acr:pin"), ("pin_attempt_limit", "abc"),
                ("user_requests_per_minute", "7"), ("client_requests_per_minute", ""), ("not_requested_suppression_seconds", "60"),
                ("session_idle_seconds", "600"), ("session_max_age_seconds", "3600"), ("biometric_pin_fallback", "on"),
                ("custom_pin_fallback", "on"), ("number_match_choices", "on"), ("push_delivery_allowed", "on"),
            ]
            let notNumber = try await bench.post("/console/policies", form)
            #expect(notNumber.status == 400 && notNumber.text.contains(#"id="pin_attempt_limit-error""#))
            #expect(notNumber.text.contains(#"value="abc""#) && notNumber.text.contains(#"value="7""#))
            form[2] = ("pin_attempt_limit", "11")
            let outOfRange = try await bench.post("/console/policies", form)
            #expect(outOfRange.status == 400 && outOfRange.text.contains(#"id="pin_attempt_limit-error""#), "\(outOfRange.text.suffix(4000))")
            form[2] = ("pin_attempt_limit", "4")
            form[6] = ("session_idle_seconds", "7200")
            let idle = try await bench.post("/console/policies", form)
            #expect(idle.status == 400 && idle.text.contains(#"id="session_idle_seconds-error""#))
            #expect(idle.text.contains("must not exceed session_max_age_seconds"))
            let unchanged = try await bench.server.admin("GET", "/admin/v1/tenants/default/authentication-policy")
            #expect(unchanged["pin_attempt_limit"] as? Int == 3 && unchanged["minimum_acr"] == nil)

            form[6] = ("session_idle_seconds", "600")
            let saved = try await bench.post("/console/policies", form)
            #expect(saved.status == 200 && saved.text.contains("The policy is saved."), "\(saved.text.suffix(3000))")
            let policy = try await bench.server.admin("GET", "/admin/v1/tenants/default/authentication-policy")
            #expect(policy["minimum_acr"] as? String == "urn:countersign:acr:pin")
            #expect(policy["pin_attempt_limit"] as? Int == 4 && policy["user_requests_per_minute"] as? Int == 7)
            #expect(policy["client_requests_per_minute"] as? Int == 600, "empty: the default")
            #expect(policy["totp"] as? Bool == false, "an unticked box is off")
            #expect((policy["passkeys"] as? [String: any Sendable])?["rp_name"] as? String == "Acme Bank")
            #expect(policy["post_quantum_sealing"] as? Bool == true, "not on the form: kept")
            #expect(policy["disabled_factors"] as? [String] == ["custom"], "not on the form: kept")
            #expect(saved.text.contains(#"<option value="urn:countersign:acr:pin" selected>PIN</option>"#))
        }
    }

    @Test("Webhooks: a bad URL is shown beside its field; setting one shows its secret once; a new secret; removing it; recent events listed")
    func webhooks() async throws {
        try await Self.signedIn { bench in
            let bad = try await bench.post("/console/policies/webhooks/events", [("url", "ftp://example.com/hook")])
            #expect(bad.status == 400 && bad.text.contains(#"id="url-events-error""#), "\(bad.text.suffix(3000))")
            #expect(bad.text.contains(#"value="ftp://example.com/hook""#))
            let none = try await bench.server.admin("GET", "/admin/v1/tenants/default/webhooks")
            #expect((none["items"] as? [Any])?.isEmpty == true)

            let set = try await bench.post("/console/policies/webhooks/events", [("url", "http://127.0.0.1:9/hook")])
            #expect(set.status == 200 && set.text.contains("The webhook is set."))
            let secret = try #require(AccountBench.capture(#"id="webhook-events-secret">[^<]*<code>([A-Za-z0-9_-]{43})</code>"#, in: set.text))
            let again = try await bench.browser.get("/console/policies")
            #expect(!again.text.contains(secret), "the secret is shown once")
            let rotated = try await bench.post("/console/policies/webhooks/events", [("url", "http://127.0.0.1:9/hook"), ("rotate_secret", "yes")])
            let second = try #require(AccountBench.capture(#"id="webhook-events-secret">[^<]*<code>([A-Za-z0-9_-]{43})</code>"#, in: rotated.text))
            #expect(second != secret)
            let unknown = try await bench.post("/console/policies/webhooks/elsewhere", [("url", "http://127.0.0.1:9/hook")])
            #expect(unknown.status == 404)

            let removed = try await bench.post("/console/policies/webhooks/events/delete", [])
            #expect(removed.status == 200 && removed.text.contains(#"id="webhook-events-unset""#))
            let removedAgain = try await bench.post("/console/policies/webhooks/events/delete", [])
            #expect(removedAgain.status == 404 && removedAgain.text.contains(#"id="action-error""#)
                    && !removedAgain.text.contains(#"id="notice""#))
            let audit = try await bench.server.admin("GET", "/admin/v1/tenants/default/audit?limit=50")
            let actions = (audit["items"] as? [[String: any Sendable]] ?? []).compactMap { $0["action"] as? String }
            #expect(actions.contains { $0.hasPrefix("webhook.") }, "\(actions)")
        }
    }

    @Test("Push credentials: a key that is not a P-256 PEM is refused beside its field with the form kept; a good one is in use; removing it")
    func pushCredentials() async throws {
        try await Self.signedIn { bench in
            let refused = try await bench.post("/console/push/apns-token", [
                ("key_id", "ABC123DEFG"), ("team_id", "TEAM123456"), ("topic", "com.example.bank"), ("environment", "sandbox"),
                ("private_key", "not a key"),
            ])
            #expect(refused.status == 400)
            #expect(refused.text.contains(#"id="private-key-error""#), "\(refused.text.suffix(2500))")
            #expect(refused.text.contains(#"value="com.example.bank""#) && refused.text.contains("<option selected>sandbox</option>"))

            let key = P256.Signing.PrivateKey().pemRepresentation
            let set = try await bench.post("/console/push/apns-token", [
                ("key_id", "ABC123DEFG"), ("team_id", "TEAM123456"), ("topic", "com.example.bank"), ("environment", "sandbox"),
                ("private_key", key),
            ])
            #expect(set.status == 200 && set.text.contains(#"id="notice""#), "\(set.text.suffix(2500))")
            #expect(set.text.contains(#"id="credential-apns-token""#) && set.text.contains("in use"))
            #expect(!set.text.contains("PRIVATE KEY"), "the key is never shown back")

            let removed = try await bench.post("/console/push/apns-token/delete", [])
            #expect(removed.status == 200 && removed.text.contains(#"id="no-credentials""#))
        }
    }

    @Test("Push files are uploaded: a .p12 with its password, a .p8 file and an FCM key file; a wrong password is shown beside the file; nothing in the form is echoed back",
          .enabled(if: PushTestPKI.available))
    func pushFilesAreUploaded() async throws {
        let pki = try #require(PushTestPKI.shared)
        let p12 = try pki.clientPKCS12(commonName: "Apple Push Services: com.example.bank", topic: "com.example.bank", password: "s3cret")
        try await Self.signedIn { bench in
            let fields = [("csrf", bench.csrf), ("client_app_key", "bank-ios"), ("certificate_topic", "com.example.bank"),
                          ("certificate_environment", "sandbox")]
            let noFile = try await bench.browser.post("/console/push/apns-certificate", multipart: fields + [("password", "s3cret")],
                                                      files: [("certificate_file", "", Data())])
            #expect(noFile.status == 400 && noFile.text.contains(#"id="certificate-error""#) && noFile.text.contains("Choose the .p12 file."))
            let wrong = try await bench.browser.post("/console/push/apns-certificate", multipart: fields + [("password", "wrong")],
                                                     files: [("certificate_file", "bank.p12", p12)])
            #expect(wrong.status == 400 && wrong.text.contains(#"id="certificate-error""#), "\(wrong.text.suffix(3000))")
            #expect(wrong.text.contains(#"value="bank-ios""#) && !wrong.text.contains("wrong"))
            let badKey = try await bench.browser.post("/console/push/apns-certificate", multipart: [("csrf", bench.csrf), ("client_app_key", "bank ios")],
                                                      files: [("certificate_file", "bank.p12", p12)])
            #expect(badKey.status == 400 && badKey.text.contains(#"id="client-app-key-error""#))
            let forged = try await bench.browser.post("/console/push/apns-certificate", multipart: [("csrf", "forged")] + fields.dropFirst(),
                                                      files: [("certificate_file", "bank.p12", p12)])
            #expect(forged.status == 403)
            let none = try await bench.server.admin("GET", "/admin/v1/tenants/default/push-credentials")
            #expect((none["items"] as? [Any])?.isEmpty == true, "nothing was set")

            let set = try await bench.browser.post("/console/push/apns-certificate", multipart: fields + [("password", "s3cret")],
                                                   files: [("certificate_file", "bank.p12", p12)])
            #expect(set.status == 200 && set.text.contains("The APNs certificate for bank-ios is set."), "\(set.text.suffix(3000))")
            #expect(set.text.contains(#"id="credential-apns-certificate""#) && set.text.contains("Apple Push Services: com.example.bank"))

            let key = Data(P256.Signing.PrivateKey().pemRepresentation.utf8)
            let p8 = try await bench.browser.post(
                "/console/push/apns-token",
                multipart: [("csrf", bench.csrf), ("key_id", "ABC123DEFG"), ("team_id", "TEAM123456"), ("topic", "com.example.bank"),
                            ("environment", "sandbox"), ("private_key", "")],
                files: [("private_key_file", "AuthKey_ABC123DEFG.p8", key)])
            #expect(p8.status == 200 && p8.text.contains("The APNs token key is set."), "\(p8.text.suffix(3000))")
            let binary = try await bench.browser.post(
                "/console/push/fcm", multipart: [("csrf", bench.csrf)], files: [("service_account_file", "key.json", Data([0xff, 0xfe, 0x00]))])
            #expect(binary.status == 400 && binary.text.contains("key.json is not a text file."))
            let twice = try await bench.browser.post(
                "/console/push/fcm", multipart: [("csrf", bench.csrf), ("csrf", bench.csrf)], files: [])
            #expect(twice.status == 400)
        }
    }

    @Test("A request's deliveries are shown device by device; an unknown request is not found; the recent notifications page by page")
    func requestDeliveries() async throws {
        try await Self.signedIn { bench in
            let client = try await bench.server.createClient(mode: "poll")
            _ = try await bench.server.startApproval(client, user: "root")
            let requestID = try #require(try await bench.admin.kit.pendingRequests().first?.id)
            let page = try await bench.browser.get("/console/requests/\(requestID)")
            #expect(page.status == 200 && page.text.contains(#"id="request-status">pending"#), "\(page.text.suffix(2000))")
            #expect(page.text.contains(#"/console/users/\#(bench.admin.userID)" id="request-user""#))
            #expect(page.text.contains(#"/console/clients/\#(client.id)" id="request-client""#))
            #expect(page.text.contains(#"id="request-device-\#(bench.admin.enrollment.deviceID)""#))
            let unknown = try await bench.browser.get("/console/requests/txn_nothing")
            #expect(unknown.status == 404)
            let recent = try await bench.browser.get("/console/push?status=failed")
            #expect(recent.status == 200 && recent.text.contains(#"id="no-notifications">No notification failed."#))
            let gus = try await bench.server.enrolledUser("gus", push: PushRegistration(provider: .apns, token: apnsDeviceToken()))
            for _ in 0..<3 { _ = try await bench.server.startApproval(client, user: gus.username) }
            let first = try await bench.server.admin("GET", "/admin/v1/tenants/default/push-deliveries?limit=2")
            let firstItems = try #require(first["items"] as? [[String: any Sendable]], "\(first.text)")
            let next = try #require(first["next_cursor"] as? String, "\(first.text)")
            let second = try await bench.server.admin("GET", "/admin/v1/tenants/default/push-deliveries?limit=2&cursor=\(next)")
            let secondItems = try #require(second["items"] as? [[String: any Sendable]])
            let ids = (firstItems + secondItems).compactMap { $0["id"] as? String }
            #expect(ids.count == 3 && Set(ids).count == 3 && !(second["next_cursor"] is String), "\(ids)")
            let listed = try await bench.browser.get("/console/push")
            #expect(listed.text.components(separatedBy: #"class="request-link""#).count == 4)
            let gusRequest = try #require(try await gus.kit.pendingRequests().first?.id)
            let withPush = try await bench.browser.get("/console/requests/\(gusRequest)")
            #expect(withPush.text.contains("<td>APNS request</td>"), "\(withPush.text.suffix(2500))")
            let bad = try await bench.server.admin("GET", "/admin/v1/tenants/default/push-deliveries?status=lost")
            #expect(bad.status == 400 && bad.errorDescription == "status must be queued, sending, sent, failed or cancelled")
            let hex = String(repeating: "0a", count: 16)
            for forged in ["abc", "9223372036854775807_\(hex)", "253402300800000_\(hex)", "1_\(hex)0", "-1_\(hex)"] {
                let cursor = try await bench.server.admin("GET", "/admin/v1/tenants/default/push-deliveries?cursor=\(forged)")
                #expect(cursor.status == 400 && cursor.errorDescription == "cursor is not a cursor this server issued", "\(forged)")
            }
            let latest = try await bench.server.admin("GET", "/admin/v1/tenants/default/push-deliveries?cursor=253402300799999_\(hex)")
            #expect((latest["items"] as? [Any])?.count == 3, "the last time a cursor can name is after every notification")
            // A second device of gus's is a notice pushed to the first: listed by its notice, with no request to link.
            _ = try await bench.server.enrollDevice(
                for: gus.userID, username: gus.username, push: PushRegistration(provider: .apns, token: apnsDeviceToken()),
                name: "tablet")
            let withNotice = try await bench.browser.get("/console/push")
            #expect(withNotice.text.contains("<td>notice <code>ntc_"), "\(withNotice.text.suffix(2500))")
            #expect(withNotice.text.contains("APNS notice"))
            #expect(withNotice.text.components(separatedBy: #"class="request-link""#).count == 4)
        }
    }

    @Test("A malformed query on a console page is a 400 page, not a fault", arguments: [
        "/console/callback?a=1&a=2", "/console/users?q=%zz&q=b", "/console/audit?since=%00", "/console/audit/export?format=csv&format=jsonl",
    ])
    func malformedQueryIsAPage(path: String) async throws {
        try await Self.signedIn { bench in
            let page = try await bench.browser.get(path)
            #expect(page.status == 400, "\(path): \(page.status)")
        }
    }
}
