import CountersignCore
import CountersignKit
import CountersignPushEmulator
import Foundation
import Synchronization
import Testing
@testable import CountersignServer

/// The server against a local endpoint that speaks the APNs provider API over HTTP/2 and TLS,
/// checks what Apple checks, and answers as Apple does.
@Suite("APNs delivery", .enabled(if: PushTestPKI.available))
struct APNsDeliveryTests {
    /// A server whose tenant sends with a .p8 key to a local APNs.
    static func withTokenAPNs(
        _ engine: Engine = .sqlite, clock: TestClock = TestClock(),
        respond: @escaping @Sendable (APNsEmulator.Notification) -> APNsEmulator.Verdict? = { _ in nil },
        _ body: (TestServer, APNsEmulator, APNsTestKey) async throws -> Void
    ) async throws {
        let pki = try #require(PushTestPKI.shared)
        let key = APNsTestKey()
        let apns = try await APNsEmulator.start(
            pki: pki, authentication: .token([key.providerKey]), now: clock.function, respond: respond)
        do {
            try await TestServer.with(engine, clock: clock, configure: { TestServer.pushConfiguration(&$0, pki: pki, apns: apns) }) { server in
                let set = try await server.admin("PUT", "/admin/v1/tenants/default/push-credentials/apns-token",
                                                 json: key.fields())
                #expect(set.status == 200, "\(set.errorDescription ?? "")")
                try await body(server, apns, key)
            }
        } catch {
            try? await apns.stop()
            throw error
        }
        try await apns.stop()
    }

