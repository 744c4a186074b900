import AuthenticatorAppModel
import CountersignCore
import Foundation
import Testing
@testable import CountersignServer

/// The tenant's risk rules on requests for a user's approval: a new network asks for number
/// matching until the user approves from it, a `deny` refuses CIBA and the hosted sign-in with
/// the rule's reason, a dry run changes nothing, recent denials and bursts are counted from the
/// requests kept, each rule is explained in the audit log, and the policy refuses what cannot work.
@Suite("Risk rules")
struct RiskRuleTests {
    static func rule(_ name: String, _ signal: String, _ action: String, _ extra: [String: any Sendable] = [:])
        -> [String: any Sendable]
    {
        ["name": name, "signal": signal, "action": action].merging(extra) { _, new in new }
    }

    /// The audit events `risk.rule_fired`, newest first.
    static func fired(_ server: TestServer) async throws -> [[String: any Sendable]] {
        let audit = try await server.admin("GET", "/admin/v1/tenants/default/audit?action=risk.rule_fired")
        return try #require(audit["items"] as? [[String: any Sendable]], "\(audit.text)")
    }

    @Test("A request from a network the user never approved from requires number matching, and the reason is in the audit log; once approved from, the network is known",
          arguments: Engine.available)
    func newNetwork(engine: Engine) async throws {
        try await TestServer.with(engine) { server in
            let client = try await server.createClient()
            let userID = try await server.createUser("ada")
            let device = try await server.enrollFactorDevice(for: userID)
            try await server.setPolicy(["risk_rules": [Self.rule("new network", "new_network", "number_match", ["days": 30])]])

            let started = try await server.bcAuthorize(client, [("scope", "openid"), ("login_hint", "ada")])
            #expect(started.status == 200, "\(started.text)")
            let number = try #require(started["match_number"] as? Int, "the relying party shows the number: \(started.text)")
            let (_, details, _) = try await device.newest()
            #expect(details.verification?.factor == .numberMatch)
            #expect(details.risk == [.init(rule: "new network", reason: "new network: 127.0.0.0/24")], "shown on the phone, signed")
            let fired = try await Self.fired(server)
            let event = try #require(fired.first)
            let recorded = try #require(event["details"] as? [String: any Sendable])
            #expect(recorded["rule"] as? String == "new network" && recorded["action"] as? String == "number_match")
            #expect(recorded["reason"] as? String == "new network: 127.0.0.0/24", "\(recorded)")
            #expect(recorded["mode"] as? String == "enforce")
            #expect(event["target_type"] as? String == "approval")

            let approved = try await device.answer(factors: ["number_match"], number: Int64(number))
            #expect(approved.status == 200, "\(approved.text)")
            _ = try await server.startApproval(client, user: "ada")
            let known = try await device.newest().details
            #expect(known.verification?.factor == .confirm && known.risk == nil, "the network is known now")
            #expect(try await Self.fired(server).count == 1)
        }
    }

    @Test("A deny rule refuses CIBA (access_denied naming the rule and why) and sends nothing; the hosted sign-in shows the refusal")
    func denyRule() async throws {
        try await TestServer.routed { server in
            let client = try await server.createClient(name: "Treasury")
            let userID = try await server.createUser("ada")
            let device = try await server.enrollFactorDevice(for: userID)
            try await server.setPolicy(["risk_rules": [Self.rule("treasury is sensitive", "client", "deny", ["clients": [client.id]])]])
            let refused = try await server.bcAuthorize(client, [("scope", "openid"), ("login_hint", "ada")])
            #expect(refused.error == "access_denied", "\(refused.text)")
            #expect(refused.errorDescription == "refused by the risk rule 'treasury is sensitive': client Treasury is marked sensitive")
            let inbox = try await device.call("GET", "/device/v1/requests")
            #expect(inbox.text.contains("\"requests\":[]") || inbox.text.contains("\"requests\" : []"), "\(inbox.text)")
            let event = try #require(try await Self.fired(server).first)
            #expect(event["target_type"] as? String == "user" && event["target_id"] as? String == userID)

            // The hosted sign-in, for a client the rule names.
            let web = try await server.createCodeFlowClient()
            try await server.setPolicy(["risk_rules": [Self.rule("web is sensitive", "client", "deny", ["clients": [web.id]])]])
            let browser = PageVisitor(server)
            let form = try await browser.get(
                "/authorize" + TestServer.authorizationQuery(web, challenge: CodeFlowClient.challenge(CodeFlowClient.verifier())))
            let attempt = try #require(form.hidden("attempt"), "\(form.text.prefix(300))")
            let page = try await browser.post("/authorize/sign-in", [("attempt", attempt), ("username", "ada")])
            #expect(page.status == 403, "\(page.text.prefix(800))")
            #expect(page.text.contains("Sign-in refused") && page.text.contains("risk rules. Ask your administrator"))
            #expect(!page.text.contains("marked sensitive"), "whoever types a username learns nothing of the rule's reason")
        }
    }

