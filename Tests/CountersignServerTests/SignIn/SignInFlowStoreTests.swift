import CountersignCore
import Foundation
import HTTPTypes
import Hummingbird
import Logging
import NIOCore
import Synchronization
import Testing
@testable import CountersignServer

/// The hosted sign-in's steps (`SignInFlow`) on stores held in memory: its own `SignInStore`,
/// the code flow's `AuthorizationStore` and the approval loop's `ApprovalStore`
/// (`ApprovalFlowStoreTests.MemoryStore`). No server, no database, no HTTP: each step is called
/// with a visit and answers a `PageAnswer`, whose page and model are read here. The browser
/// suites run the same pages in Chromium against a real server.
@Suite("Hosted sign-in on in-memory stores")
struct SignInFlowStoreTests {
    /// `SignInStore` in memory; the approval requests are the approval store's.
    final class MemoryStore: SignInStore {
        struct State {
            var attempts: [Data: SignInAttempt] = [:]
            var users: [User] = []
            var sessions: [BrowserSession] = []
            var endedSessions: [String] = []
            var browsers: [(Data, String)] = []
            var remembered: [RememberedBrowser] = []
        }

        let state = Mutex(State())
        let approvals: ApprovalFlowStoreTests.MemoryStore

        init(approvals: ApprovalFlowStoreTests.MemoryStore) { self.approvals = approvals }

        func begin(_ attempt: SignInAttempt) async throws { state.withLock { $0.attempts[attempt.handleHash] = attempt } }

        func attempt(handleHash: Data, tenantID: String) async throws -> SignInAttempt? {
            state.withLock { $0.attempts[handleHash].flatMap { $0.tenantID == tenantID ? $0 : nil } }
        }

        func groupIDs(userID: String) async throws -> Set<String> { [] }

        func sent(_ transactionID: String, to userID: String, passwordVerified: Bool, forAttempt handleHash: Data) async throws {
            state.withLock { state in
                state.attempts[handleHash]?.transactionID = transactionID
                state.attempts[handleHash]?.userID = userID
                state.attempts[handleHash]?.passwordVerified = passwordVerified
            }
        }

        func complete(attemptHash: Data, at date: Date) async throws -> Bool {
            state.withLock { state in
                guard state.attempts[attemptHash]?.completedAt == nil else { return false }
                state.attempts[attemptHash]?.completedAt = date
                return true
            }
        }

        func user(username: String, tenantID: String) async throws -> User? {
            state.withLock { $0.users.first { $0.username.lowercased() == username.lowercased() && $0.tenantID == tenantID } }
        }

        func user(id: String, tenantID: String) async throws -> User? {
            state.withLock { $0.users.first { $0.id == id && $0.tenantID == tenantID } }
        }

        func transaction(id: String) async throws -> ApprovalTransaction? { try await approvals.request(id: id) }

        func create(_ session: BrowserSession, clientID: String) async throws { state.withLock { $0.sessions.append(session) } }

        func session(tokenHash: Data, tenantID: String) async throws -> BrowserSession? {
            state.withLock { $0.sessions.first { $0.tokenHash == tokenHash && $0.tenantID == tenantID } }
        }

        func touch(sessionID: String, at date: Date) async throws {
            state.withLock { state in
                for index in state.sessions.indices where state.sessions[index].id == sessionID { state.sessions[index].lastSeenAt = date }
            }
        }

        func end(_ session: BrowserSession, reason: String?, at date: Date) async throws {
            state.withLock { state in
                for index in state.sessions.indices where state.sessions[index].id == session.id {
                    state.sessions[index].revokedAt = state.sessions[index].revokedAt ?? date
                }
                state.endedSessions.append(session.id)
            }
        }

        func stands(_ session: BrowserSession) async throws -> Bool {
            state.withLock { $0.users.contains { $0.id == session.userID && $0.status == .active } }
        }

        func knowsBrowser(_ browserHash: Data, userID: String, tenantID: String, since date: Date) async throws -> Bool {
            state.withLock { $0.browsers.contains { $0.0 == browserHash && $0.1 == userID } }
        }

        func rememberBrowser(_ browserHash: Data, userID: String, tenantID: String, at date: Date) async throws {
            state.withLock { $0.browsers.append((browserHash, userID)) }
        }

