import CountersignCore
import Foundation
import Synchronization
import Testing
@testable import CountersignServer

/// The `user_code` check of `bc-authorize` alone, on a store held in memory: no server, no
/// database. The flow reads and writes only what `UserCodeCheckStore` declares, so this is all
/// it needs.
@Suite("User code check on an in-memory store")
struct CIBAFlowStoreTests {
    /// `UserCodeCheckStore` in memory, counting wrong codes the way the database does: the
    /// `limit`-th in a row locks the code and sets the count back to 0.
    final class MemoryStore: UserCodeCheckStore {
        struct Lock: Equatable {
            let userID: String
            let tenantID: String
            let clientID: String
            let until: Date
            let at: Date
        }

        struct State {
            var codes: [String: StoredUserCode] = [:]
            var failures: [String: Int] = [:]
            var successes = 0
            var locks: [Lock] = []
        }

        let state = Mutex(State())

        func code(userID: String) async throws -> StoredUserCode? { state.withLock { $0.codes[userID] } }

        func recordSuccess(userID: String) async throws {
            state.withLock { state in
                state.failures[userID] = 0
                state.successes += 1
            }
        }

        func recordFailure(userID: String, tenantID: String, byClient clientID: String, limit: Int, lockUntil: Date,
                           at date: Date) async throws -> Bool {
            state.withLock { state in
                let failures = state.failures[userID, default: 0] + 1
                guard failures >= limit, let code = state.codes[userID] else {
                    state.failures[userID] = failures
                    return false
                }
                state.failures[userID] = 0
                state.codes[userID] = StoredUserCode(hash: code.hash, lockedUntil: lockUntil)
                state.locks.append(Lock(userID: userID, tenantID: tenantID, clientID: clientID, until: lockUntil, at: date))
                return true
            }
        }
    }

    let start = Date(timeIntervalSince1970: 1_790_000_000)
    let sealer = SecretSealer(masterKey: MasterKey.generate())
    let user = User(id: "usr_one", tenantID: "ten_one", username: "alice", displayName: nil, status: .active,
                    createdAt: Date(timeIntervalSince1970: 0), updatedAt: Date(timeIntervalSince1970: 0))

    private func client(registered: Bool = true) -> Client {
        var client = Client(
            id: "cli_one", tenantID: "ten_one", name: "Bank", scopes: ["openid"], deliveryMode: .poll,
            notificationEndpoint: nil, createdAt: start, updatedAt: start)
        client.backchannelUserCodeParameter = registered
        return client
    }

    /// A store holding `code` for the user, and a check whose clock the test moves.
    private func setUp(code: String? = "2468") -> (MemoryStore, UserCodeCheck, TestClock) {
        let store = MemoryStore()
        if let code {
            let hash = UserCode.hash(code, userID: user.id, masterKey: sealer.masterKey)
            store.state.withLock { $0.codes[user.id] = StoredUserCode(hash: hash, lockedUntil: nil) }
        }
        let clock = TestClock(start)
        return (store, UserCodeCheck(store: store, sealer: sealer, now: clock.function), clock)
    }

    private func refusal(_ check: UserCodeCheck, _ code: String?, client: Client? = nil) async -> BackchannelAuthenticationError? {
        do {
            try await check.verify(code, user: user, client: client ?? self.client())
            return nil
        } catch let error as BackchannelAuthenticationError {
            return error
        } catch {
            Issue.record("unexpected error \(error)")
            return nil
        }
    }

    @Test("the fifth wrong code in a row locks the code for 15 minutes, the right one included, and records the lock once")
    func lockout() async throws {
        let (store, check, clock) = setUp()
        for _ in 1..<UserCodeCheck.failureLimit {
            #expect(await refusal(check, "1111") == .invalidUserCode)
        }
        #expect(store.state.withLock { $0.locks.isEmpty })
        #expect(await refusal(check, "1111") == .userCodeLocked(retryAfter: 900))
        let locks = store.state.withLock { $0.locks }
        #expect(locks == [MemoryStore.Lock(userID: "usr_one", tenantID: "ten_one", clientID: "cli_one",
                                           until: start.addingTimeInterval(900), at: start)])

        clock.advance(by: 100.5)
        #expect(await refusal(check, "2468") == .userCodeLocked(retryAfter: 800), "the right code waits for the lock too")
        #expect(await refusal(check, nil) == .userCodeLocked(retryAfter: 800), "so does a request without one")
        #expect(store.state.withLock { $0.successes } == 0)
        #expect(store.state.withLock { $0.locks.count } == 1, "a locked code counts no more failures")

        clock.advance(by: 799.5)
        #expect(await refusal(check, "2468") == nil, "the lock ends exactly 15 minutes after the fifth failure")
        #expect(store.state.withLock { $0.successes } == 1)
    }

    @Test("a right code sets the count of wrong ones back to 0")
    func rightCodeResets() async throws {
        let (store, check, _) = setUp()
        for _ in 1..<UserCodeCheck.failureLimit {
            #expect(await refusal(check, "1111") == .invalidUserCode)
        }
        #expect(await refusal(check, "2468") == nil)
        #expect(store.state.withLock { $0.failures["usr_one"] } == 0)
        for _ in 1..<UserCodeCheck.failureLimit {
            #expect(await refusal(check, "1111") == .invalidUserCode)
        }
        #expect(store.state.withLock { $0.locks.isEmpty })
    }

    @Test("a missing code is refused without counting; a code for a user without one is refused; an unregistered client is not checked")
    func missingAndUnset() async throws {
        let (store, check, _) = setUp()
        #expect(await refusal(check, nil) == .missingUserCode)
        #expect(store.state.withLock { $0.failures.isEmpty })
        #expect(await refusal(check, "1111", client: client(registered: false)) == nil)
        #expect(store.state.withLock { $0.failures.isEmpty })

        let (_, unset, _) = setUp(code: nil)
        #expect(await refusal(unset, "2468") == .userCodeNotSet)
        #expect(await refusal(unset, nil) == nil)
    }
}