    @Test("In dry run a rule that would refuse changes nothing: the request goes out, and the audit log says what the rule would have done")
    func dryRun() async throws {
        try await TestServer.routed { server in
            let client = try await server.createClient()
            let userID = try await server.createUser("ada")
            let device = try await server.enrollFactorDevice(for: userID)
            try await server.setPolicy([
                "risk_mode": "dry_run",
                "risk_rules": [Self.rule("everything", "acr", "deny", ["acr": ["urn:countersign:acr:confirm"]])],
            ])
            _ = try await server.startApproval(client, user: "ada", extra: [("acr_values", "urn:countersign:acr:confirm")])
            let details = try await device.newest().details
            #expect(details.verification?.factor == .confirm && details.risk == nil, "a dry run shows nothing on the phone")
            let recorded = try #require(try await Self.fired(server).first?["details"] as? [String: any Sendable])
            #expect(recorded["mode"] as? String == "dry_run" && recorded["action"] as? String == "deny")
            #expect(recorded["reason"] as? String == "asks for urn:countersign:acr:confirm")
        }
    }

    @Test("Recent denials and a burst of requests are counted from the user's requests, on either engine", arguments: Engine.available)
    func denialsAndBursts(engine: Engine) async throws {
        try await TestServer.with(engine) { server in
            let client = try await server.createClient()
            let userID = try await server.createUser("ada")
            let device = try await server.enrollFactorDevice(for: userID, biometric: true)
            try await server.setPolicy([
                "user_requests_per_minute": 0,
                "risk_rules": [
                    Self.rule("after a denial", "recent_denials", "biometric", ["count": 1]),
                    Self.rule("burst", "request_burst", "notify", ["count": 2, "minutes": 10]),
                ],
            ])
            _ = try await server.startApproval(client, user: "ada")
            #expect(try await device.newest().details.verification?.factor == .confirm)
            let denied = try await device.answer(.deny, factors: ["confirm"], reason: .declined)
            #expect(denied.status == 200, "\(denied.text)")
            _ = try await server.startApproval(client, user: "ada")
            #expect(try await device.newest().details.verification?.factor == .biometric)
            _ = try await server.startApproval(client, user: "ada")
            let reasons = try await Self.fired(server).compactMap { ($0["details"] as? [String: any Sendable])?["reason"] as? String }
            #expect(reasons.contains("1 denied request in the last hour"), "\(reasons)")
            #expect(reasons.contains("2 requests in 10 minutes"), "\(reasons)")
        }
    }