        func offerRemembered(_ browserID: String, challengeHash: Data, to userID: String, passwordVerified: Bool,
                             forAttempt handleHash: Data) async throws {
            state.withLock { state in
                state.attempts[handleHash]?.userID = userID
                state.attempts[handleHash]?.rememberedBrowserID = browserID
                state.attempts[handleHash]?.rememberedChallengeHash = challengeHash
                state.attempts[handleHash]?.passwordVerified = passwordVerified
            }
        }

        func rememberedBrowser(tokenHash: Data, tenantID: String) async throws -> RememberedBrowser? {
            state.withLock { state in
                state.remembered.first { $0.tenantID == tenantID && ($0.tokenHash == tokenHash || $0.previousTokenHash == tokenHash) }
            }
        }

        func remember(_ browser: RememberedBrowser, replacing tokenHash: Data?) async throws {
            state.withLock { state in
                if let tokenHash { state.remembered.removeAll { $0.tokenHash == tokenHash } }
                state.remembered.append(browser)
            }
        }

        func useRemembered(_ browser: RememberedBrowser, nextTokenHash: Data, at date: Date) async throws -> Bool {
            state.withLock { state in
                guard let index = state.remembered.firstIndex(where: { $0.id == browser.id && $0.tokenHash == browser.tokenHash })
                else { return false }
                let used = state.remembered[index]
                state.remembered[index] = RememberedBrowser(
                    id: used.id, tenantID: used.tenantID, userID: used.userID, tokenHash: nextTokenHash,
                    previousTokenHash: used.tokenHash, publicKey: used.publicKey, context: used.context, authTime: used.authTime,
                    ipAddress: used.ipAddress, userAgent: used.userAgent, createdAt: used.createdAt, lastUsedAt: date,
                    expiresAt: used.expiresAt)
                return true
            }
        }

        func forgetRemembered(_ browser: RememberedBrowser, reason: String, at date: Date) async throws {
            state.withLock { $0.remembered.removeAll { $0.id == browser.id } }
        }

        func purgeExpired(before date: Date) async throws {}
    }

    /// `AuthorizationStore` in memory: the tenant's clients and the codes issued.
    final class MemoryAuthorizationStore: AuthorizationStore {
        let clients: [Client]
        let codes = Mutex<[AuthorizationCode]>([])

        init(clients: [Client]) { self.clients = clients }

        func client(id: String, tenantID: String) async throws -> Client? {
            clients.first { $0.id == id && $0.tenantID == tenantID }
        }

        func push(_ request: AuthorizationRequest, handleHash: Data, tenantID: String, at date: Date, expiresAt: Date) async throws {}

        func takePushed(handleHash: Data, clientID: String, tenantID: String, at date: Date) async throws -> AuthorizationRequest? {
            nil
        }

        func insert(_ code: AuthorizationCode) async throws { codes.withLock { $0.append(code) } }

        func purgeExpired(before date: Date) async throws {}
    }

    /// One browser: the cookies it was given, sent back with every step.
    final class Browser: Sendable {
        let cookies = Mutex<[String: String]>([:])

        func visit(_ issuer: Issuer) -> SignInFlow.Visit {
            let header = cookies.withLock { $0.map { "\($0.key)=\($0.value)" }.sorted().joined(separator: "; ") }
            var fields: HTTPFields = [.userAgent: "Firefox/140"]
            if !header.isEmpty { fields[.cookie] = header }
            let request = Request(
                head: HTTPRequest(method: .post, scheme: "https", authority: "countersign.test", path: "/authorize", headerFields: fields),
                body: RequestBody(buffer: ByteBuffer()))
            return SignInFlow.Visit(issuer: issuer, request: request, remoteAddress: "198.51.100.7")
        }

        func keep(_ answer: PageAnswer) {
            cookies.withLock { jar in
                for cookie in answer.cookies { jar[cookie.name] = cookie.value }
            }
        }
    }

    let start = MemoryFixtures.start
    let tenant = MemoryFixtures.tenant
    let origin = PublicOrigin(URL(string: "https://countersign.test"))
    var issuer: Issuer { Issuer(tenant: tenant, origin: origin) }
    var client: Client {
        var client = MemoryFixtures.client()
        client.redirectURIs = ["https://bank.test/callback"]
        return client
    }

