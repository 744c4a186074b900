import CountersignCore
import CountersignKit
import CountersignPushEmulator
import Foundation
import Synchronization
import Testing
@testable import CountersignServer

/// The server against a local endpoint that speaks FCM HTTP v1 and Google's OAuth token
/// endpoint (JWT-bearer grant) over HTTP/2 and TLS.
@Suite("FCM delivery", .enabled(if: PushTestPKI.available))
struct FCMDeliveryTests {
    static func withFCM(
        clock: TestClock = TestClock(), accessTokenLifetime: Int = 3599,
        respond: @escaping @Sendable (FCMEmulator.Message) -> FCMEmulator.Verdict? = { _ in nil },
        _ body: (TestServer, FCMEmulator) async throws -> Void
    ) async throws {
        let pki = try #require(PushTestPKI.shared)
        let account = try FCMEmulator.ServiceAccount.make(
            projectID: "bank-app-1", clientEmail: "push@bank-app-1.iam.gserviceaccount.com",
            tokenURI: "https://oauth2.googleapis.com/token")
        let fcm = try await FCMEmulator.start(
            pki: pki, account: account, now: clock.function, accessTokenLifetime: accessTokenLifetime, respond: respond)
        do {
            try await TestServer.with(.sqlite, clock: clock, configure: { TestServer.pushConfiguration(&$0, pki: pki, fcm: fcm) }) {
                server in
                let set = try await server.admin("PUT", "/admin/v1/tenants/default/push-credentials/fcm",
                                                 json: ["service_account": account.json])
                #expect(set.status == 200, "\(set.errorDescription ?? "")")
                try await body(server, fcm)
            }
        } catch {
            try? await fcm.stop()
            throw error
        }
        try await fcm.stop()
    }

    static func fcmToken() -> String { "fcm:" + Secrets.randomBytes(60).base64URLEncodedString }