    @Test("A RADIUS login that a risk rule raises to number matching is challenged with the number, though its client pushes without one")
    func radiusLoginRaisedToNumberMatching() async throws {
        guard RADClient.executable != nil else { return }
        try await RADIUSServerTests.withRADIUS(.sqlite) { server, radius in
            _ = try await server.createRADIUSClient(mode: "push")
            let device = try await server.enrollFactorDevice(for: try await server.createUser("erin"))
            try await server.setPolicy(["risk_rules": [Self.rule("new network", "new_network", "number_match", ["days": 30])]])
            let challenge = try #require(try await radius.send(RADClient.login("erin", password: "push")))
            #expect(challenge.code == "Access-Challenge", "\(challenge)")
            let prompt = try #require(challenge.replyMessage)
            let number = try #require(prompt.split(separator: " ").lazy
                .compactMap { Int64($0.trimmingCharacters(in: .punctuationCharacters)) }.first, "\(prompt)")
            let state = try #require(challenge.first("State"))
            let (_, details, _) = try await device.newest()
            #expect(details.verification?.numberMatch != nil && details.risk?.first?.rule == "new network")
            let answered = try await device.answer(factors: ["number_match"], number: number)
            #expect(answered["status"] as? String == "approved", "\(answered.errorDescription ?? "")")
            let accept = try #require(try await radius.send(RADClient.login("erin", password: "push", extra: ["State = \(state)"])))
            #expect(accept.code == "Access-Accept")
        }
    }

    @Test("Through the SDK, the phone reads why the request asks more; the reference app shows it and the terminal prints it")
    func reasonsOnThePhone() async throws {
        try await TestServer.routed { server in
            let client = try await server.createClient(name: "Payments")
            let ada = try await server.enrolledUser("ada")
            try await server.setPolicy(["risk_rules": [Self.rule("payments", "client", "notify", ["clients": [client.id]])]])
            _ = try await server.startApproval(client, user: "ada")
            let request = try #require(try await ada.kit.pendingRequests().first)
            let details = try await ada.kit.details(for: request)
            #expect(details.riskReasons == ["client Payments is marked sensitive"])
            #expect(RequestSummary(details).rows.contains { $0.label == "Why this asks more" && $0.value == "client Payments is marked sensitive" })
        }
    }

    @Test("The request's deliveries and the console's page for the request name the rules that fired and why")
    func consoleShowsWhichFired() async throws {
        try await ConsoleTests.signedIn { bench in
            let server = bench.server
            let client = try await server.createClient(name: "Payments")
            _ = try await server.enrolledUser("ada")
            try await server.setPolicy(["risk_rules": [Self.rule("payments", "client", "notify", ["clients": [client.id]])]])
            _ = try await server.startApproval(client, user: "ada")
            let event = try #require(try await Self.fired(server).first)
            let id = try #require(event["target_id"] as? String)
            let report = try await server.admin("GET", "/admin/v1/tenants/default/approvals/\(id)/deliveries")
            let risk = try #require(report["risk"] as? [[String: any Sendable]], "\(report.text)")
            #expect(risk.first?["rule"] as? String == "payments" && risk.first?["reason"] as? String == "client Payments is marked sensitive")
            let page = try await bench.browser.get("/console/requests/\(id)")
            #expect(page.status == 200)
            #expect(page.text.contains(#"id="request-risk""#) && page.text.contains("payments: client Payments is marked sensitive"),
                    "\(page.text.suffix(2500))")
        }
    }

    static let firefox133 = "Mozilla/5.0 (X11; Linux x86_64; rv:133.0) Gecko/20100101 Firefox/133.0"
    static let firefox134 = "Mozilla/5.0 (X11; Linux x86_64; rv:134.0) Gecko/20100101 Firefox/134.0"
    static let chromeWindows =
        "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36"

    /// A hosted sign-in for `username` from a browser sending `userAgent`: the page answered.
    static func signIn(_ server: TestServer, _ client: CodeFlowClient, username: String, userAgent: String) async throws
        -> TestServer.Answer {
        let browser = PageVisitor(server, userAgent: userAgent)
        let form = try await browser.get(
            "/authorize" + TestServer.authorizationQuery(client, challenge: CodeFlowClient.challenge(CodeFlowClient.verifier())))
        let attempt = try #require(form.hidden("attempt"), "\(form.text.prefix(300))")
        return try await browser.post("/authorize/sign-in", [("attempt", attempt), ("username", username)])
    }

    @Test("A browser the user never approved from is a new browser; a newer version of the same one is not")
    func newBrowser() async throws {
        try await TestServer.routed { server in
            let web = try await server.createCodeFlowClient()
            let device = try await server.enrollFactorDevice(for: try await server.createUser("ada"))
            try await server.setPolicy(["risk_rules": [Self.rule("new browser", "new_user_agent", "notify", ["days": 30])]])

            #expect(try await Self.signIn(server, web, username: "ada", userAgent: Self.firefox133).status == 200)
            #expect(try await device.newest().details.risk == [.init(rule: "new browser", reason: "new browser: Firefox on Linux")])
            #expect(try await device.answer(factors: ["confirm"]).status == 200)
            #expect(try await Self.signIn(server, web, username: "ada", userAgent: Self.firefox134).status == 200)
            #expect(try await device.newest().details.risk == nil, "a newer Firefox on the same system is the same browser")
            #expect(try await Self.signIn(server, web, username: "ada", userAgent: Self.chromeWindows).status == 200)
            #expect(try await device.newest().details.risk == [.init(rule: "new browser", reason: "new browser: Chrome on Windows")])
            let client = try await server.createClient()
            _ = try await server.startApproval(client, user: "ada")
            #expect(try await device.newest().details.risk == nil, "a CIBA request names no browser")
        }
    }

    @Test("A request refused by the user's requests per minute still records the rules that fired for it, on the user")
    func rateLimitedRequestsKeepTheirFindings() async throws {
        try await TestServer.routed { server in
            let client = try await server.createClient()
            let userID = try await server.createUser("ada")
            _ = try await server.enrollFactorDevice(for: userID)
            try await server.setPolicy([
                "user_requests_per_minute": 1,
                "risk_rules": [Self.rule("burst", "request_burst", "notify", ["count": 1, "minutes": 10])],
            ])
            _ = try await server.startApproval(client, user: "ada")
            let limited = try await server.bcAuthorize(client, [("scope", "openid"), ("login_hint", "ada")])
            #expect(limited.error == "access_denied" && limited.header("Retry-After") != nil, "\(limited.text)")
            let event = try #require(try await Self.fired(server).first)
            #expect(event["target_type"] as? String == "user" && event["target_id"] as? String == userID)
            #expect((event["details"] as? [String: any Sendable])?["reason"] as? String == "1 request in 10 minutes")
        }
    }

    @Test("Phones idle for the rule's days ask for a passkey: CIBA is refused naming the rule, the sign-in offers a passkey; a phone heard from again ends it")
    func idlePhonesAskForAPasskey() async throws {
        try await TestServer.routed { server in
            let client = try await server.createClient()
            let web = try await server.createCodeFlowClient()
            let device = try await server.enrollFactorDevice(for: try await server.createUser("ada"))
            try await server.setPolicy(["risk_rules": [Self.rule("idle", "idle_device", "passkey", ["days": 30])]])
            _ = try await server.startApproval(client, user: "ada")

            server.clock.advance(by: 31 * 86_400)
            let refused = try await server.bcAuthorize(client, [("scope", "openid"), ("login_hint", "ada")])
            #expect(refused.error == "access_denied")
            #expect(refused.errorDescription == "the risk rule 'idle' asks for a passkey, which this request cannot use: no phone used in 31 days")
            let page = try await Self.signIn(server, web, username: "ada", userAgent: Self.firefox133)
            #expect(page.status == 403)
            #expect(page.text.contains("data-outcome=\"passkey-required\"") && page.text.contains("id=\"start-over-passkey\""))
            #expect(!page.text.contains("no phone used"), "whoever types a username learns nothing of the reason")
            let event = try #require(try await Self.fired(server).first?["details"] as? [String: any Sendable])
            #expect(event["action"] as? String == "passkey" && event["reason"] as? String == "no phone used in 31 days")

            #expect(try await device.call("GET", "/device/v1/requests").status == 200)
            #expect(try await server.bcAuthorize(client, [("scope", "openid"), ("login_hint", "ada")]).status == 200,
                    "the phone was heard from")
        }
    }

    @Test("Browsers are told apart by family and system, without versions", arguments: [
        (firefox133, "Firefox on Linux"), (chromeWindows, "Chrome on Windows"),
        ("Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.1 Safari/605.1.15", "Safari on macOS"),
        ("Mozilla/5.0 (iPhone; CPU iPhone OS 18_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) CriOS/131.0.6778.73 Mobile/15E148 Safari/604.1", "Chrome on iOS"),
        ("Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Mobile Safari/537.36", "Chrome on Android"),
        ("Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36 Edg/131.0.0.0", "Edge on Windows"),
        ("curl/8.5.0", "curl"), ("", nil), ("   ", nil),
    ] as [(String, String?)])
    func userAgentFamilies(userAgent: String, family: String?) {
        #expect(UserAgentFamily(userAgent: userAgent)?.name == family)
    }

    @Test("Time of day: a span within a day and one across midnight, in the rule's zone")
    func timeOfDay() async throws {
        #expect(RiskClock.within(9 * 60, from: 8 * 60, to: 18 * 60))
        #expect(!RiskClock.within(18 * 60, from: 8 * 60, to: 18 * 60), "the end is excluded")
        #expect(RiskClock.within(23 * 60, from: 22 * 60, to: 6 * 60) && RiskClock.within(60, from: 22 * 60, to: 6 * 60))
        #expect(!RiskClock.within(12 * 60, from: 22 * 60, to: 6 * 60))
        // 2026-12-06 21:30 UTC is 22:30 in Berlin: outside 08:00–18:00 there.
        let evening = Date(timeIntervalSince1970: 1_796_592_600)
        let local = RiskClock.local(evening, in: try #require(TimeZone(identifier: "Europe/Berlin")))
        #expect(local.text == "22:30")
        #expect(RiskClock.minutes("24:00") == nil && RiskClock.minutes("7:30") == nil && RiskClock.minutes("07:30") == 450)
    }

    @Test("The policy refuses a rule that cannot work, naming the member",
          arguments: [
              ([rule("a", "new_network", "number_match")], "risk_rules[0].days"),
              ([rule("a", "new_network", "number_match", ["days": 31])], "risk_rules[0].days"),
              ([rule("a", "new_network", "notify", ["days": 3, "count": 2])], "risk_rules[0].count"),
              ([rule("a", "request_burst", "notify", ["count": 2])], "risk_rules[0].minutes"),
              ([rule("a", "new_user_agent", "passkey", ["days": 31])], "risk_rules[0].days"),
              ([rule("a", "idle_device", "passkey", ["days": 366])], "risk_rules[0].days"),
              ([rule("a", "idle_device", "notify", ["days": 90, "minutes": 5])], "risk_rules[0].minutes"),
              ([rule("a", "acr", "deny", ["acr": ["urn:other"]])], "risk_rules[0].acr"),
              ([rule("a", "time_of_day", "deny", ["from": "08:00", "to": "18:00", "zone": "Mars/Olympus"])], "risk_rules[0].zone"),
              ([rule("a", "time_of_day", "deny", ["from": "8", "to": "18:00", "zone": "UTC"])], "risk_rules[0].from"),
              ([rule("", "client", "deny", ["clients": ["x"]])], "risk_rules[0].name"),
              ([rule("a", "client", "deny", ["clients": ["x"]]), rule("a", "client", "notify", ["clients": ["y"]])], "risk_rules"),
          ] as [([[String: any Sendable]], String)])
    func invalidRules(rules: [[String: any Sendable]], field: String) async throws {
        try await TestServer.routed { server in
            let answer = try await server.admin("PUT", "/admin/v1/tenants/default/authentication-policy", json: ["risk_rules": rules])
            #expect(answer.status == 400)
            #expect(answer.errorDescription?.hasPrefix("field \(field) is invalid") == true, "\(answer.errorDescription ?? "")")
            let policy = try await server.admin("GET", "/admin/v1/tenants/default/authentication-policy")
            #expect((policy["risk_rules"] as? [Any])?.isEmpty == true && policy["risk_mode"] as? String == "enforce")
        }
    }
}