    struct Bench {
        let flow: SignInFlow
        let store: MemoryStore
        let approvals: ApprovalFlowStoreTests.MemoryStore
        let codes: MemoryAuthorizationStore
        let clock: TestClock
    }

    /// The flow on memory stores, with alice (one phone), bob (disabled) and carol (no phone).
    private func bench() async throws -> Bench {
        let clock = TestClock(start)
        let approvals = ApprovalFlowStoreTests.MemoryStore()
        let store = MemoryStore(approvals: approvals)
        store.state.withLock {
            $0.users = [MemoryFixtures.user(id: "usr_alice", username: "alice"),
                        MemoryFixtures.user(id: "usr_bob", username: "bob", status: .disabled),
                        MemoryFixtures.user(id: "usr_carol", username: "carol")]
        }
        let approvalTests = ApprovalFlowStoreTests()
        approvals.state.withLock { $0.devices = [approvalTests.device("dev_alice", userID: "usr_alice").0] }
        let codes = MemoryAuthorizationStore(clients: [client])
        // Signing keys on an empty, unmigrated in-memory database: no step here signs anything.
        let database = try await SQLiteDatabase.open(path: nil, logger: Logger(label: "test"))
        let keys = TokenSigningKeys(
            store: SQLTokenSigningKeyStore(database: database), sealer: SecretSealer(masterKey: MasterKey.generate()),
            now: clock.function)
        let flow = SignInFlow(
            store: store,
            interaction: AuthorizationInteraction(
                endpoint: AuthorizationEndpoint(store: codes, now: clock.function), signingKeys: keys, origin: origin,
                now: clock.function),
            approvals: approvalTests.service(approvals, clock: clock), events: ApprovalEvents(),
            throttle: FailedAuthenticationThrottle(limit: 5, now: clock.function), pushLimits: SignInPushLimits(now: clock.function),
            cookies: BrowserCookies(origin: origin), now: clock.function)
        return Bench(flow: flow, store: store, approvals: approvals, codes: codes, clock: clock)
    }

    private func form(_ fields: [(String, String)]) throws -> FormParameters {
        let body = fields.map { "\($0.0)=\(AuthorizationRedirect.encoded($0.1))" }.joined(separator: "&")
        return try FormParameters(body: Data(body.utf8), contentType: "application/x-www-form-urlencoded")
    }

    private var authorization: [(String, String)] {
        [("response_type", "code"), ("client_id", "cli_one"), ("redirect_uri", "https://bank.test/callback"),
         ("scope", "openid"), ("state", "s-1"), ("code_challenge", String(repeating: "a", count: 43)),
         ("code_challenge_method", "S256")]
    }

    /// The page an answer shows, with its model.
    private func page(_ answer: PageAnswer) throws -> (template: String, model: any PageModel, status: HTTPResponse.Status) {
        guard case .page(let template, let model, let status) = answer.kind else {
            throw Failure("not a page: \(answer.kind)")
        }
        return (template, model, status)
    }

    struct Failure: Error, CustomStringConvertible { let description: String; init(_ d: String) { description = d } }

    /// Begins a sign-in in `browser`; the attempt's handle.
    private func begin(_ bench: Bench, _ browser: Browser) async throws -> String {
        let answer = try await bench.flow.authorize(try form(authorization), browser.visit(issuer))
        browser.keep(answer)
        let shown = try page(answer)
        #expect(shown.template == "sign-in")
        return try #require(shown.model as? SignInPage).attempt
    }