    @Test("a request is sent as a high-priority data message after one token exchange")
    func requestIsSent() async throws {
        try await Self.withFCM { server, fcm in
            let client = try await server.createClient(name: "Portal")
            let token = Self.fcmToken()
            let ann = try await server.enrolledUser("ann", push: PushRegistration(provider: .fcm, token: token))
            _ = try await server.startApproval(client, user: "ann", bindingMessage: "Pay 10 EUR")
            _ = try await server.startApproval(client, user: "ann", bindingMessage: "Pay 20 EUR")
            try await eventually("FCM took both messages") { fcm.messages().count == 2 }
            #expect(fcm.tokenRequestCount == 1, "the access token is shared")
            let message = try #require(fcm.messages().first)
            #expect(message.projectID == "bank-app-1")
            #expect(message.token == token)
            #expect(message.androidPriority == "HIGH")
            let ttl = try #require(message.androidTTL)
            #expect(ttl.hasSuffix("s") && (Int(ttl.dropLast()) ?? 0) > 200)
            let payload = try #require(PushPayload(userInfo: message.data))
            #expect(payload.deviceID == ann.enrollment.deviceID)
            let requests = try await ann.device.inbox().map(\.id)
            #expect(requests.contains(payload.requestID))
            #expect(!message.data.values.contains { $0.contains("EUR") })

            let assertion = try CompactJWSHeaderless(try #require(fcm.assertions().first))
            #expect(assertion.claims["iss"]?.stringValue == "push@bank-app-1.iam.gserviceaccount.com")
            #expect(assertion.claims["aud"]?.stringValue == fcm.tokenURL)
            #expect(assertion.claims["scope"]?.stringValue == "https://www.googleapis.com/auth/firebase.messaging")
        }
    }

    @Test("a device added is a data message to the user's other device, with the notice's text, which its SDK reads as the notice")
    func noticeIsSent() async throws {
        try await Self.withFCM { server, fcm in
            let token = Self.fcmToken()
            let cy = try await server.enrolledUser("cy", push: PushRegistration(provider: .fcm, token: token))
            let tablet = try await server.enrollDevice(
                for: cy.userID, username: "cy", push: PushRegistration(provider: .fcm, token: Self.fcmToken()), name: "Cy's tablet")
            try await eventually("FCM took the notice") { fcm.messages().count == 1 }
            let message = try #require(fcm.messages().first)
            #expect(message.token == token, "only the device that was there before is told")
            #expect(message.androidPriority == "HIGH")
            #expect(message.data["title"] == "New device on your account")
            #expect(message.data["body"] == "A new device, “Cy's tablet”, was added to your account. Not you? Answer “Not me”.")
            let payload = try #require(PushPayload(userInfo: message.data))
            #expect(payload.event == .notice)
            guard case .notice(let notice)? = try await cy.kit.event(fromPushPayload: message.data) else {
                Issue.record("the message was not read as a notice")
                return
            }
            #expect(notice.subjectID == tablet.enrollment.deviceID)
            #expect(notice.id == payload.noticeID)
        }
    }

    @Test("UNREGISTERED ends the token; the device is told through its status")
    func unregisteredTokenIsInvalid() async throws {
        try await Self.withFCM(respond: { _ in
            .reject(httpStatus: 404, status: "NOT_FOUND", errorCode: "UNREGISTERED", message: "Requested entity was not found.")
        }) { server, _ in
            let client = try await server.createClient(name: "Portal")
            let ben = try await server.enrolledUser("ben", push: PushRegistration(provider: .fcm, token: Self.fcmToken()))
            _ = try await server.startApproval(client, user: "ben")
            try await eventually("the token was marked invalid") {
                let push = try await server.deviceRecord(ben.enrollment.deviceID)["push"] as? [String: any Sendable]
                return push?["valid"] as? Bool == false && push?["error"] as? String == "UNREGISTERED"
            }
        }
    }

    @Test("an access token Google no longer takes is replaced and the message sent again")
    func revokedAccessTokenIsReplaced() async throws {
        try await Self.withFCM { server, fcm in
            let client = try await server.createClient(name: "Portal")
            _ = try await server.enrolledUser("cat", push: PushRegistration(provider: .fcm, token: Self.fcmToken()))
            _ = try await server.startApproval(client, user: "cat")
            try await eventually("the first message arrived") { fcm.messages().count == 1 }
            fcm.revokeAccessTokens()
            _ = try await server.startApproval(client, user: "cat")
            try await eventually("the second message arrived") { fcm.messages().count == 2 }
            #expect(fcm.tokenRequestCount == 2)
        }
    }

    @Test("an access token is renewed shortly before it expires")
    func accessTokenIsRenewedBeforeExpiry() async throws {
        let clock = TestClock()
        try await Self.withFCM(clock: clock, accessTokenLifetime: 600) { server, fcm in
            let client = try await server.createClient(name: "Portal")
            _ = try await server.enrolledUser("dan", push: PushRegistration(provider: .fcm, token: Self.fcmToken()))
            _ = try await server.startApproval(client, user: "dan")
            try await eventually("message 1") { fcm.messages().count == 1 }
            clock.advance(by: 400)
            _ = try await server.startApproval(client, user: "dan")
            try await eventually("message 2") { fcm.messages().count == 2 }
            #expect(fcm.tokenRequestCount == 1)
            clock.advance(by: 120)
            _ = try await server.startApproval(client, user: "dan")
            try await eventually("message 3") { fcm.messages().count == 3 }
            #expect(fcm.tokenRequestCount == 2, "less than two minutes were left")
        }
    }

    @Test("QUOTA_EXCEEDED and UNAVAILABLE are retried with backoff",
          arguments: [(429, "RESOURCE_EXHAUSTED", "QUOTA_EXCEEDED"), (503, "UNAVAILABLE", "UNAVAILABLE")])
    func passingFailuresAreRetried(httpStatus: Int, status: String, code: String) async throws {
        let clock = TestClock()
        let refused = Mutex(false)
        try await Self.withFCM(clock: clock, respond: { _ in
            refused.withLock { done in
                defer { done = true }
                return done ? nil : .reject(httpStatus: httpStatus, status: status, errorCode: code, message: "try later")
            }
        }) { server, fcm in
            let client = try await server.createClient(name: "Portal")
            let eve = try await server.enrolledUser("eve", push: PushRegistration(provider: .fcm, token: Self.fcmToken()))
            _ = try await server.startApproval(client, user: "eve")
            let requestID = try await server.newestRequest(of: eve)
            try await eventually("the message waits for its retry") {
                try await server.notificationStatuses(requestID, device: eve.enrollment.deviceID) == ["queued"]
            }
            clock.advance(by: 2)
            try await eventually("the retry was sent") {
                try await server.notificationStatuses(requestID, device: eve.enrollment.deviceID) == ["sent"]
            }
            #expect(fcm.messages().count == 2)
        }
    }
}

/// The claims of a JWT, read without checking its signature (the emulator checked it).
struct CompactJWSHeaderless {
    let claims: JSONValue

    init(_ jwt: String) throws {
        let parts = jwt.split(separator: ".")
        #expect(parts.count == 3)
        claims = try JSONValue(parsing: try #require(Data(base64URLEncoded: parts[1])))
    }
}
