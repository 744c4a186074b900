import AuthenticatorAppModel
import CountersignCore
import CountersignKit
import Foundation
import Synchronization
import Testing
@testable import CountersignServer

/// The reference app's model (Examples/AuthenticatorApp/Model) against a real server: what the
/// screens show and do, without the screens.
@Suite("The reference app's model")
struct AuthenticatorAppModelTests {
    @Test("a second phone enrolling with a used code is told the code was used and to ask for a new one")
    func usedCode() async throws {
        try await TestServer.routed { server in
            let uri = try await server.enrollmentURI(for: try await server.createUser("alice"))
            let (first, _) = server.authenticator()
            let (second, _) = server.authenticator()
            _ = try await first.enroll(uri: uri, deviceName: "first", platform: .ios)
            let error = await #expect(throws: CountersignError.self) {
                try await second.enroll(uri: uri, deviceName: "second", platform: .ios)
            }
            let problem = ProblemMessage(try #require(error))
            #expect(problem.title == "Code already used")
            #expect(problem.nextStep == .askForNewCode)
        }
    }

    @Test("an expired code says so")
    func expiredCode() async throws {
        let clock = TestClock()
        try await TestServer.routed(clock: clock) { server in
            let uri = try await server.enrollmentURI(for: try await server.createUser("alice"))
            clock.advance(by: EnrollmentTicket.defaultLifetime + 1)
            let (device, _) = server.authenticator()
            let error = await #expect(throws: CountersignError.self) {
                try await device.enroll(uri: uri, deviceName: "phone", platform: .ios)
            }
            #expect(ProblemMessage(try #require(error)) == ProblemMessage(
                title: "Code expired", explanation: "This enrollment code has expired.", nextStep: .askForNewCode))
        }
    }

    @Test("a phone the administrator removed is told to enroll again")
    func removedPhone() async throws {
        try await TestServer.routed { server in
            let userID = try await server.createUser("alice")
            let (device, _) = server.authenticator()
            let enrollment = try await device.enroll(uri: try await server.enrollmentURI(for: userID), deviceName: "phone", platform: .ios)
            _ = try await server.admin("DELETE", "/admin/v1/tenants/default/devices/\(enrollment.deviceID)")
            let error = await #expect(throws: CountersignError.self) {
                _ = try await device.pendingRequests(enrollment.id)
            }
            let problem = ProblemMessage(try #require(error))
            #expect(problem.title == "Phone removed from your account")
            #expect(problem.nextStep == .enrollAgain)
        }
    }

    /// Every case of the error, with the associated values an app meets.
    static let everyError: [CountersignError] = [
        .notEnrolled, .deviceDeregistered, .userDeregistered, .userDisenrolled, .serverNotReachable,
        .networkConnectivityFailure, .actionCancelled, .invalidEnrollmentURI("not countersign://"), .invalidDeviceName,
        .invalidRequest("empty push token"), .enrollmentRejected(code: "ticket_revoked", description: nil),
        .enrollmentRejected(code: "something_new", description: nil), .serverKeyMismatch, .invalidServerResponse("no receipt"),
        .server(status: 503, code: "temporarily_unavailable", description: nil),
        .server(status: 401, code: "request_expired", description: nil), .server(status: 500, code: "server_error", description: nil),
        .server(status: 403, code: "insufficient_rights", description: nil), .keyStore("locked"), .invalidRequestDetails("digest"),
        .expired, .alreadyAnswered, .requestNotFound, .requestNotHandleable, .factorsNotEnrolled([.pin, .biometric]),
        .verifierUnavailable, .wrongPIN(attemptsRemaining: 1), .wrongPIN(attemptsRemaining: nil), .biometricFailed,
        .pinNotEnrolled, .totpNotEnrolled, .noticeNotFound, .noticeAlreadyReported, .noticeExpired,
        .handoverPending, .handoverNotFound, .handoverClosed, .handoverExpired, .wrongNumber,
    ]

    @Test("every error has a title, an explanation in sentences, and a next step", arguments: everyError)
    func everyErrorIsExplained(_ error: CountersignError) {
        let problem = ProblemMessage(error)
        #expect(!problem.title.isEmpty && !problem.title.hasSuffix("."))
        #expect(problem.explanation.hasSuffix("."), "\(problem.explanation)")
        #expect(!problem.nextStep.buttonTitle.isEmpty)
    }

    @Test("the next steps the user can act on")
    func nextSteps() {
        #expect(ProblemMessage(.wrongPIN(attemptsRemaining: 1)).explanation
            == "1 attempt left before this phone is removed from your account.")
        #expect(ProblemMessage(.factorsNotEnrolled([.pin, .biometric])).nextStep == .setUpFactors([.pin, .biometric]))
        #expect(ProblemMessage(.networkConnectivityFailure).nextStep == .tryAgain)
        #expect(ProblemMessage(.server(status: 401, code: "request_expired", description: nil)).title == "Check the phone's clock")
        #expect(ProblemMessage(.invalidEnrollmentURI("x")).nextStep == .scanAgain)
    }

    // MARK: - Approving

    /// The phone's user as the app's screens would act: a PIN typed on the PIN pad, the number
    /// tapped among the choices, a confirmation.
    final class Screen: ChallengeHandler {
        let pins: Mutex<[String]>
        let shown: Int64?
        let prompts = Mutex<[String]>([])
        let buttons = Mutex<[String]>([])

        init(pins: [String] = [], shown: Int64? = nil) {
            self.pins = Mutex(pins)
            self.shown = shown
        }

        func confirm(_ challenge: ConfirmationChallenge) async -> ConfirmationAnswer { .confirm }
        func matchNumber(_ challenge: NumberMatchChallenge) async -> NumberMatchAnswer {
            let choices = NumberChoices(challenge)
            buttons.withLock { $0 = choices.buttons.map(\.title) }
            guard let button = choices.buttons.first(where: { $0.number == shown }) else { return .cancel }
            return .number(button.number)
        }
        func enterPIN(_ challenge: PINChallenge) async -> PINAnswer {
            var entry = PINEntry(challenge)
            prompts.withLock { $0.append([entry.prompt, entry.note].compactMap { $0 }.joined(separator: " / ")) }
            guard let pin = pins.withLock({ $0.isEmpty ? nil : $0.removeFirst() }) else { return .cancel }
            for digit in pin { entry.type(digit) }
            return entry.submit().map { .pin($0) } ?? .cancel
        }
        func verifyBiometric(_ challenge: BiometricChallenge) async -> BiometricAnswer { .cancel }
        func provideCustomData(_ challenge: CustomChallenge) async -> CustomAnswer { .cancel }
    }

    private func phone(_ server: TestServer, _ username: String, factors: EnrollmentFactors = EnrollmentFactors()) async throws
        -> (CountersignAuthenticator, Enrollment) {
        let userID = try await server.createUser(username)
        let kit = CountersignAuthenticator(
            keyStore: FileKeyStore(root: server.scratch.directory.appendingPathComponent("phone-\(UUID().uuidString)")),
            transport: server.transport, now: server.clock.function)
        let enrollment = try await kit.enroll(
            uri: try await server.enrollmentURI(for: userID), deviceName: "Ada's iPhone", platform: .ios, factors: factors)
        return (kit, enrollment)
    }

    @Test("the inbox lists a request; the summary shows who asks and the binding message; approving gets the client its tokens")
    func approve() async throws {
        try await TestServer.routed { server in
            let client = try await server.createClient()
            let (kit, _) = try await phone(server, "ada")
            let authReqID = try await server.startApproval(client, user: "ada", bindingMessage: "Pay 42.00 EUR to ACME")
            let inbox = try await Inbox.load(kit).get()
            #expect(inbox.requests.count == 1)
            #expect(inbox.badge == "1")
            let details = try await kit.details(for: inbox.requests[0])
            let summary = RequestSummary(details)
            #expect(summary.title == "\(details.clientName) asks you to approve")
            #expect(summary.bindingMessage == "Pay 42.00 EUR to ACME")
            #expect(summary.rows.first == .init(label: "Account", value: "ada"))
            #expect(summary.countdown(at: server.clock.now).hasPrefix("Expires in "))
            #expect(summary.countdown(at: summary.expiresAt) == "Expired")
            let result = await ApprovalResult.respond(to: details, with: kit, screen: Screen())
            #expect(result == .approved("Approved. You can go back to \(details.clientName)."))
            server.clock.advance(by: 6)
            #expect(try await server.token(client, authReqID).status == 200)
            #expect(try await Inbox.load(kit).get().requests.isEmpty)
        }
    }

    @Test("\"This wasn't me\" denies, reports, and the client is refused")
    func notMe() async throws {
        try await TestServer.routed { server in
            let client = try await server.createClient()
            let (kit, _) = try await phone(server, "ada")
            let authReqID = try await server.startApproval(client, user: "ada")
            let details = try await kit.details(for: try #require(try await kit.pendingRequests().first))
            let refusal = try #require(RequestSummary.refusals.first { $0.reason == .notRequested })
            #expect(await ApprovalResult.refuse(details, refusal, with: kit)
                == .denied("Denied and reported. If someone has your password, change it."))
            server.clock.advance(by: 6)
            #expect(try await server.token(client, authReqID).error == "access_denied")
            let audit = try await server.admin("GET", "/admin/v1/tenants/default/audit?limit=50")
            #expect(((audit["items"] as? [[String: Any]]) ?? []).contains { ($0["action"] as? String)?.contains("not_requested") == true
                || (($0["details"] as? [String: Any])?["reason"] as? String) == "not_requested" })
        }
    }

    @Test("\"Not me\" on a notice of a second phone removes it and says so; a second answer says it was reported already")
    func notMeOnANotice() async throws {
        try await TestServer.routed { server in
            let (kit, enrollment) = try await phone(server, "bo")
            let (other, _) = server.authenticator()
            let second = try await other.enroll(
                uri: try await server.enrollmentURI(for: enrollment.user.id), deviceName: "Unknown iPhone", platform: .ios)
            let notice = try #require(try await kit.notices().first)
            #expect(notice.subjectID == second.deviceID)
            #expect(await NoticeAnswer.reportNotMe(notice, with: kit) == NoticeAnswer(
                title: "Reported", body: "The device was removed from your account. New sign-in requests are paused for a while."))
            #expect(await NoticeAnswer.reportNotMe(notice, with: kit) == NoticeAnswer(
                title: "Already reported",
                body: "This change was already reported as not yours, here or on another device, and undone."))
        }
    }

    @Test("moving to a new phone: the code, then the new phone's name and three numbers; the right one adds it, a wrong one ends it")
    func movingToANewPhone() async throws {
        try await TestServer.routed { server in
            let (kit, enrollment) = try await phone(server, "cy")
            let started = try await HandoverScreen.start(enrollment.id, retire: false, with: kit).get()
            guard case .showCode(let uri) = started.stage else {
                Issue.record("a new move does not show its code: \(started.stage)")
                return
            }
            #expect(try await started.refreshed(with: kit).stage == .showCode(uri: uri), "the code stays until a phone scans it")
            let (newKit, _) = server.authenticator()
            let added = try await newKit.enroll(uri: uri, deviceName: "Cy's new iPhone", platform: .ios)
            let handover = try #require(added.handover)
            #expect(HandoverScreen.waitingText(handover) == "On your other phone, pick \(handover.number) to finish adding this one.")
            let asking = await started.refreshed(with: kit)
            guard case .pickNumber("Cy's new iPhone", let choices) = asking.stage else {
                Issue.record("the scanned move does not ask for the number: \(asking.stage)")
                return
            }
            #expect(choices.contains(handover.number))
            #expect(await asking.picked(handover.number, with: kit).stage
                == .done(title: "Cy's new iPhone added", message: "It approves sign-ins now.", added: true))
            #expect(try await newKit.checkHandover(added.id))

            let second = try await HandoverScreen.start(enrollment.id, retire: true, with: kit).get()
            guard case .showCode(let secondURI) = second.stage else { return }
            let (otherKit, _) = server.authenticator()
            let other = try await otherKit.enroll(uri: secondURI, deviceName: "Someone's phone", platform: .ios)
            let wrong = other.handover?.number == "10" ? "11" : "10"
            #expect(await second.refreshed(with: kit).picked(wrong, with: kit).stage == .done(
                title: "Wrong number",
                message: "That is not the number the new phone shows, so it was not added. Start again if it is yours.", added: false))
            #expect(try await kit.enrollments().count == 1, "a refused move keeps this phone")
        }
    }

    @Test("number matching offers the choices as buttons with every digit; tapping the one shown approves")
    func numberMatch() async throws {
        try await TestServer.routed { server in
            let client = try await server.createClient()
            let (kit, _) = try await phone(server, "ada")
            let started = try await server.bcAuthorize(
                client, [("scope", "openid"), ("login_hint", "ada"), ("acr_values", "urn:countersign:acr:number-match")])
            let shown = Int64(try #require(started["match_number"] as? Int))
            let screen = Screen(shown: shown)
            let details = try await kit.details(for: try #require(try await kit.pendingRequests().first))
            #expect(await ApprovalResult.respond(to: details, with: kit, screen: screen) == .approved("Approved. You can go back to \(details.clientName)."))
            let titles = screen.buttons.withLock { $0 }
            #expect(titles.count >= 2)
            #expect(titles.allSatisfy { $0.count == details.numberDigits })
            #expect(titles.contains(NumberChoices.format(shown, digits: details.numberDigits)))
        }
    }

    @Test("the PIN pad says how many attempts are left after a wrong PIN, and the right one approves")
    func pin() async throws {
        try await TestServer.routed { server in
            let client = try await server.createClient()
            let (kit, _) = try await phone(server, "ada", factors: .init(pin: "2468"))
            _ = try await server.startApproval(client, user: "ada", extra: [("acr_values", "urn:countersign:acr:pin")])
            let screen = Screen(pins: ["1111", "2468"])
            let details = try await kit.details(for: try #require(try await kit.pendingRequests().first))
            #expect(await ApprovalResult.respond(to: details, with: kit, screen: screen) == .approved("Approved. You can go back to \(details.clientName)."))
            #expect(screen.prompts.withLock { $0 } == ["Enter your PIN", "Enter your PIN / Wrong PIN. 2 attempts left."])
        }
    }

    @Test("the live stream keeps the inbox current: a new request appears, one answered elsewhere goes")
    func liveInbox() async throws {
        try await TestServer.with(.sqlite) { server in
            let client = try await server.createClient()
            let (kit, enrollment) = try await phone(server, "ada")
            var inbox = try await Inbox.load(kit).get()
            #expect(inbox.requests.isEmpty)
            let events = LiveEvents(kit.liveRequests(enrollment.id))
            try await server.waitForStream(of: enrollment.deviceID)
            _ = try await server.startApproval(client, user: "ada")
            inbox.apply(try await events.next())
            #expect(inbox.requests.count == 1)
            inbox.apply(.request(inbox.requests[0]))
            #expect(inbox.requests.count == 1, "a request reported twice is listed once")
            let details = try await kit.details(for: inbox.requests[0])
            _ = try await kit.deny(details)
            inbox.apply(try await events.next())
            #expect(inbox.requests.isEmpty)
            #expect(inbox.badge == nil)
        }
    }

    @Test("a request that asks only for a tap is approved from its notification; one with number matching is left for the app")
    func approveFromAlert() async throws {
        try await TestServer.routed { server in
            let client = try await server.createClient()
            let (kit, _) = try await phone(server, "ada")
            let tap = try await server.startApproval(client, user: "ada")
            let details = try await kit.details(for: try #require(try await kit.pendingRequests().first))
            #expect(details.isConfirmOnly)
            #expect(await ApprovalResult.approveFromAlert(details, with: kit) == .approved("Approved. You can go back to \(details.clientName)."))
            server.clock.advance(by: 6)
            #expect(try await server.token(client, tap).status == 200)

            _ = try await server.bcAuthorize(
                client, [("scope", "openid"), ("login_hint", "ada"), ("acr_values", "urn:countersign:acr:number-match")])
            let numbered = try await kit.details(for: try #require(try await kit.pendingRequests().first))
            #expect(!numbered.isConfirmOnly)
            #expect(!NotificationText(numbered).approvableFromAlert)
            #expect(NotificationText(numbered).body.hasSuffix("Open to check it and approve.")
                || NotificationText(numbered).body == "Open to see the request and approve or deny it.")
            #expect(await ApprovalResult.approveFromAlert(numbered, with: kit) == nil)
            #expect(try await kit.pendingRequests().count == 1, "nothing was answered")
        }
    }

    // MARK: - Signing in to enroll

    @Test("signing in to enroll: the authorization request carries PKCE S256 and a state; an answer with another state, issuer or an error is refused before any exchange")
    func signIn() async throws {
        try await TestServer.routed { server in
            let signIn = NativeSignIn(server: try #require(URL(string: server.base)), clientID: "authenticator-app",
                                      transport: server.transport)
            let attempt = try await signIn.begin(redirectURI: "com.example.authenticator:/signed-in")
            var query: [String: String] = [:]
            for item in URLComponents(url: attempt.url, resolvingAgainstBaseURL: false)?.queryItems ?? [] { query[item.name] = item.value }
            #expect(query["response_type"] == "code")
            #expect(query["code_challenge_method"] == "S256")
            #expect(query["code_challenge"]?.count == 43)
            #expect(query["redirect_uri"] == "com.example.authenticator:/signed-in")
            #expect(query["scope"]?.replacingOccurrences(of: "+", with: " ") == "openid countersign:enroll")  // form-encoded
            let state = try #require(query["state"])
            let again = try await signIn.begin(redirectURI: attempt.redirectURI)
            #expect(again.url != attempt.url, "each attempt has its own verifier and state")

            func answer(_ items: [String: String]) throws -> URL {
                var components = try #require(URLComponents(string: attempt.redirectURI))
                components.queryItems = items.sorted { $0.key < $1.key }.map { URLQueryItem(name: $0.key, value: $0.value) }
                return try #require(components.url)
            }
            await #expect(throws: NativeSignIn.Failure("the answer's state is not this sign-in's; nothing was exchanged")) {
                try await signIn.accessToken(from: try answer(["code": "c", "state": "other", "iss": server.base]), for: attempt)
            }
            await #expect(throws: NativeSignIn.Failure("the answer came from https://evil.example, not \(server.base)")) {
                try await signIn.accessToken(from: try answer(["code": "c", "state": state, "iss": "https://evil.example"]), for: attempt)
            }
            await #expect(throws: NativeSignIn.Failure("sign-in failed: access_denied: the user said no")) {
                try await signIn.accessToken(
                    from: try answer(["error": "access_denied", "error_description": "the user said no", "state": state, "iss": server.base]),
                    for: attempt)
            }
            await #expect(throws: NativeSignIn.Failure.self) {
                try await signIn.accessToken(from: try answer(["code": "not-a-code", "state": state, "iss": server.base]), for: attempt)
            }
        }
    }

    // MARK: - Notifications, push tokens, accounts, codes

    @Test("the notification service extension's text names the client and the binding message, from a push of ids only")
    func notificationText() async throws {
        try await TestServer.routed { server in
            let client = try await server.createClient()
            let (kit, enrollment) = try await phone(server, "ada")
            _ = try await server.startApproval(client, user: "ada", bindingMessage: "Sign in to the VPN")
            let request = try #require(try await kit.pendingRequests().first)
            let payload = PushPayload(deviceID: enrollment.deviceID, requestID: request.id,
                                      expiresAt: Int64(request.expiresAt.timeIntervalSince1970))
            let userInfo: [AnyHashable: Any] = payload.fcmData
            let text = try #require(await NotificationText.forPush(userInfo, with: kit))
            #expect(text.title.hasSuffix(": approve as ada?"))
            #expect(text.body == "“Sign in to the VPN”. Approve or deny here.")
            #expect(text.approvableFromAlert)
            #expect(await NotificationText.forPush(["aps": ["alert": "hello"]], with: kit) == nil)
        }
    }

    @Test("a device token is given to every account once, and again when it changes")
    func pushTokens() async throws {
        try await TestServer.routed { server in
            let (kit, enrollment) = try await phone(server, "ada")
            let file = server.scratch.directory.appendingPathComponent("push-\(UUID().uuidString)/tokens.json")
            let tokens = PushTokens(authenticator: kit, file: file)
            let first = Data((0..<32).map { UInt8($0) })
            #expect(PushTokens.hex(first).hasPrefix("000102"))
            #expect(await tokens.register(deviceToken: first).isEmpty)
            #expect(try await kit.deviceStatus(enrollment.id).push?.tokenSuffix == String(PushTokens.hex(first).suffix(8)))
            // Removed at the server by another path: the same token is not sent again…
            _ = try await kit.updatePushToken(enrollment.id, to: nil)
            #expect(await tokens.register(deviceToken: first).isEmpty)
            #expect(try await kit.deviceStatus(enrollment.id).push == nil)
            // …a new one is.
            let second = Data((0..<32).map { UInt8(255 - $0) })
            #expect(await tokens.register(deviceToken: second).isEmpty)
            #expect(try await kit.deviceStatus(enrollment.id).push?.tokenSuffix == String(PushTokens.hex(second).suffix(8)))
        }
    }

    @Test("accounts list, rename and remove; the enrollment link names the server before anything is sent")
    func accounts() async throws {
        try await TestServer.routed { server in
            let userID = try await server.createUser("ada")
            let uri = try await server.enrollmentURI(for: userID)
            let link = try EnrollmentLink.read("  \(uri)\n").get()
            #expect(link.uri == uri)
            let host = try #require(URL(string: server.base)?.host)
            #expect(link.serverName.hasPrefix(host))
            guard case .failure(let problem) = EnrollmentLink.read("https://example.com/not-an-enrollment") else {
                Issue.record("a web link was read as an enrollment link"); return
            }
            #expect(problem.nextStep == .scanAgain)
            #expect(EnrollmentLink.deviceName(from: "Ada's iPhone") == "Ada's iPhone")
            #expect(EnrollmentLink.deviceName(from: "") == "iPhone")

            let kit = CountersignAuthenticator(
                keyStore: FileKeyStore(root: server.scratch.directory.appendingPathComponent("phone-\(UUID().uuidString)")),
                transport: server.transport, now: server.clock.function)
            let enrollment = try await kit.enroll(uri: link.uri, deviceName: "iPhone", platform: .ios)
            #expect(try await AccountList.load(kit).get().rows == [.init(id: enrollment.id, title: "ada", subtitle: "\(host) · iPhone")])
            #expect(await AccountList.rename(enrollment.id, to: "Work phone", with: kit) == nil)
            #expect(try await AccountList.load(kit).get().rows.first?.subtitle == "\(host) · Work phone")
            #expect(await AccountList.rename(enrollment.id, to: "", with: kit) == ProblemMessage(.invalidDeviceName))
            #expect(await AccountList.remove(enrollment.id, with: kit) == nil)
            #expect(try await AccountList.load(kit).get().rows.isEmpty)
            #expect(await AccountList.remove(enrollment.id, with: kit)?.nextStep == .enrollAgain)
        }
    }

    @Test("the one-time code is shown in two groups with the seconds left, and the server accepts it")
    func oneTimeCode() async throws {
        try await TestServer.routed { server in
            let client = try await server.createClient()
            let (kit, enrollment) = try await phone(server, "ada", factors: .init(totp: true))
            let display = try await OneTimeCodeDisplay.current(for: enrollment.id, with: kit, at: server.clock.now).get()
            #expect(display.code.count == 7 && display.code.dropFirst(3).first == " ")
            #expect((1...30).contains(display.secondsLeft))
            let verified = try await server.form(
                "/totp/verify", [("login_hint", "ada"), ("code", display.code.replacingOccurrences(of: " ", with: ""))], basic: client)
            #expect(verified.status == 200)
            let (other, otherEnrollment) = try await phone(server, "bob")
            guard case .failure(let problem) = await OneTimeCodeDisplay.current(for: otherEnrollment.id, with: other) else {
                Issue.record("an enrollment without a seed showed a code"); return
            }
            #expect(problem == ProblemMessage(.totpNotEnrolled))
        }
    }

    @Test("the PIN pad: digits only, 4 to 12 of them; a new PIN is typed twice and must match")
    func pinPad() {
        var entry = PINEntry(reason: .setUp)
        for character in "12a3" { entry.type(character) }
        #expect(entry.digits == "123" && !entry.canSubmit)
        entry.type("4")
        #expect(entry.submit() == nil)
        #expect(entry.prompt == "Enter the same PIN again")
        for character in "1235" { entry.type(character) }
        #expect(entry.submit() == nil)
        #expect(entry.note == "The two PINs were different. Start again.")
        for character in "1234" { entry.type(character) }
        #expect(entry.submit() == nil)
        for character in "12345678901234" { entry.type(character) }
        #expect(entry.digits == "123456789012")
        entry.deleteBackward()
        for _ in 0..<7 { entry.deleteBackward() }
        #expect(entry.digits == "1234")
        #expect(entry.submit() == "1234")
    }
}
