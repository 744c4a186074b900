import Crypto
import CountersignCore
import Foundation
import Logging
import Synchronization
import Testing
@testable import CountersignServer

/// The relying party's side of the approval loop (`ApprovalService.start`) and a device's inbox
/// on a store held in memory: no server, no database. The service reads and writes only what
/// `ApprovalStore` declares, so its rules — who may be asked, what is sealed to whom, which
/// devices are pushed, the user's requests per minute — are tested here alone; the end-to-end
/// suites run the same loop against a real server and both engines.
@Suite("Approval requests on an in-memory store")
struct ApprovalFlowStoreTests {
    /// `ApprovalStore` in memory: a request is stored with its deliveries and pushes, or none of
    /// them, and the user's requests of the window are counted as the database counts them.
    final class MemoryStore: ApprovalStore {
        struct State {
            var devices: [Device] = []
            var requests: [ApprovalTransaction] = []
            var deliveries: [ApprovalDelivery] = []
            var pushes: [PushOutboxEntry] = []
        }

        let state = Mutex(State())

        func groupIDs(userID: String) async throws -> Set<String> { [] }

        func devices(userID: String, limit: Int) async throws -> [Device] {
            state.withLock { Array($0.devices.filter { $0.userID == userID && $0.status == .active }.prefix(limit)) }
        }

        // The risk rules' questions, answered from the requests held.
        func approvedFrom(network: String, userID: String, since date: Date) async throws -> Bool {
            state.withLock { state in
                state.requests.contains {
                    $0.userID == userID && $0.requestNetwork == network && $0.status == .approved && $0.createdAt >= date
                }
            }
        }

        func approvedFrom(agent: String, userID: String, since date: Date) async throws -> Bool {
            state.withLock { state in
                state.requests.contains {
                    $0.userID == userID && $0.requestAgent == agent && $0.status == .approved && $0.createdAt >= date
                }
            }
        }

        func lastDeviceActivity(userID: String) async throws -> Date? {
            state.withLock { $0.devices.filter { $0.userID == userID && $0.status == .active }.map { $0.lastSeenAt ?? $0.createdAt }.max() }
        }

        func denials(userID: String, since date: Date) async throws -> Int {
            state.withLock { $0.requests.filter { $0.userID == userID && $0.status == .denied && $0.createdAt >= date }.count }
        }

        func requests(userID: String, since date: Date) async throws -> Int {
            state.withLock { $0.requests.filter { $0.userID == userID && $0.createdAt >= date }.count }
        }

        func record(_ audit: [AuditEvent]) async throws {}

        func start(_ transaction: ApprovalTransaction, deliveries: [ApprovalDelivery], pushes: [PushOutboxEntry],
                   audit: [AuditEvent], userID: String, limit: UserRequestLimit, at date: Date) async throws
            -> ApprovalAdmission {
            state.withLock { state in
                let window = state.requests.filter {
                    $0.userID == userID && $0.countsForUser && $0.createdAt > limit.windowStart(at: date)
                }
                let admission = limit.admission(recent: window.count, oldest: window.map(\.createdAt).min(), at: date)
                guard case .admitted = admission else { return admission }
                state.requests.append(transaction)
                state.deliveries += deliveries
                state.pushes += pushes
                return admission
            }
        }

        func inbox(deviceID: String, at date: Date, limit: Int) async throws -> [PendingRequestEnvelope] {
            state.withLock { state in
                let ids = Set(state.deliveries.filter { $0.deviceID == deviceID }.map(\.transactionID))
                return state.requests
                    .filter { ids.contains($0.id) && $0.status == .pending && !$0.isExpired(at: date) }
                    .sorted { $0.createdAt > $1.createdAt }
                    .prefix(limit)
                    .compactMap { request in
                        state.deliveries.first { $0.deviceID == deviceID && $0.transactionID == request.id }.map {
                            PendingRequestEnvelope(id: request.id, createdAt: request.createdAt, expiresAt: request.expiresAt,
                                                   details: $0.sealed)
                        }
                    }
            }
        }

        func delivery(requestID: String, deviceID: String) async throws -> AnswerableDelivery? {
            state.withLock { state in
                guard let request = state.requests.first(where: { $0.id == requestID }),
                      let delivery = state.deliveries.first(where: { $0.transactionID == requestID && $0.deviceID == deviceID })
                else { return nil }
                return AnswerableDelivery(
                    delivery: delivery, transaction: request,
                    deviceIDs: state.deliveries.filter { $0.transactionID == requestID }.map(\.deviceID))
            }
        }

