import CountersignCore
import Foundation
import Logging
import Synchronization
import Testing
@testable import CountersignServer

/// The CIBA grant at the token endpoint (`CIBAGrant`, with its poll-rate rule `PollingRate`) on a
/// store held in memory: no server and no database for the grant. The flow reads and writes only
/// what `CIBAGrantStore` declares; the tokens it mints are signed with keys kept in an in-memory
/// SQLite database, which is the token issuer's, not the grant's.
@Suite("CIBA grant on an in-memory store")
struct CIBAGrantFlowStoreTests {
    /// `CIBAGrantStore` in memory: requests by their `auth_req_id` hash, each poll recorded only
    /// if the previous one is still the one read (as the database's conditional update does),
    /// and one exchange per approval while its user is active.
    final class MemoryStore: CIBAGrantStore {
        struct State {
            var requests: [Data: ApprovalTransaction] = [:]
            var activeUsers: Set<String> = []
            var exchanges: [(requestID: String, clientID: String, tokens: IssuedTokens)] = []
            /// Polls that another poll overtook before they were recorded.
            var overtaken = 0
        }

        let state = Mutex(State())

        func request(authReqIDHash: Data) async throws -> ApprovalTransaction? {
            state.withLock { $0.requests[authReqIDHash] }
        }

        func recordPoll(requestID: String, previous: Date?, at date: Date, interval: Int) async throws -> Bool {
            state.withLock { state in
                guard let hash = state.requests.first(where: { $0.value.id == requestID })?.key else { return false }
                if state.overtaken > 0 {
                    state.overtaken -= 1
                    state.requests[hash]?.lastPolledAt = date.addingTimeInterval(-0.001)
                    return false
                }
                guard state.requests[hash]?.lastPolledAt == previous else { return false }
                state.requests[hash]?.lastPolledAt = date
                state.requests[hash]?.pollInterval = interval
                return true
            }
        }

        func device(id: String) async throws -> Device? { nil }

        func setCertificate(deviceID: String, _ certificate: String) async throws {}

        func exchange(_ request: ApprovalTransaction, for tokens: IssuedTokens, byClient clientID: String, at date: Date)
            async throws -> TokenExchange {
            state.withLock { state in
                guard state.activeUsers.contains(request.userID) else { return .userUnavailable }
                guard let hash = state.requests.first(where: { $0.value.id == request.id })?.key,
                      state.requests[hash]?.exchangedAt == nil else { return .alreadyExchanged }
                state.requests[hash]?.exchangedAt = date
                state.exchanges.append((request.id, clientID, tokens))
                return .exchanged
            }
        }
    }

    let start = MemoryFixtures.start
    let tenant = MemoryFixtures.tenant
    let client = MemoryFixtures.client()
    let authReqID = "the-auth-req-id"

    private var issuer: Issuer { Issuer(tenant: tenant, origin: PublicOrigin(URL(string: "https://countersign.test"))) }

    /// A request of `client` for `usr_one`, stored under `authReqID`.
    private func store(_ status: ApprovalTransaction.Status, expiresIn seconds: TimeInterval = 300,
                       lastPolledAt: Date? = nil) -> MemoryStore {
        let store = MemoryStore()
        let request = ApprovalTransaction(
            id: "txn_one", authReqIDHash: ApprovalService.hash(authReqID: authReqID), tenantID: tenant.id, clientID: client.id,
            userID: "usr_one", scope: ["openid"], acrValues: nil, bindingMessage: nil, details: "{}", detailsDigest: "digest",
            challenge: "challenge", status: status, pollInterval: NewApproval.pollInterval, lastPolledAt: lastPolledAt,
            createdAt: start.addingTimeInterval(-10), expiresAt: start.addingTimeInterval(seconds),
            decidedAt: status == .pending ? nil : start.addingTimeInterval(-5), decidedByDevice: status == .pending ? nil : "dev_one",
            response: nil, factors: status == .approved ? ["hwk"] : nil, exchangedAt: nil)
        store.state.withLock { state in
            state.requests[request.authReqIDHash] = request
            state.activeUsers = ["usr_one"]
        }
        return store
    }

    /// The grant at the time `clock` reads; its tokens are signed with keys of a migrated
    /// in-memory database that holds the tenant (its keys belong to it).
    private func grant(_ store: MemoryStore, clock: TestClock) async throws -> CIBAGrant {
        let database = try await SQLiteDatabase.open(path: nil, logger: Logger(label: "test"))
        try await Migrations.migrate(database)
        try await SQLTenantRepository().insert(tenant, sealedSigningKey: Data([1, 2, 3]), on: database)
        let keys = TokenSigningKeys(
            store: SQLTokenSigningKeyStore(database: database), sealer: SecretSealer(masterKey: MasterKey.generate()),
            now: clock.function)
        return CIBAGrant(store: store, tokens: TokenIssuer(keys: keys, records: SQLIssuedTokenStore(database: database)),
                         now: clock.function)
    }