    @Test("a new request is pushed with Apple's headers, a provider token and a payload without details",
          arguments: Engine.available)
    func requestIsPushed(engine: Engine) async throws {
        try await Self.withTokenAPNs(engine) { server, apns, key in
            let client = try await server.createClient(name: "Online banking")
            let token = apnsDeviceToken()
            let alice = try await server.enrolledUser("alice", push: PushRegistration(provider: .apns, token: token))
            _ = try await server.startApproval(client, user: "alice", bindingMessage: "Pay 42.00 EUR to ACME")
            let requestID = try await server.newestRequest(of: alice)

            try await eventually("APNs accepted the notification") { apns.acceptedCount == 1 }
            let push = try #require(apns.notifications().first)
            #expect(push.method == "POST")
            #expect(push.deviceToken == token)
            #expect(push.header("apns-push-type") == "alert")
            #expect(push.header("apns-topic") == "com.example.bank")
            #expect(push.header("apns-priority") == "10")
            #expect(push.header("apns-collapse-id") == requestID)
            let envelope = try #require(try await alice.device.inbox().first)
            #expect(push.header("apns-expiration") == String(Int64(envelope.expiresAt.timeIntervalSince1970)))
            #expect(push.body.count < 4096)

            let jwt = try CompactJWS(parsing: try #require(push.providerToken))
            #expect(jwt.keyID == key.keyID)
            #expect(jwt.isValid(for: key.key.publicKey))
            let claims = try jwt.payloadJSON()
            #expect(claims["iss"]?.stringValue == key.teamID)
            #expect(claims["iat"]?.integerValue == Int64(server.clock.now.timeIntervalSince1970.rounded(.down)))

            let payload = try JSONValue(parsing: push.body)
            let aps = try #require(payload["aps"])
            #expect(aps["category"]?.stringValue == "COUNTERSIGN_APPROVAL")
            #expect(aps["mutable-content"]?.integerValue == 1)
            #expect(aps["interruption-level"]?.stringValue == "time-sensitive")
            let member = try #require(payload["countersign"])
            let parsed = try #require(PushPayload(jsonData: member.canonicalData))
            #expect(parsed == PushPayload(deviceID: alice.enrollment.deviceID, requestID: requestID,
                                          expiresAt: Int64(envelope.expiresAt.timeIntervalSince1970)))
            let text = String(decoding: push.body, as: UTF8.self)
            #expect(!text.contains("ACME") && !text.contains("Online banking") && !text.contains("alice"))

            // The SDK turns the push into the pending request.
            let pending = try #require(try await alice.kit.request(fromPushPayload: [PushPayload.key: member.canonicalString]))
            #expect(pending.id == requestID)

            try await eventually("the delivery shows as sent") {
                try await server.notificationStatuses(requestID, device: alice.enrollment.deviceID) == ["sent"]
            }
        }
    }

    @Test("one provider token serves every push until it is 50 minutes old, then a new one is made")
    func providerTokenIsReused() async throws {
        let clock = TestClock()
        try await Self.withTokenAPNs(clock: clock) { server, apns, _ in
            let client = try await server.createClient(name: "Portal")
            _ = try await server.enrolledUser("bob", push: PushRegistration(provider: .apns, token: apnsDeviceToken()))
            for (step, minutes) in [0.0, 19, 25, 49].enumerated() {
                if step > 0 { clock.advance(by: (minutes - [0.0, 19, 25, 49][step - 1]) * 60) }
                _ = try await server.startApproval(client, user: "bob")
                try await eventually("push \(step + 1) accepted") { apns.acceptedCount == step + 1 }
            }
            #expect(apns.providerTokens().count == 1)
            clock.advance(by: 2 * 60)
            _ = try await server.startApproval(client, user: "bob")
            try await eventually("push 5 accepted") { apns.acceptedCount == 5 }
            #expect(apns.providerTokens().count == 2, "a token 51 minutes old is replaced")
        }
    }

    @Test("ExpiredProviderToken makes a new token and the push is sent again at once")
    func expiredProviderTokenIsRenewed() async throws {
        let clock = TestClock()
        let received = Mutex(0)
        // APNs takes the first push, then calls the token expired once.
        try await Self.withTokenAPNs(clock: clock, respond: { _ in
            received.withLock { count in
                count += 1
                return count == 2 ? .reject(status: 403, reason: "ExpiredProviderToken") : nil
            }
        }) { server, apns, _ in
            let client = try await server.createClient(name: "Portal")
            let carol = try await server.enrolledUser("carol", push: PushRegistration(provider: .apns, token: apnsDeviceToken()))
            _ = try await server.startApproval(client, user: "carol")
            try await eventually("the first push was accepted") { apns.acceptedCount == 1 }
            clock.advance(by: 30 * 60)
            _ = try await server.startApproval(client, user: "carol")
            let requestID = try await server.newestRequest(of: carol)
            try await eventually("the renewed push was accepted") { apns.acceptedCount == 2 }
            #expect(apns.notifications().count == 3)
            #expect(apns.providerTokens().count == 2)
            try await eventually("the push shows as sent") {
                try await server.notificationStatuses(requestID, device: carol.enrollment.deviceID) == ["sent"]
            }
        }
    }

    @Test("a token younger than 20 minutes is not replaced when APNs calls it expired; the push waits for a retry")
    func youngTokenIsNotReplaced() async throws {
        let clock = TestClock()
        let received = Mutex(0)
        try await Self.withTokenAPNs(clock: clock, respond: { _ in
            received.withLock { count in
                count += 1
                return count == 1 ? .reject(status: 403, reason: "ExpiredProviderToken") : nil
            }
        }) { server, apns, _ in
            let client = try await server.createClient(name: "Portal")
            let cy = try await server.enrolledUser("cy", push: PushRegistration(provider: .apns, token: apnsDeviceToken()))
            _ = try await server.startApproval(client, user: "cy")
            let requestID = try await server.newestRequest(of: cy)
            try await eventually("the push waits for its retry") {
                try await server.notificationStatuses(requestID, device: cy.enrollment.deviceID) == ["queued"]
            }
            #expect(apns.notifications().count == 1)
            clock.advance(by: 2)
            try await eventually("the retry went through") { apns.acceptedCount == 1 }
            #expect(apns.providerTokens().count == 1)
        }
    }

    @Test("410 Unregistered and 400 BadDeviceToken end the token; the device works on and can register a new one",
          arguments: [(410, "Unregistered"), (400, "BadDeviceToken")])
    func deadTokensAreMarkedInvalid(status: Int, reason: String) async throws {
        let dead = apnsDeviceToken()
        try await Self.withTokenAPNs(respond: { push in
            push.deviceToken == dead
                ? .reject(status: status, reason: reason, timestamp: status == 410 ? Int64(Date().timeIntervalSince1970 * 1000) + 60_000 : nil)
                : nil
        }) { server, apns, _ in
            let client = try await server.createClient(name: "Portal")
            let dave = try await server.enrolledUser("dave", push: PushRegistration(provider: .apns, token: dead))
            _ = try await server.startApproval(client, user: "dave")
            let first = try await server.newestRequest(of: dave)
            try await eventually("the token was marked invalid") {
                let push = try await server.deviceRecord(dave.enrollment.deviceID)["push"] as? [String: any Sendable]
                return push?["valid"] as? Bool == false && push?["error"] as? String == reason
            }
            #expect(try await server.notificationStatuses(first, device: dave.enrollment.deviceID) == ["failed"])
            let described = try await dave.kit.deviceStatus(dave.enrollment.id)
            #expect(described.push?.valid == false)
            #expect(described.push?.error == reason)

            // No push is queued for an invalid token, but the inbox still has the request.
            _ = try await server.startApproval(client, user: "dave")
            let second = try await server.newestRequest(of: dave)
            #expect(try await server.notificationStatuses(second, device: dave.enrollment.deviceID).isEmpty)

            let fresh = apnsDeviceToken()
            let updated = try await dave.kit.updatePushToken(dave.enrollment.id, to: PushRegistration(provider: .apns, token: fresh))
            #expect(updated.push?.valid == true)
            _ = try await server.startApproval(client, user: "dave")
            try await eventually("the new token got a push") { apns.notifications().contains { $0.deviceToken == fresh } }
        }
    }

    @Test("429 and 5xx are retried with backoff until APNs takes the push",
          arguments: [(429, "TooManyRequests"), (503, "ServiceUnavailable"), (500, "InternalServerError")])
    func passingFailuresAreRetried(status: Int, reason: String) async throws {
        let clock = TestClock()
        let refusals = Mutex(0)
        try await Self.withTokenAPNs(clock: clock, respond: { _ in
            refusals.withLock { count in
                count += 1
                return count <= 2 ? .reject(status: status, reason: reason) : nil
            }
        }) { server, apns, _ in
            let client = try await server.createClient(name: "Portal")
            let erin = try await server.enrolledUser("erin", push: PushRegistration(provider: .apns, token: apnsDeviceToken()))
            _ = try await server.startApproval(client, user: "erin")
            let requestID = try await server.newestRequest(of: erin)
            try await eventually("the first attempt was refused") { apns.notifications().count == 1 }
            try await eventually("the push waits for its retry") {
                try await server.notificationStatuses(requestID, device: erin.enrollment.deviceID) == ["queued"]
            }
            // Not before its backoff: the clock has not moved, so nothing more is sent.
            try await Task.sleep(for: .milliseconds(300))
            #expect(apns.notifications().count == 1)
            clock.advance(by: 2)
            try await eventually("the second attempt was refused and the push waits again") {
                let notification = (try await server.deliveries(requestID).first?["notifications"] as? [[String: any Sendable]])?.first
                return notification?["status"] as? String == "queued" && notification?["attempts"] as? Int == 2
            }
            #expect(apns.notifications().count == 2)
            clock.advance(by: 4)
            try await eventually("the third attempt went through") { apns.acceptedCount == 1 }
            try await eventually("it shows as sent") {
                try await server.notificationStatuses(requestID, device: erin.enrollment.deviceID) == ["sent"]
            }
        }
    }

    @Test("any other refusal is recorded as failed with Apple's reason and not retried")
    func otherRefusalsFail() async throws {
        let clock = TestClock()
        try await Self.withTokenAPNs(clock: clock, respond: { _ in .reject(status: 400, reason: "TopicDisallowed") }) {
            server, apns, _ in
            let client = try await server.createClient(name: "Portal")
            let fay = try await server.enrolledUser("fay", push: PushRegistration(provider: .apns, token: apnsDeviceToken()))
            _ = try await server.startApproval(client, user: "fay")
            let requestID = try await server.newestRequest(of: fay)
            try await eventually("the push is recorded as failed") {
                try await server.notificationStatuses(requestID, device: fay.enrollment.deviceID) == ["failed"]
            }
            let devices = try await server.deliveries(requestID)
            let notification = try #require((devices.first?["notifications"] as? [[String: any Sendable]])?.first)
            #expect(notification["last_error"] as? String == "TopicDisallowed")
            let failures = try await server.admin("GET", "/admin/v1/tenants/default/push-deliveries?status=failed")
            let failure = (failures["items"] as? [[String: any Sendable]])?.first
            #expect(failure?["request_id"] as? String == requestID && failure?["device_id"] as? String == fay.enrollment.deviceID)
            #expect(failure?["last_error"] as? String == "TopicDisallowed" && failure?["provider"] as? String == "apns")
            clock.advance(by: 120)
            try await Task.sleep(for: .milliseconds(300))
            #expect(apns.notifications().count == 1)
            let push = try await server.deviceRecord(fay.enrollment.deviceID)["push"] as? [String: any Sendable]
            #expect(push?["valid"] as? Bool == true, "a refused topic says nothing about the token")
        }
    }

    @Test("with a certificate, the push goes over mutual TLS with the uploaded client certificate")
    func certificateAuthentication() async throws {
        let pki = try #require(PushTestPKI.shared)
        let p12 = try pki.clientPKCS12(commonName: "Apple Push Services: com.example.bank", topic: "com.example.bank",
                                       password: "s3cret")
        let apns = try await APNsEmulator.start(pki: pki, authentication: .certificate(trustedCAPath: pki.caCertificatePath))
        try await TestServer.with(.sqlite, configure: { TestServer.pushConfiguration(&$0, pki: pki, apns: apns) }) { server in
            let set = try await server.admin(
                "PUT", "/admin/v1/tenants/default/push-credentials/apns-certificates/bank-ios",
                json: PushCredentialTests.certificateFields(p12))
            #expect(set.status == 200, "\(set.errorDescription ?? "")")
            let client = try await server.createClient(name: "Portal")
            _ = try await server.enrolledUser("gus", push: PushRegistration(provider: .apns, token: apnsDeviceToken()))
            _ = try await server.startApproval(client, user: "gus")
            try await eventually("APNs accepted the push") { apns.acceptedCount == 1 }
            let push = try #require(apns.notifications().first)
            #expect(push.clientCertificateSubject == "Apple Push Services: com.example.bank")
            #expect(push.providerToken == nil)
            #expect(push.header("apns-topic") == "com.example.bank")
        }
        try await apns.stop()
    }

    @Test("when one device answers, the others get a background push to take the alert down", arguments: Engine.available)
    func otherDevicesAreToldToWithdraw(engine: Engine) async throws {
        try await Self.withTokenAPNs(engine) { server, apns, _ in
            let client = try await server.createClient(name: "Portal")
            let phoneToken = apnsDeviceToken()
            let tabletToken = apnsDeviceToken()
            let phone = try await server.enrolledUser("hal", push: PushRegistration(provider: .apns, token: phoneToken))
            let tablet = try await server.enrollDevice(
                for: phone.userID, username: "hal", push: PushRegistration(provider: .apns, token: tabletToken), name: "tablet")
            // The phone is told of the tablet first (a notice), then both are alerted.
            try await eventually("the phone was told of the tablet") { apns.acceptedCount == 1 }
            _ = try await server.startApproval(client, user: "hal")
            try await eventually("both devices were alerted") { apns.acceptedCount == 3 }
            let requestID = try await server.newestRequest(of: phone)

            #expect(try await phone.device.decideNewest(.approve).status == 200)
            try await eventually("the tablet was told to withdraw") { apns.acceptedCount == 4 }
            let withdraw = try #require(apns.notifications().last)
            #expect(withdraw.deviceToken == tabletToken)
            #expect(withdraw.header("apns-push-type") == "background")
            #expect(withdraw.header("apns-priority") == "5")
            let payload = try JSONValue(parsing: withdraw.body)
            #expect(payload["aps"]?["content-available"]?.integerValue == 1)
            #expect(payload["aps"]?["alert"] == nil)
            let member = try #require(payload["countersign"])
            let parsed = try #require(PushPayload(jsonData: member.canonicalData))
            #expect(parsed.event == .closed)
            #expect(parsed.requestID == requestID)
            // The tablet's SDK reads it as "take the alert down", without asking the server.
            let userInfo: [AnyHashable: Any] = [PushPayload.key: member.canonicalString]
            guard case .closed(let closedID, let enrollmentID)? = try await tablet.kit.event(fromPushPayload: userInfo) else {
                Issue.record("the withdraw push was not read as closed")
                return
            }
            #expect(closedID == requestID)
            #expect(enrollmentID == tablet.enrollment.id)
            #expect(try await tablet.kit.request(fromPushPayload: userInfo) == nil)
            #expect(try await tablet.device.inbox().isEmpty)
            try await eventually("both of the tablet's notifications show as sent") {
                try await server.notificationStatuses(requestID, device: tablet.enrollment.deviceID) == ["sent", "sent"]
            }
            try await eventually("the phone's alert shows as sent") {
                try await server.notificationStatuses(requestID, device: phone.enrollment.deviceID) == ["sent"]
            }
        }
    }

    @Test("a device added is announced to the user's other device by an alert that names it; 'Not me' from it removes the device",
          arguments: Engine.available)
    func deviceAddedIsPushedAsNotice(engine: Engine) async throws {
        try await Self.withTokenAPNs(engine) { server, apns, _ in
            let phoneToken = apnsDeviceToken()
            let phone = try await server.enrolledUser("ines", push: PushRegistration(provider: .apns, token: phoneToken))
            #expect(apns.acceptedCount == 0, "the first device is told of nothing")
            let tablet = try await server.enrollDevice(
                for: phone.userID, username: "ines", push: PushRegistration(provider: .apns, token: apnsDeviceToken()),
                name: "Ines's tablet")

            try await eventually("the phone was told of the tablet") { apns.acceptedCount == 1 }
            let push = try #require(apns.notifications().first)
            #expect(push.deviceToken == phoneToken, "the new device is not told of itself")
            #expect(push.header("apns-push-type") == "alert")
            #expect(push.header("apns-priority") == "10")
            let payload = try JSONValue(parsing: push.body)
            let aps = try #require(payload["aps"])
            #expect(aps["category"]?.stringValue == "COUNTERSIGN_NOTICE")
            #expect(aps["alert"]?["title"]?.stringValue == "New device on your account")
            #expect(aps["alert"]?["body"]?.stringValue
                == "A new device, “Ines's tablet”, was added to your account. Not you? Answer “Not me”.")
            let member = try #require(payload["countersign"])
            #expect(member["request_id"] == nil)
            let parsed = try #require(PushPayload(jsonData: member.canonicalData))
            #expect(parsed.event == .notice)
            #expect(parsed.deviceID == phone.enrollment.deviceID)
            let noticeID = try #require(parsed.noticeID)
            #expect(noticeID.hasPrefix("ntc_"))
            #expect(push.header("apns-collapse-id") == noticeID)

            // The phone's SDK reads the push as the notice, and "Not me" removes the tablet.
            let userInfo: [AnyHashable: Any] = [PushPayload.key: member.canonicalString]
            guard case .notice(let notice)? = try await phone.kit.event(fromPushPayload: userInfo) else {
                Issue.record("the notice push was not read as a notice")
                return
            }
            #expect(notice.id == noticeID)
            #expect(notice.kind == .deviceAdded)
            #expect(notice.subjectID == tablet.enrollment.deviceID)
            #expect(notice.summary == "A new device, “Ines's tablet”, was added to your account.")
            #expect(try await phone.kit.request(fromPushPayload: userInfo) == nil, "a notice is no request")
            let report = try await phone.kit.reportNotMe(notice)
            #expect(report.removed == .device)
            await #expect(throws: CountersignError.deviceDeregistered) { try await tablet.kit.deviceStatus(tablet.enrollment.id) }
            await #expect(throws: CountersignError.noticeAlreadyReported) { try await phone.kit.reportNotMe(notice) }
            // Answered: the push reads as nothing to show.
            #expect(try await phone.kit.event(fromPushPayload: userInfo) == nil)

            let listed = try await server.admin("GET", "/admin/v1/tenants/default/push-deliveries")
            let item = try #require(listed.json?["items"] as? [[String: Any]]).first
            #expect(item?["kind"] as? String == "notice")
            #expect(item?["notice_id"] as? String == noticeID)
            #expect(item?["request_id"] == nil)
        }
    }

    @Test("a notice answered \"not me\" by one device while its push to another waits for a retry is not pushed again")
    func answeredNoticeIsNotPushed() async throws {
        let clock = TestClock()
        let slowToken = apnsDeviceToken()
        try await Self.withTokenAPNs(clock: clock, respond: { push in
            push.deviceToken == slowToken ? .reject(status: 503, reason: "ServiceUnavailable") : nil
        }) { server, apns, _ in
            let desk = try await server.enrolledUser("kim")
            let phone = try await server.enrollDevice(
                for: desk.userID, username: "kim", push: PushRegistration(provider: .apns, token: slowToken), name: "phone")
            let laptop = try await server.enrollDevice(for: desk.userID, username: "kim", name: "laptop")
            try await eventually("the phone's notice of the laptop was refused once and waits for a retry") {
                try await Self.noticePushes(server).map { "\($0.status) \($0.lastError?.contains("ServiceUnavailable") == true)" }
                    == ["queued true"]
            }
            #expect(apns.notifications().filter { $0.deviceToken == slowToken }.count == 1)

            let notice = try #require(try await desk.kit.notices().first { $0.subjectID == laptop.enrollment.deviceID })
            #expect(try await desk.kit.reportNotMe(notice).removed == .device)
            _ = phone
            clock.advance(by: 10)
            try await eventually("the waiting push is cancelled") {
                try await Self.noticePushes(server).map(\.status) == ["cancelled"]
            }
            #expect(try await Self.noticePushes(server).first?.lastError == "the notice was answered or removed before it was sent")
            #expect(apns.notifications().filter { $0.deviceToken == slowToken }.count == 1, "not sent again")
        }
    }

    /// The tenant's notice pushes, newest first: their status and last error.
    static func noticePushes(_ server: TestServer) async throws -> [(status: String, lastError: String?)] {
        let listed = try await server.admin("GET", "/admin/v1/tenants/default/push-deliveries")
        return (listed.json?["items"] as? [[String: Any]] ?? []).filter { $0["kind"] as? String == "notice" }.map {
            ($0["status"] as? String ?? "", $0["last_error"] as? String)
        }
    }

    @Test("an alert still waiting for a retry when the request is answered is cancelled, not sent")
    func waitingAlertIsCancelledByTheAnswer() async throws {
        let clock = TestClock()
        let slowToken = apnsDeviceToken()
        try await Self.withTokenAPNs(clock: clock, respond: { push in
            push.deviceToken == slowToken ? .reject(status: 503, reason: "ServiceUnavailable") : nil
        }) { server, apns, _ in
            let client = try await server.createClient(name: "Portal")
            let phone = try await server.enrolledUser("ivy", push: PushRegistration(provider: .apns, token: apnsDeviceToken()))
            let tablet = try await server.enrollDevice(
                for: phone.userID, username: "ivy", push: PushRegistration(provider: .apns, token: slowToken), name: "tablet")
            _ = try await server.startApproval(client, user: "ivy")
            let requestID = try await server.newestRequest(of: phone)
            try await eventually("the tablet's alert waits for a retry") {
                try await server.notificationStatuses(requestID, device: tablet.enrollment.deviceID) == ["queued"]
            }
            #expect(try await phone.device.decideNewest(.deny).status == 200)
            #expect(try await server.notificationStatuses(requestID, device: tablet.enrollment.deviceID) == ["cancelled"])
            clock.advance(by: 10)
            try await Task.sleep(for: .milliseconds(300))
            #expect(apns.notifications().filter { $0.deviceToken == slowToken }.count == 1, "no retry, and no withdraw")
        }
    }
}