        func request(id: String) async throws -> ApprovalTransaction? {
            state.withLock { $0.requests.first { $0.id == id } }
        }

        func decide(_ decision: ApprovalDecision) async throws -> RecordedDecision? {
            Issue.record("no test here decides")
            return nil
        }

        func sweep(undecidedBefore: Date, decidedBefore: Date, windowsBefore: Date) async throws -> Int { 0 }
    }

    /// `AnswerCheckStore` for the service's answer check, which nothing here reaches.
    struct NoAnswers: AnswerCheckStore, WebhookTargets {
        func user(id: String, tenantID: String) async throws -> User? { nil }
        func allowPINFallback(requestID: String, verification: TransactionDetails.Verification) async throws {}
        func target(tenantID: String, purpose: WebhookPurpose) async throws -> WebhookTarget? { nil }
    }

    let start = MemoryFixtures.start
    let tenant = MemoryFixtures.tenant
    let client = MemoryFixtures.client()
    let user = MemoryFixtures.user()

    /// A device of `user` with keys of its own; pushed when it has a valid token.
    func device(_ id: String, userID: String = "usr_one", push: Bool = true, tokenValid: Bool = true,
                status: Device.Status = .active) -> (Device, P256.KeyAgreement.PrivateKey) {
        let sealing = P256.KeyAgreement.PrivateKey()
        let device = Device(
            id: id, tenantID: tenant.id, userID: userID, name: id, platform: .ios,
            signingKey: ECPublicJWK(P256.Signing.PrivateKey().publicKey), encryptionKey: ECPublicJWK(sealing.publicKey),
            push: push ? PushRegistration(provider: .apns, token: "token-\(id)") : nil, pushTokenValid: tokenValid,
            status: status, createdAt: start, updatedAt: start, lastSeenAt: nil, deletedAt: nil)
        return (device, sealing)
    }

    func service(_ store: MemoryStore, clock: TestClock) -> ApprovalService {
        let events = ApprovalEvents()
        let logger = Logger(label: "test")
        return ApprovalService(
            store: store,
            signals: ApprovalSignals(pushWakeup: PushWakeup(), clientNotificationWakeup: PushWakeup(), notifiers: [], events: events),
            answers: AnswerCheck(
                store: NoAnswers(), pins: PINVerifier(store: FactorFlowStoreTests.MemoryStore(), now: clock.function),
                verifier: CustomVerifier(targets: NoAnswers(), client: WebhookHTTPClient(), timeout: .seconds(1),
                                         logger: logger, now: clock.function)),
            sealer: SecretSealer(masterKey: MasterKey.generate()), metrics: ServerMetrics(), logger: logger, now: clock.function)
    }

    private func request(for user: User? = nil, binding: String? = nil) throws -> NewApproval {
        NewApproval(
            client: client, user: user ?? self.user, scope: try Scope("openid", allowedFor: client), acrValues: nil,
            bindingMessage: try binding.map(BindingMessage.init),
            context: .requestedFrom(ipAddress: "192.0.2.1", userAgent: "Bank/1.0"), lifetime: 120,
            required: RequiredClass(requested: nil, client: client, policy: tenant.policy),
            clientNotificationToken: nil, authorizationDetails: nil)
    }

    private func tenant(perMinute: Int) -> Tenant {
        var tenant = tenant
        tenant.policy.userRequestsPerMinute = perMinute
        return tenant
    }

