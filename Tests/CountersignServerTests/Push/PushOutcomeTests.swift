import CountersignCore
import Crypto
import Foundation
import NIOCore
import NIOHTTP1
import Synchronization
import Testing
@testable import CountersignServer

@Suite("What the server makes of each APNs and FCM answer")
struct PushOutcomeTests {
    static func apns(_ status: Int, _ body: String, headers: HTTPHeaders = [:]) -> PushOutcome {
        APNsSender.outcome(status: status, body: ByteBuffer(string: body), retryAfter: headers.first(name: "retry-after"))
    }

    static func fcm(_ status: Int, _ body: String, headers: HTTPHeaders = [:]) -> PushOutcome {
        FCMSender.outcome(status: status, body: ByteBuffer(string: body), headers: headers)
    }

    static func googleError(_ code: Int, _ status: String, _ fcmCode: String?, message: String = "m") -> String {
        let details = fcmCode.map {
            #","details":[{"@type":"type.googleapis.com/google.firebase.fcm.v1.FcmError","errorCode":"\#($0)"}]"#
        } ?? ""
        return #"{"error":{"code":\#(code),"message":"\#(message)","status":"\#(status)"\#(details)}}"#
    }

    @Test func apnsAnswers() {
        #expect(Self.apns(200, "") == .delivered(providerMessageID: nil))
        #expect(Self.apns(410, #"{"reason":"Unregistered","timestamp":1800000000000}"#)
            == .invalidToken(reason: "Unregistered", since: Date(timeIntervalSince1970: 1_800_000_000)))
        #expect(Self.apns(410, #"{"reason":"ExpiredToken"}"#) == .invalidToken(reason: "ExpiredToken", since: nil))
        #expect(Self.apns(400, #"{"reason":"BadDeviceToken"}"#) == .invalidToken(reason: "BadDeviceToken", since: nil))
        #expect(Self.apns(403, #"{"reason":"ExpiredProviderToken"}"#) == .retry(reason: "ExpiredProviderToken", after: nil))
        #expect(Self.apns(429, #"{"reason":"TooManyRequests"}"#, headers: ["retry-after": "30"])
            == .retry(reason: "TooManyRequests", after: 30))
        #expect(Self.apns(503, #"{"reason":"ServiceUnavailable"}"#) == .retry(reason: "ServiceUnavailable", after: nil))
        #expect(Self.apns(500, "") == .retry(reason: "HTTP 500", after: nil))
        for reason in ["BadTopic", "DeviceTokenNotForTopic", "PayloadTooLarge", "MissingTopic"] {
            #expect(Self.apns(reason == "PayloadTooLarge" ? 413 : 400, #"{"reason":"\#(reason)"}"#) == .failed(reason: reason))
        }
        #expect(Self.apns(403, #"{"reason":"InvalidProviderToken"}"#) == .failed(reason: "InvalidProviderToken"))
    }

    @Test func fcmAnswers() {
        #expect(Self.fcm(200, #"{"name":"projects/p/messages/17"}"#) == .delivered(providerMessageID: "projects/p/messages/17"))
        #expect(Self.fcm(404, Self.googleError(404, "NOT_FOUND", "UNREGISTERED")) == .invalidToken(reason: "UNREGISTERED", since: nil))
        #expect(Self.fcm(403, Self.googleError(403, "PERMISSION_DENIED", "SENDER_ID_MISMATCH"))
            == .invalidToken(reason: "SENDER_ID_MISMATCH", since: nil))
        #expect(Self.fcm(400, Self.googleError(400, "INVALID_ARGUMENT", "INVALID_ARGUMENT",
                                               message: "The registration token is not a valid FCM registration token"))
            == .invalidToken(reason: "INVALID_ARGUMENT", since: nil))
        #expect(Self.fcm(400, Self.googleError(400, "INVALID_ARGUMENT", "INVALID_ARGUMENT", message: "bad ttl"))
            == .failed(reason: "INVALID_ARGUMENT: bad ttl"))
        #expect(Self.fcm(401, Self.googleError(401, "UNAUTHENTICATED", nil)) == .retry(reason: "UNAUTHENTICATED", after: nil))
        #expect(Self.fcm(401, Self.googleError(401, "UNAUTHENTICATED", "THIRD_PARTY_AUTH_ERROR", message: "no APNs key"))
            == .failed(reason: "THIRD_PARTY_AUTH_ERROR: no APNs key"))
        #expect(Self.fcm(429, Self.googleError(429, "RESOURCE_EXHAUSTED", "QUOTA_EXCEEDED"), headers: ["retry-after": "12"])
            == .retry(reason: "QUOTA_EXCEEDED", after: 12))
        #expect(Self.fcm(503, Self.googleError(503, "UNAVAILABLE", "UNAVAILABLE")) == .retry(reason: "UNAVAILABLE", after: nil))
        #expect(Self.fcm(500, Self.googleError(500, "INTERNAL", "INTERNAL")) == .retry(reason: "INTERNAL", after: nil))
    }

    @Test func retriesBackOffAndHonourRetryAfter() {
        let configuration = PushConfiguration()
        #expect(configuration.retryDelay(afterAttempts: 1, providerSaid: nil) == 2)
        #expect(configuration.retryDelay(afterAttempts: 2, providerSaid: nil) == 4)
        #expect(configuration.retryDelay(afterAttempts: 5, providerSaid: nil) == 32)
        #expect(configuration.retryDelay(afterAttempts: 7, providerSaid: nil) == 60)
        #expect(configuration.retryDelay(afterAttempts: 1, providerSaid: 30) == 30)
        #expect(configuration.retryDelay(afterAttempts: 6, providerSaid: 5) == 60)
    }

    @Test func providerTokenIsReusedRenewedAndNeverRenewedTooSoon() async throws {
        let key = try APNsSigningKey(keyID: "ABC123DEFG", teamID: "TEAM123456", pem: P256.Signing.PrivateKey().pemRepresentation)
        let tokens = APNsProviderToken(key: key, store: MemoryProviderTokenStore())
        let start = Date(timeIntervalSince1970: 1_800_000_000)
        let first = try await tokens.token(at: start)
        #expect(try await tokens.token(at: start.addingTimeInterval(49 * 60)) == first)
        // APNs calls a 10-minute-old token expired: too young to replace.
        #expect(try await tokens.renew(after: first, at: start.addingTimeInterval(10 * 60)) == false)
        #expect(tokens.timeUntilReplaceable(at: start.addingTimeInterval(10 * 60)) == 10 * 60)
        #expect(try await tokens.token(at: start.addingTimeInterval(10 * 60)) == first)
        #expect(try await tokens.renew(after: first, at: start.addingTimeInterval(21 * 60)))
        let second = try await tokens.token(at: start.addingTimeInterval(21 * 60))
        #expect(second != first)
        // Another request already renewed it: nothing more to do.
        #expect(try await tokens.renew(after: first, at: start.addingTimeInterval(22 * 60)))
        #expect(try await tokens.token(at: start.addingTimeInterval(22 * 60)) == second)
        #expect(try await tokens.token(at: start.addingTimeInterval(72 * 60)) != second)

        let jws = try CompactJWS(parsing: second)
        #expect(jws.keyID == "ABC123DEFG")
        #expect(jws.header["alg"]?.stringValue == "ES256")
        #expect(jws.isValid(for: key.key.publicKey))
        #expect(try jws.payloadJSON() == .object([
            "iss": .string("TEAM123456"), "iat": .integer(Int64(start.addingTimeInterval(21 * 60).timeIntervalSince1970))]))
    }

    @Test func nodesAndRestartsShareOneProviderTokenPerKey() async throws {
        let pem = P256.Signing.PrivateKey().pemRepresentation
        let key = try APNsSigningKey(keyID: "ABC123DEFG", teamID: "TEAM123456", pem: pem)
        let store = MemoryProviderTokenStore()
        let start = Date(timeIntervalSince1970: 1_800_000_000)
        let nodeA = APNsProviderToken(key: key, store: store)
        let first = try await nodeA.token(at: start)
        // A second node, a restart, and the same key set again all send with that token.
        let nodeB = APNsProviderToken(key: key, store: store)
        #expect(try await nodeB.token(at: start.addingTimeInterval(5 * 60)) == first)
        // A node whose clock is two minutes behind still takes the token as fresh.
        let nodeBehind = APNsProviderToken(key: key, store: store)
        #expect(try await nodeBehind.token(at: start.addingTimeInterval(-120)) == first)
        let sameKeyAgain = APNsProviderToken(key: try APNsSigningKey(keyID: "ABC123DEFG", teamID: "TEAM123456", pem: pem), store: store)
        #expect(try await sameKeyAgain.token(at: start.addingTimeInterval(10 * 60)) == first)
        // Another key under the same ids is another key: it gets a token of its own.
        let impostor = APNsProviderToken(
            key: try APNsSigningKey(keyID: "ABC123DEFG", teamID: "TEAM123456", pem: P256.Signing.PrivateKey().pemRepresentation),
            store: store)
        #expect(try await impostor.token(at: start.addingTimeInterval(10 * 60)) != first)
        // Renewal is due for both nodes at once: one renews, and both then send with its token.
        let due = start.addingTimeInterval(51 * 60)
        async let a = nodeA.token(at: due)
        async let b = nodeB.token(at: due)
        let (renewedA, renewedB) = try await (a, b)
        #expect(renewedA == renewedB)
        #expect(renewedA != first)
        #expect(store.replacements == 3, "the first token, the impostor's, and one renewal")
    }

    @Test func payloadsStayUnderAPNsLimitAndCarryNoDetails() throws {
        let date = Date(timeIntervalSince1970: 1_800_000_000)
        let entry = PushOutboxEntry.queued(.request, transactionID: "txn_01HZX3ABCDEF", tenantID: "ten_1",
                                           deviceID: "dev_0123456789abcdef", provider: .apns,
                                           expiresAt: date.addingTimeInterval(300), at: date)
        let body = PushContent.apnsBody(for: entry)
        #expect(body.count < 1024)
        // Made from a prefix kept per kind: byte for byte the canonical JSON of the whole body.
        for kind in [PushOutboxEntry.Kind.request, .withdraw] {
            var sample = entry
            sample.kind = kind
            var members = PushContent.payload(for: sample).apnsMember
            members["aps"] = PushContent.aps(kind)
            #expect(PushContent.apnsBody(for: sample) == JSONValue.object(members).canonicalData)
        }
        let json = try JSONValue(parsing: body)
        #expect(json["countersign"]?["request_id"]?.stringValue == "txn_01HZX3ABCDEF")
        #expect(json["countersign"]?["exp"]?.integerValue == 1_800_000_300)
        var withdraw = entry
        withdraw.kind = .withdraw
        #expect(PushContent.apnsPushType(for: withdraw) == ("background", "5"))
        let fcm = try JSONValue(parsing: PushContent.fcmBody(for: entry, token: "t", at: date.addingTimeInterval(60)))
        #expect(fcm["message"]?["android"]?["ttl"]?.stringValue == "240s")
        #expect(fcm["message"]?["android"]?["priority"]?.stringValue == "HIGH")
    }

    @Test("a notice's push is an alert in the notice category that says what was added, by name, and carries the notice's id")
    func noticePayloads() throws {
        let date = Date(timeIntervalSince1970: 1_800_000_000)
        var entry = PushOutboxEntry.notice(
            "ntc_01HZX3ABCDEF", tenantID: "ten_1", deviceID: "dev_0123456789abcdef", provider: .apns,
            expiresAt: date.addingTimeInterval(7 * 86_400), at: date)
        // The longest name a device may have, in characters of four UTF-8 bytes.
        let name = String(repeating: "😀", count: DeviceName.maximumLength)
        let notice = SecurityNotice(
            id: "ntc_01HZX3ABCDEF", kind: .deviceAdded, subjectID: "dev_new", subjectName: name, ipAddress: nil,
            createdAt: date, expiresAt: date.addingTimeInterval(7 * 86_400), reportedAt: nil, reportedBy: nil,
            tenantID: "ten_1", userID: "usr_1")
        entry.alert = PushContent.alert(for: notice)
        let body = PushContent.apnsBody(for: entry)
        #expect(body.count < 4096)
        let json = try JSONValue(parsing: body)
        #expect(json["aps"]?["category"]?.stringValue == "COUNTERSIGN_NOTICE")
        #expect(json["aps"]?["alert"]?["body"]?.stringValue == "A new device, “\(name)”, was added to your account. Not you? Answer “Not me”.")
        #expect(json["countersign"]?["notice_id"]?.stringValue == "ntc_01HZX3ABCDEF")
        #expect(json["countersign"]?["event"]?.stringValue == "notice")
        #expect(json["countersign"]?["request_id"] == nil)
        #expect(PushContent.apnsPushType(for: entry) == ("alert", "10"))
        let member = try #require(json["countersign"])
        let payload = try #require(PushPayload(jsonData: member.canonicalData))
        #expect(payload == PushPayload(deviceID: "dev_0123456789abcdef", noticeID: "ntc_01HZX3ABCDEF", expiresAt: 1_800_604_800))
        #expect(PushPayload(jsonData: Data(#"{"v":1,"event":"notice","device_id":"dev_1","exp":1}"#.utf8)) == nil,
                "a notice push without its notice is not understood")

        let fcm = try JSONValue(parsing: PushContent.fcmBody(for: entry, token: "t", at: date))
        let data = try #require(fcm["message"]?["data"])
        #expect(data["title"]?.stringValue == "New device on your account")
        #expect(data["countersign"]?.stringValue == member.canonicalString)
        #expect(fcm["message"]?["android"]?["collapse_key"]?.stringValue == "ntc_01HZX3ABCDEF")
        #expect(fcm["message"]?["android"]?["ttl"]?.stringValue == "604800s")

        let kinds: [(SecurityNotice.Kind, String?, String)] = [
            (.passkeyAdded, "YubiKey 5", "A new passkey, “YubiKey 5”, was added to your account."),
            (.passkeyAdded, nil, "A new passkey was added to your account."),
            (.recoveryCodeUsed, nil, "A recovery code was used to sign in to your account."),
            (.accessPassUsed, nil, "A temporary access pass was used to sign in to your account."),
        ]
        for (kind, name, sentence) in kinds {
            let notice = SecurityNotice(
                id: "ntc_1", kind: kind, subjectID: "x", subjectName: name, ipAddress: nil, createdAt: date, expiresAt: date,
                reportedAt: nil, reportedBy: nil, tenantID: "ten_1", userID: "usr_1")
            #expect(PushContent.alert(for: notice).body == sentence + " Not you? Answer “Not me”.")
        }
    }
}

/// Provider tokens in memory, with the same conditional replace as the database's store: for
/// the token's own rules, without a server.
final class MemoryProviderTokenStore: APNsProviderTokenStore {
    private let state = Mutex<(tokens: [String: StoredProviderToken], replacements: Int)>(([:], 0))

    var replacements: Int { state.withLock { $0.replacements } }

    func current(for fingerprint: String) async throws -> StoredProviderToken? {
        state.withLock { $0.tokens[fingerprint] }
    }

    func replace(_ replacing: StoredProviderToken?, with token: StoredProviderToken, for fingerprint: String) async throws -> Bool {
        state.withLock { state in
            guard state.tokens[fingerprint] == replacing else { return false }
            state.tokens[fingerprint] = token
            state.replacements += 1
            return true
        }
    }
}
