import CountersignCore
import Crypto
import Foundation
import Testing
@testable import CountersignKit
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Finding, opening and answering requests, against a server that answers from a table.
@Suite struct ApprovalTests {
    static let now = Date(timeIntervalSince1970: 1_800_000_030)
    static let server = "https://auth.example.com/t/acme"

    /// An enrollment stored in a temporary key store, with its keys.
    struct Device {
        let store: FileKeyStore
        let enrollment: Enrollment
        let keys: DeviceKeys

        func authenticator(_ server: FakeServer) -> CountersignAuthenticator {
            CountersignAuthenticator(keyStore: store, transport: server, now: { ApprovalTests.now })
        }
    }

    static let serverKey = P256.Signing.PrivateKey()

    static func device(in root: URL, server: String = server, deviceID: String = "dev_1") async throws -> Device {
        let store = FileKeyStore(root: root)
        let id = UUID().uuidString
        let keys = try await store.createKeys(for: id)
        let enrollment = Enrollment(
            id: id, server: URL(string: server)!, tenant: "acme", deviceID: deviceID,
            user: EnrolledUser(id: "usr_1", username: "ada", displayName: nil), deviceName: "Ada's terminal",
            platform: .linux, serverKey: ECPublicJWK(serverKey.publicKey), enrolledAt: now)
        try await store.save(enrollment)
        return Device(store: store, enrollment: enrollment, keys: keys)
    }

    static func details(requestID: String = "txn_1", userID: String = "usr_1") -> TransactionDetails {
        TransactionDetails(
            requestID: requestID, tenant: "acme", user: .init(id: userID, name: "ada"),
            client: .init(id: "cli_1", name: "Payroll"), bindingMessage: "W4SP-7Q", scope: ["openid"], acrValues: nil,
            context: .init(ipAddress: "203.0.113.7", userAgent: nil), requestedAt: 1_800_000_000,
            expiresAt: 1_800_000_120, challenge: "c2VydmVyLWNoYWxsZW5nZS0zMi1ieXRlcy1sb25nISE")
    }

    /// What the server sends for a request sealed to `device`.
    static func envelope(
        _ id: String = "txn_1", to device: Device, details: TransactionDetails? = nil, plaintext: Data? = nil,
        sealedFor deviceID: String? = nil, createdAt: Date = Date(timeIntervalSince1970: 1_800_000_000)
    ) throws -> PendingRequestEnvelope {
        let bytes = try plaintext ?? (details ?? Self.details(requestID: id)).canonicalData()
        let sealed = try SealedDetails.seal(
            bytes, to: device.keys.agreement.publicKey, deviceID: deviceID ?? device.enrollment.deviceID, requestID: id)
        return PendingRequestEnvelope(
            id: id, createdAt: createdAt, expiresAt: Date(timeIntervalSince1970: 1_800_000_120), details: sealed)
    }

    static func json(_ value: some Encodable) throws -> String {
        String(decoding: try Timestamps.encoder().encode(value), as: UTF8.self)
    }

    // MARK: Opening details

    @Test func detailsOpenWithTheEnrollmentKeyAndCarryTheDigestOfTheOpenedBytes() async throws {
        try await withTemporaryRoot { root in
            let device = try await Self.device(in: root)
            let request = ApprovalRequest(enrollmentID: device.enrollment.id, envelope: try Self.envelope(to: device))
            let details = try await device.authenticator(FakeServer { _ in .json(500, "{}") }).details(for: request)
            #expect(details.transaction == Self.details())
            #expect(details.digest == TransactionDetails.digest(of: try Self.details().canonicalData()))
            #expect(details.clientName == "Payroll")
            #expect(details.bindingMessage == "W4SP-7Q")
            #expect(details.ipAddress == "203.0.113.7")
        }
    }