    private func form(_ authReqID: String?) throws -> FormParameters {
        let body = "grant_type=urn%3Aopenid%3Aparams%3Agrant-type%3Aciba" + (authReqID.map { "&auth_req_id=" + $0 } ?? "")
        return try FormParameters(body: Data(body.utf8), contentType: "application/x-www-form-urlencoded")
    }

    private func refusal(_ grant: CIBAGrant, _ authReqID: String?, client: Client? = nil) async -> TokenRequestError? {
        do {
            _ = try await grant.exchange(try form(authReqID), client: client ?? self.client, issuer: issuer)
            Issue.record("tokens were issued")
            return nil
        } catch let error as TokenRequestError {
            return error
        } catch {
            Issue.record("unexpected \(error)")
            return nil
        }
    }

    @Test("undecided: authorization_pending; sooner than the interval, slow_down, which grows the interval by 5 s for good")
    func pollingRate() async throws {
        let store = store(.pending)
        let clock = TestClock(start)
        let grant = try await grant(store, clock: clock)
        #expect(await refusal(grant, authReqID) == .pending, "the first poll is always on time")
        clock.advance(by: 2)
        #expect(await refusal(grant, authReqID) == .slowDown(interval: 10))
        clock.advance(by: 6)
        #expect(await refusal(grant, authReqID) == .slowDown(interval: 15), "every poll counts as the previous one, early or not")
        clock.advance(by: 15)
        #expect(await refusal(grant, authReqID) == .pending)
        let request = try #require(store.state.withLock { $0.requests.values.first })
        #expect(request.pollInterval == 15 && request.lastPolledAt == clock.now)
    }

    @Test("of two polls at once, the one whose previous poll was overtaken is told to slow down")
    func concurrentPolls() async throws {
        let store = store(.pending, lastPolledAt: start.addingTimeInterval(-30))
        let grant = try await grant(store, clock: TestClock(start))
        store.state.withLock { $0.overtaken = 1 }
        #expect(await refusal(grant, authReqID) == .slowDown(interval: NewApproval.pollInterval))
    }

    @Test("approved: tokens exactly once, stored with who collected them; a second exchange is invalid_grant")
    func approvedOnce() async throws {
        let store = store(.approved)
        let grant = try await grant(store, clock: TestClock(start))
        let tokens = try await grant.exchange(try form(authReqID), client: client, issuer: issuer)
        #expect(tokens.tokenType == "Bearer" && tokens.idToken != nil)
        let exchanges = store.state.withLock { $0.exchanges }
        #expect(exchanges.count == 1 && exchanges.first?.clientID == client.id && exchanges.first?.requestID == "txn_one")
        #expect(await refusal(grant, authReqID) == .alreadyExchanged)
        #expect(store.state.withLock { $0.exchanges.count } == 1)
    }

    @Test("approved for a user disabled since: no tokens, nothing stored")
    func userDisabledSince() async throws {
        let store = store(.approved)
        store.state.withLock { $0.activeUsers = [] }
        let grant = try await grant(store, clock: TestClock(start))
        #expect(await refusal(grant, authReqID) == .userUnavailable)
        #expect(store.state.withLock { $0.exchanges.isEmpty })
    }

    @Test("an approval is collected up to one poll interval after the request's expiry, not later")
    func collectionAfterExpiry() async throws {
        let late = try await grant(store(.approved, expiresIn: -Double(NewApproval.pollInterval) + 1), clock: TestClock(start))
        _ = try await late.exchange(try form(authReqID), client: client, issuer: issuer)
        let tooLate = try await grant(store(.approved, expiresIn: -Double(NewApproval.pollInterval)), clock: TestClock(start))
        #expect(await refusal(tooLate, authReqID) == .expired)
    }

    @Test("denied is access_denied, expired is expired_token, and polls of an expired request are not recorded")
    func deniedAndExpired() async throws {
        #expect(await refusal(try await grant(store(.denied), clock: TestClock(start)), authReqID) == .denied)
        let expired = store(.pending, expiresIn: -1)
        #expect(await refusal(try await grant(expired, clock: TestClock(start)), authReqID) == .expired)
        #expect(expired.state.withLock { $0.requests.values.first?.lastPolledAt } == nil)
    }

    @Test("an unknown auth_req_id, one of another client, or none is refused before anything is read or written")
    func unknownRequests() async throws {
        let store = store(.approved)
        let grant = try await grant(store, clock: TestClock(start))
        #expect(await refusal(grant, "another-id") == .unknownAuthReqID)
        let other = MemoryFixtures.client(id: "cli_two", name: "Other")
        #expect(await refusal(grant, authReqID, client: other) == .unknownAuthReqID)
        #expect(await refusal(grant, nil) == .missingAuthReqID)
        var push = client
        push.deliveryMode = .push
        #expect(await refusal(grant, authReqID, client: push) == .pushClient)
        #expect(store.state.withLock { $0.exchanges.isEmpty })
    }
}