    @Test("the whole sign-in: username, the phone's approval, then a session and the code at the client's redirect URI")
    func signInApprovedOnThePhone() async throws {
        let bench = try await bench()
        let browser = Browser()
        let handle = try await begin(bench, browser)
        let waiting = try page(try await bench.flow.signIn(try form([("attempt", handle), ("username", "alice")]), browser.visit(issuer)))
        #expect(waiting.template == "waiting")
        #expect(try #require(waiting.model as? WaitingPage).origin == "198.51.100.7, Firefox/140")
        let request = try #require(bench.approvals.state.withLock { $0.requests.first })
        #expect(request.userID == "usr_alice" && request.clientID == "cli_one" && request.deliveryMode == .poll)

        // The phone approves (the approval loop's part, tested on its own).
        bench.approvals.state.withLock { $0.requests[0].status = .approved; $0.requests[0].decidedAt = start; $0.requests[0].decidedByDevice = "dev_alice" }
        let done = try await bench.flow.proceed(try form([("attempt", handle)]), browser.visit(issuer))
        guard case .redirect(let location) = done.kind else { throw Failure("no redirect: \(done.kind)") }
        #expect(location.hasPrefix("https://bank.test/callback?code=") && location.contains("state=s-1"))
        #expect(done.cookies.map(\.name) == [BrowserCookies(origin: origin).sessionName(for: tenant)])
        let session = try #require(bench.store.state.withLock { $0.sessions.first })
        #expect(session.userID == "usr_alice" && session.authenticator == .device("dev_alice"))
        #expect(bench.codes.codes.withLock { $0.count } == 1)
        // The attempt is spent: posting it again shows that it was completed.
        await #expect(throws: SignInError.completed) {
            try await bench.flow.proceed(try form([("attempt", handle)]), browser.visit(issuer))
        }
    }

    @Test("an unknown username, a disabled user and a user without a phone get the same page, and the same limit")
    func noEnumeration() async throws {
        let bench = try await bench()
        var seen: [String] = []
        for username in ["nobody", "bob", "carol"] {
            let browser = Browser()
            let handle = try await begin(bench, browser)
            let shown = try page(try await bench.flow.signIn(
                try form([("attempt", handle), ("username", username)]), browser.visit(issuer)))
            let outcome = try #require(shown.model as? OutcomePage)
            seen.append("\(shown.template) \(outcome.kind) \(outcome.heading) \(outcome.message) \(shown.status.code)")
        }
        #expect(Set(seen).count == 1 && seen.first?.hasPrefix("outcome no-device") == true, "\(seen)")
        #expect(bench.approvals.state.withLock { $0.requests.isEmpty })
        // Repeated tries at one username, known or not, meet the same limit.
        for username in ["nobody", "carol"] {
            var kinds: [String] = []
            for _ in 0..<6 {
                let browser = Browser()
                let handle = try await begin(bench, browser)
                let shown = try page(try await bench.flow.signIn(
                    try form([("attempt", handle), ("username", username)]), browser.visit(issuer)))
                kinds.append(try #require(shown.model as? OutcomePage).kind)
            }
            #expect(kinds.last == "rate-limited", "\(username): \(kinds)")
        }
    }

    @Test("an attempt answers only the browser it began in, only while open, and only once")
    func attemptRules() async throws {
        let bench = try await bench()
        let browser = Browser()
        let handle = try await begin(bench, browser)
        let form = try form([("attempt", handle), ("username", "alice")])
        await #expect(throws: SignInError.otherBrowser) { try await bench.flow.signIn(form, Browser().visit(issuer)) }
        let other = Browser()
        _ = try await begin(bench, other)
        await #expect(throws: SignInError.otherBrowser, "a browser with a mark of its own") {
            try await bench.flow.signIn(form, other.visit(issuer))
        }
        await #expect(throws: SignInError.unknownAttempt) {
            try await bench.flow.signIn(try self.form([("attempt", "not-a-handle"), ("username", "alice")]), browser.visit(issuer))
        }
        bench.clock.advance(by: SignInAttempt.lifetime)
        await #expect(throws: SignInError.expired) { try await bench.flow.signIn(form, browser.visit(issuer)) }
        #expect(bench.approvals.state.withLock { $0.requests.isEmpty }, "no request was sent by a refused step")
    }

    @Test("a request denied on the phone, or left to expire, ends on its page and begins no session")
    func deniedAndExpired() async throws {
        for ending in ["denied", "expired"] {
            let bench = try await bench()
            let browser = Browser()
            let handle = try await begin(bench, browser)
            _ = try await bench.flow.signIn(try form([("attempt", handle), ("username", "alice")]), browser.visit(issuer))
            if ending == "denied" {
                bench.approvals.state.withLock { $0.requests[0].status = .denied; $0.requests[0].decidedAt = start }
            } else {
                bench.clock.advance(by: TimeInterval(NewApproval.longestLifetime) + 1)
            }
            let shown = try page(try await bench.flow.proceed(try form([("attempt", handle)]), browser.visit(issuer)))
            #expect(shown.template == "outcome" && (shown.model as? OutcomePage)?.kind == ending)
            #expect(bench.store.state.withLock { $0.sessions.isEmpty } && bench.codes.codes.withLock { $0.isEmpty })
        }
    }
}