    @Test(arguments: ["sealed for another device", "of another request", "for another user", "not canonical"])
    func detailsThatAreNotThisRequestsForThisEnrollmentAreRefused(_ defect: String) async throws {
        try await withTemporaryRoot { root in
            let device = try await Self.device(in: root)
            let envelope = switch defect {
            case "sealed for another device": try Self.envelope(to: device, sealedFor: "dev_2")
            case "of another request": try Self.envelope(to: device, details: Self.details(requestID: "txn_2"))
            case "for another user": try Self.envelope(to: device, details: Self.details(userID: "usr_2"))
            default: try Self.envelope(to: device, plaintext: Timestamps.encoder().encode(Self.details()) + Data("\n".utf8))
            }
            let request = ApprovalRequest(enrollmentID: device.enrollment.id, envelope: envelope)
            await #expect {
                try await device.authenticator(FakeServer { _ in .json(500, "{}") }).details(for: request)
            } throws: { error in
                guard case CountersignError.invalidRequestDetails = error else { return false }
                return true
            }
        }
    }

    // MARK: The inbox

    @Test func theInboxIsASignedGETOfTheRequestsURL() async throws {
        try await withTemporaryRoot { root in
            let device = try await Self.device(in: root)
            let server = FakeServer { _ in .json(200, #"{"requests":[]}"#) }
            #expect(try await device.authenticator(server).pendingRequests(device.enrollment.id).isEmpty)

            let request = try #require(server.requests.first)
            #expect(request.httpMethod == "GET")
            #expect(request.url?.absoluteString == Self.server + "/device/v1/requests")
            let signature = try DeviceRequestSignature.parse(
                authorizationHeader: request.value(forHTTPHeaderField: "Authorization"))
            #expect(signature.deviceID == "dev_1")
            #expect(throws: Never.self) {
                try signature.verify(key: device.keys.signer.publicKey, method: "GET", url: Self.server + "/device/v1/requests",
                                     body: Data(), now: Self.now, window: 60)
            }
        }
    }

    @Test func everyEnrollmentsRequestsAreListedNewestFirst() async throws {
        try await withTemporaryRoot { root in
            let first = try await Self.device(in: root, server: "https://one.example.com", deviceID: "dev_1")
            let second = try await Self.device(in: root, server: "https://two.example.com", deviceID: "dev_2")
            let older = try Self.envelope("txn_old", to: first, createdAt: Date(timeIntervalSince1970: 1_800_000_000))
            let newer = try Self.envelope("txn_new", to: second, createdAt: Date(timeIntervalSince1970: 1_800_000_010))
            let answers = [
                "one.example.com": try Self.json(PendingRequestList(requests: [older])),
                "two.example.com": try Self.json(PendingRequestList(requests: [newer])),
            ]
            let server = FakeServer { request in .json(200, answers[request.url!.host!]!) }

            let inbox = try await first.authenticator(server).pendingRequests()
            #expect(inbox.map(\.id) == ["txn_new", "txn_old"])
            #expect(inbox.map(\.enrollmentID) == [second.enrollment.id, first.enrollment.id])
        }
    }

    @Test func anEnrollmentTheServerHasDeregisteredIsRemovedAndLeftOutOfTheFullInbox() async throws {
        try await withTemporaryRoot { root in
            let kept = try await Self.device(in: root, server: "https://one.example.com", deviceID: "dev_1")
            let removed = try await Self.device(in: root, server: "https://two.example.com", deviceID: "dev_2")
            let request = try Self.envelope(to: kept)
            let server = FakeServer { sent in
                guard sent.url?.host == "two.example.com" else {
                    return .json(200, try! Self.json(PendingRequestList(requests: [request])))
                }
                let signature = try! DeviceRequestSignature.parse(
                    authorizationHeader: sent.value(forHTTPHeaderField: "Authorization"))
                let notice = try! DeregistrationNotice(
                    deviceID: "dev_2", status: .deleted, requestNonce: signature.nonce, issuedAt: 1_800_000_030
                ).sign(with: Self.serverKey)
                return .json(401, #"{"error":"device_deregistered","deregistration":"\#(notice)"}"#)
            }
            let authenticator = kept.authenticator(server)

            #expect(try await authenticator.pendingRequests().map(\.id) == ["txn_1"])
            #expect(try await authenticator.enrollments().map(\.id) == [kept.enrollment.id])
            await #expect(throws: CountersignError.notEnrolled) { try await authenticator.pendingRequests(removed.enrollment.id) }
        }
    }

    // MARK: Pushes

    /// An FCM-style notification: the payload as a JSON string beside the alert.
    static func push(
        device: String = "dev_1", request: String = "txn_1", expiresAt: Int64 = 1_800_000_120
    ) -> [AnyHashable: Any] {
        let payload = PushPayload(deviceID: device, requestID: request, expiresAt: expiresAt)
        return ["aps": ["alert": "Approve?"], PushPayload.key: payload.json.canonicalString]
    }

    /// As a notification delegate calls it: on the main actor, with a `userInfo` it goes on using.
    @MainActor static func requestFromANotification(_ authenticator: CountersignAuthenticator) async throws -> ApprovalRequest? {
        let userInfo = push()
        let request = try await authenticator.request(fromPushPayload: userInfo)
        #expect(userInfo["aps"] != nil)
        return request
    }

    @Test func aPushForThisDeviceFetchesTheRequestItNames() async throws {
        try await withTemporaryRoot { root in
            let device = try await Self.device(in: root)
            let envelope = try Self.envelope(to: device)
            let server = FakeServer { _ in .json(200, try! Self.json(envelope)) }

            let request = try await Self.requestFromANotification(device.authenticator(server))
            #expect(request == ApprovalRequest(enrollmentID: device.enrollment.id, envelope: envelope))
            #expect(server.requests.map(\.url?.absoluteString) == [Self.server + "/device/v1/requests/txn_1"])
        }
    }

    @Test(arguments: ["another app's", "another device's"])
    func aPushThatIsNotForThisDeviceIsNilWithoutAsking(_ kind: String) async throws {
        try await withTemporaryRoot { root in
            let device = try await Self.device(in: root)
            let server = FakeServer { _ in .json(500, "{}") }
            let userInfo = kind == "another app's" ? ["aps": ["alert": "Hello"]] : Self.push(device: "dev_9")
            #expect(try await device.authenticator(server).request(fromPushPayload: userInfo) == nil)
            #expect(server.requests.isEmpty)
        }
    }

    @Test func anExpiredPushIsRefusedWithoutAsking() async throws {
        try await withTemporaryRoot { root in
            let device = try await Self.device(in: root)
            let server = FakeServer { _ in .json(500, "{}") }
            await #expect(throws: CountersignError.expired) {
                try await device.authenticator(server).request(fromPushPayload: Self.push(expiresAt: 1_800_000_030))
            }
            #expect(server.requests.isEmpty)
        }
    }

    // MARK: Answering

    @Test(arguments: ApprovalResponse.Decision.allCases)
    func theAnswerSignsTheDecisionOverTheDigestAndChallengeOfTheDetailsShown(
        _ decision: ApprovalResponse.Decision
    ) async throws {
        try await withTemporaryRoot { root in
            let device = try await Self.device(in: root)
            let status = decision == .approve ? "approved" : "denied"
            let server = FakeServer { _ in
                .json(200, #"{"request_id":"txn_1","status":"\#(status)","decided_at":"2027-01-15T08:00:30.000Z"}"#)
            }
            let authenticator = device.authenticator(server)
            let details = try await authenticator.details(
                for: ApprovalRequest(enrollmentID: device.enrollment.id, envelope: try Self.envelope(to: device)))

            let acknowledgement = decision == .approve
                ? try await authenticator.approve(details) : try await authenticator.deny(details)
            #expect(acknowledgement.status == status)

            let post = try #require(server.requests.first)
            #expect(post.httpMethod == "POST")
            #expect(post.url?.absoluteString == Self.server + "/device/v1/requests/txn_1/response")
            let submission = try JSONDecoder().decode(ApprovalSubmission.self, from: try #require(post.httpBody))
            let (response, _) = try ApprovalResponse.verified(
                submission.response, key: device.keys.signer.publicKey, deviceID: "dev_1")
            #expect(response == ApprovalResponse(
                requestID: "txn_1", decision: decision, detailsDigest: details.digest,
                challenge: Self.details().challenge, factors: ["confirm"], issuedAt: 1_800_000_030))
        }
    }

    @Test(arguments: [
        (409, "already_decided", CountersignError.alreadyAnswered),
        (410, "approval_expired", .expired),
        (400, "details_mismatch", .server(status: 400, code: "details_mismatch", description: "why")),
        (404, "unknown_request", .requestNotFound),
    ])
    func aRefusedAnswerIsThrownAsWhatItMeans(_ status: Int, _ code: String, _ expected: CountersignError) async throws {
        try await withTemporaryRoot { root in
            let device = try await Self.device(in: root)
            let server = FakeServer { _ in .json(status, #"{"error":"\#(code)","error_description":"why"}"#) }
            let authenticator = device.authenticator(server)
            let details = try await authenticator.details(
                for: ApprovalRequest(enrollmentID: device.enrollment.id, envelope: try Self.envelope(to: device)))
            await #expect(throws: expected) { try await authenticator.approve(details) }
        }
    }

    @Test(arguments: [(409, "already_decided", CountersignError.alreadyAnswered), (410, "approval_expired", .expired)])
    func aPushedRequestThatIsNoLongerOpenIsThrownAsWhatItMeans(
        _ status: Int, _ code: String, _ expected: CountersignError
    ) async throws {
        try await withTemporaryRoot { root in
            let device = try await Self.device(in: root)
            let server = FakeServer { _ in .json(status, #"{"error":"\#(code)"}"#) }
            await #expect(throws: expected) {
                try await device.authenticator(server).request(fromPushPayload: Self.push())
            }
        }
    }

    @Test(arguments: [
        (409, "already_decided", CountersignError.alreadyAnswered),
        (410, "approval_expired", .expired),
        (404, "unknown_request", .requestNotFound),
    ])
    func aRequestLookedUpByItsIDThatIsNoLongerOpenIsThrownAsWhatItMeans(
        _ status: Int, _ code: String, _ expected: CountersignError
    ) async throws {
        try await withTemporaryRoot { root in
            let device = try await Self.device(in: root)
            let server = FakeServer { request in
                #expect(request.url?.absoluteString == Self.server + "/device/v1/requests/txn_1")
                return .json(status, #"{"error":"\#(code)"}"#)
            }
            await #expect(throws: expected) {
                try await device.authenticator(server).request("txn_1", for: device.enrollment.id)
            }
        }
    }
}