    @Test("a request is stored sealed to every active device, with one push per device whose token is valid")
    func sealedToEveryDevice() async throws {
        let store = MemoryStore()
        let (one, oneKey) = device("dev_one")
        let (two, _) = device("dev_two", tokenValid: false)
        let (three, _) = device("dev_three", push: false)
        let (removed, _) = device("dev_removed", status: .deleted)
        store.state.withLock { $0.devices = [one, two, three, removed] }
        let clock = TestClock(start)
        let started = try await service(store, clock: clock).start(try request(binding: "Pay 5 EUR"), tenant: tenant)

        let state = store.state.withLock { $0 }
        #expect(state.requests.map(\.id) == [started.transaction.id])
        #expect(Set(state.deliveries.map(\.deviceID)) == ["dev_one", "dev_two", "dev_three"])
        #expect(state.pushes.map(\.deviceID) == ["dev_one"], "no push to a device whose token is invalid or absent")
        let stored = try #require(state.requests.first)
        #expect(stored.authReqIDHash == ApprovalService.hash(authReqID: started.authReqID))
        #expect(stored.expiresAt.timeIntervalSince(stored.createdAt) == 120 && stored.status == .pending)
        #expect(stored.bindingMessage == "Pay 5 EUR" && stored.pollInterval == NewApproval.pollInterval)

        // What the device opens is the details the request stored, for this device and request.
        let sealed = try #require(state.deliveries.first { $0.deviceID == "dev_one" }).sealed
        let (encapsulated, ciphertext) = try sealed.parts()
        var recipient = try HPKE.Recipient(
            privateKey: oneKey, ciphersuite: .P256_SHA256_AES_GCM_256, info: SealedDetails.info(deviceID: "dev_one"),
            encapsulatedKey: encapsulated)
        let opened = try recipient.open(ciphertext, authenticating: SealedDetails.additionalData(requestID: stored.id))
        #expect(String(decoding: opened, as: UTF8.self) == stored.details)
        let details = try JSONDecoder().decode(TransactionDetails.self, from: opened)
        #expect(details.user.name == "alice" && details.client.name == "Bank" && details.bindingMessage == "Pay 5 EUR")
        #expect(details.context.ipAddress == "192.0.2.1" && details.context.userAgent == "Bank/1.0")
    }

    @Test("a disabled user, a user without an active device and a user who reported a request are refused, and nothing is stored")
    func refusals() async throws {
        let store = MemoryStore()
        let clock = TestClock(start)
        let service = service(store, clock: clock)
        await #expect(throws: ApprovalStartError.noActiveDevice) { try await service.start(try request(), tenant: tenant) }
        store.state.withLock { $0.devices = [device("dev_one").0] }
        var disabled = user
        disabled.status = .disabled
        await #expect(throws: ApprovalStartError.userDisabled) { try await service.start(try request(for: disabled), tenant: tenant) }
        var reported = user
        reported.requestsSuppressedUntil = start.addingTimeInterval(90)
        await #expect(throws: ApprovalStartError.suppressed(retryAfter: 90)) {
            try await service.start(try request(for: reported), tenant: tenant)
        }
        #expect(store.state.withLock { $0.requests.isEmpty && $0.deliveries.isEmpty && $0.pushes.isEmpty })
    }

    @Test("the user's requests per minute: the one over the limit is refused until the oldest leaves the minute")
    func requestsPerMinute() async throws {
        let store = MemoryStore()
        store.state.withLock { $0.devices = [device("dev_one").0] }
        let clock = TestClock(start)
        let service = service(store, clock: clock)
        let limited = tenant(perMinute: 2)
        _ = try await service.start(try request(), tenant: limited)
        clock.advance(by: 20)
        _ = try await service.start(try request(), tenant: limited)
        clock.advance(by: 10)
        await #expect(throws: ApprovalStartError.rateLimited(perMinute: 2, retryAfter: 30)) {
            try await service.start(try request(), tenant: limited)
        }
        #expect(store.state.withLock { $0.requests.count == 2 && $0.deliveries.count == 2 && $0.pushes.count == 2 })
        // A sign-in from a browser the user never used is limited on its own, not here.
        var uncounted = try request()
        uncounted.countsForUser = false
        _ = try await service.start(uncounted, tenant: limited)
        clock.advance(by: 30)
        _ = try await service.start(try request(), tenant: limited)
        #expect(store.state.withLock { $0.requests.count } == 4)
    }

    @Test("a device's inbox: its own undecided, unexpired requests, newest first")
    func inbox() async throws {
        let store = MemoryStore()
        let (one, _) = device("dev_one")
        store.state.withLock { $0.devices = [one] }
        let clock = TestClock(start)
        let service = service(store, clock: clock)
        let first = try await service.start(try request(), tenant: tenant)
        clock.advance(by: 30)
        let second = try await service.start(try request(), tenant: tenant)
        var other = one
        other.id = "dev_other"
        #expect(try await service.inbox(for: one).map(\.id) == [second.transaction.id, first.transaction.id])
        #expect(try await service.inbox(for: other).isEmpty)
        #expect(try await service.request(first.transaction.id, for: one).id == first.transaction.id)
        await #expect(throws: ApprovalError.unknownRequest) { try await service.request(first.transaction.id, for: other) }
        clock.advance(by: 100)
        #expect(try await service.inbox(for: one).map(\.id) == [second.transaction.id], "the first expired")
        await #expect(throws: ApprovalError.expired) { try await service.request(first.transaction.id, for: one) }
    }
}
