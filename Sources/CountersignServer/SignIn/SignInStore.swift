import CountersignCore
import Foundation

/// A browser's sign-in at the authorization endpoint, from the checked request to the code:
/// the page posts back its handle, and the browser must bring the cookie it began with, so a
/// handle seen elsewhere answers nothing. It lives a quarter of an hour; after the code is
/// issued it is completed and answers nothing more.
struct SignInAttempt: Sendable, Equatable {
    static let lifetime: TimeInterval = 15 * 60

    let handleHash: Data
    let tenantID: String
    let clientID: String
    let request: AuthorizationRequest
    let browserHash: Data
    var userID: String? = nil
    /// The approval request sent to the user's phones, the latest one.
    var transactionID: String? = nil
    let createdAt: Date
    let expiresAt: Date
    var completedAt: Date? = nil
    /// The user's directory password was checked before that request was sent: the sign-in's
    /// `amr` then says `pwd` (`DirectoryPasswords`).
    var passwordVerified = false
    /// The remembered browser offered to answer this sign-in instead of the phone, and the hash
    /// of the challenge it must sign (`RememberedBrowser`).
    var rememberedBrowserID: String? = nil
    var rememberedChallengeHash: Data? = nil
}

/// Who is signed in in a browser, kept on the server so that it can be ended (sign-out, an
/// administrator, the user on another device). The cookie holds a random token; only its hash
/// is stored. A session ends `AuthenticationPolicy.sessionIdleSeconds` after its last use and
/// `sessionMaxAgeSeconds` after the sign-in, whichever comes first.
struct BrowserSession: Sendable, Equatable {
    let id: String
    let tokenHash: Data
    let tenantID: String
    let userID: String
    /// The token a form of the signed-in pages must carry (the account page's).
    let csrfToken: String
    let authTime: Date
    let context: AuthenticationContext
    let ipAddress: String?
    let userAgent: String?
    let createdAt: Date
    var lastSeenAt: Date
    let expiresAt: Date
    var revokedAt: Date? = nil
    /// What the person signed in with; nil for sessions begun before it was recorded.
    var authenticator: SessionAuthenticator? = nil

    func isLive(at date: Date, policy: AuthenticationPolicy) -> Bool {
        revokedAt == nil && date < expiresAt && date.timeIntervalSince(lastSeenAt) < TimeInterval(policy.sessionIdleSeconds)
    }
}

/// What a session was signed in with: the phone that approved its sign-in, or the passkey.
/// A session lasts no longer than it: removing the phone or the passkey (by the user, an
/// administrator, the phone itself, or the PIN limit) ends the sessions it made (ASVS 3.3.3;
/// NIST SP 800-63B §6.2: a lost authenticator must not leave a way in).
enum SessionAuthenticator: Sendable, Equatable {
    case device(String)
    case passkey(String)
    /// A recovery code: the session ends when the user's codes are replaced or revoked.
    case recoveryCode(String)
    /// A temporary access pass: the session ends when the pass is revoked.
    case temporaryAccessPass(String)
    /// A remembered browser: the session ends when it is forgotten.
    case rememberedBrowser(String)

    /// As stored: `device:<id>`, `passkey:<id>`, `recovery-code:<id>` or `access-pass:<id>`.
    var stored: String {
        switch self {
        case .device(let id): "device:" + id
        case .passkey(let id): "passkey:" + id
        case .recoveryCode(let id): "recovery-code:" + id
        case .temporaryAccessPass(let id): "access-pass:" + id
        case .rememberedBrowser(let id): "remembered-browser:" + id
        }
    }

    init?(stored: String) {
        if stored.hasPrefix("device:") {
            self = .device(String(stored.dropFirst("device:".count)))
        } else if stored.hasPrefix("passkey:") {
            self = .passkey(String(stored.dropFirst("passkey:".count)))
        } else if stored.hasPrefix("recovery-code:") {
            self = .recoveryCode(String(stored.dropFirst("recovery-code:".count)))
        } else if stored.hasPrefix("remembered-browser:") {
            self = .rememberedBrowser(String(stored.dropFirst("remembered-browser:".count)))
        } else if stored.hasPrefix("access-pass:") {
            self = .temporaryAccessPass(String(stored.dropFirst("access-pass:".count)))
        } else {
            return nil
        }
    }
}

/// What the hosted sign-in reads and writes.
protocol SignInStore: Sendable {
    func begin(_ attempt: SignInAttempt) async throws
    func attempt(handleHash: Data, tenantID: String) async throws -> SignInAttempt?
    /// Records the approval request sent for the attempt.
    func sent(_ transactionID: String, to userID: String, passwordVerified: Bool, forAttempt handleHash: Data) async throws
    /// Completes the attempt once; false when it was completed already.
    func complete(attemptHash: Data, at date: Date) async throws -> Bool
    func user(username: String, tenantID: String) async throws -> User?
    func user(id: String, tenantID: String) async throws -> User?
    /// The ids of the groups the user is in.
    func groupIDs(userID: String) async throws -> Set<String>
    func transaction(id: String) async throws -> ApprovalTransaction?
    /// Stores a new session, with its audit record naming the client signed in to.
    func create(_ session: BrowserSession, clientID: String) async throws
    func session(tokenHash: Data, tenantID: String) async throws -> BrowserSession?
    func touch(sessionID: String, at date: Date) async throws
    /// Ends the session (once; a session already ended is left as it is), with `reason` in
    /// its audit record when something other than the user ended it.
    func end(_ session: BrowserSession, reason: String?, at date: Date) async throws
    /// Whether the session's user is active and what it was signed in with is still theirs:
    /// an active phone, or a passkey not removed.
    func stands(_ session: BrowserSession) async throws -> Bool
    /// Whether the user signed in with the browser whose mark hashes to `browserHash` since `date`.
    func knowsBrowser(_ browserHash: Data, userID: String, tenantID: String, since date: Date) async throws -> Bool
    /// Records a sign-in of the user with this browser.
    func rememberBrowser(_ browserHash: Data, userID: String, tenantID: String, at date: Date) async throws
    /// Records that the attempt's user was found and a remembered browser offered to answer it.
    func offerRemembered(_ browserID: String, challengeHash: Data, to userID: String, passwordVerified: Bool,
                         forAttempt handleHash: Data) async throws
    /// The remembered browser whose cookie token, or the token it replaced, hashes to `tokenHash`.
    func rememberedBrowser(tokenHash: Data, tenantID: String) async throws -> RememberedBrowser?
    /// Stores a newly remembered browser, forgetting the one whose token the browser held
    /// before (`replacing`), if any; audited.
    func remember(_ browser: RememberedBrowser, replacing tokenHash: Data?) async throws
    /// Replaces the cookie's token after a use; false when another use replaced it first.
    func useRemembered(_ browser: RememberedBrowser, nextTokenHash: Data, at date: Date) async throws -> Bool
    /// Forgets a remembered browser, with `reason` in the audit record.
    func forgetRemembered(_ browser: RememberedBrowser, reason: String, at date: Date) async throws
    /// Deletes attempts that expired before `date`, and sessions that ended (expired or were
    /// ended) before it.
    func purgeExpired(before date: Date) async throws
}

/// The hosted sign-in's store on the server's database (SQLite or PostgreSQL).
struct SQLSignInStore: SignInStore {
    let database: any Database
    let users: any UserRepository
    let approvals: any ApprovalTransactionRepository
    let devices: any DeviceRepository
    let passkeys: any PasskeyStore
    let audit: AuditLog
    /// Creates a user the tenant's directory has on first use.
    var directory: DirectoryLookup? = nil
    /// Whether the code or pass a recovery session was opened with still stands.
    var recovery = SQLRecoverySessions()
    var rememberedBrowsers = SQLRememberedBrowserRepository()

    func begin(_ attempt: SignInAttempt) async throws {
        try await database.run(
            """
            INSERT INTO sign_in_attempts (handle_hash, tenant_id, client_id, parameters, browser_hash, created_at, expires_at)
            VALUES (\(attempt.handleHash), \(attempt.tenantID), \(attempt.clientID),
                \(try SQLCodeFlowStore.json(attempt.request)), \(attempt.browserHash), \(attempt.createdAt), \(attempt.expiresAt))
            """)
    }

    func attempt(handleHash: Data, tenantID: String) async throws -> SignInAttempt? {
        try await database.first(
            """
            SELECT \(raw: SignInAttemptRow.columns) FROM sign_in_attempts
            WHERE handle_hash = \(handleHash) AND tenant_id = \(tenantID)
            """, as: SignInAttemptRow.self)?.attempt()
    }

    func sent(_ transactionID: String, to userID: String, passwordVerified: Bool, forAttempt handleHash: Data) async throws {
        try await database.run(
            """
            UPDATE sign_in_attempts SET user_id = \(userID), transaction_id = \(transactionID),
                password_verified = \(passwordVerified)
            WHERE handle_hash = \(handleHash) AND completed_at IS NULL
            """)
    }

    func complete(attemptHash: Data, at date: Date) async throws -> Bool {
        !(try await database.run(
            """
            UPDATE sign_in_attempts SET completed_at = \(date)
            WHERE handle_hash = \(attemptHash) AND completed_at IS NULL RETURNING handle_hash
            """)).isEmpty
    }

    func user(username: String, tenantID: String) async throws -> User? {
        if let user = try await users.find(username: username, tenantID: tenantID, on: database) { return user }
        return await directory?.provision(username: username, tenantID: tenantID)
    }

    func groupIDs(userID: String) async throws -> Set<String> {
        try await GroupReferences.groupIDs(of: userID, on: database)
    }

    func user(id: String, tenantID: String) async throws -> User? {
        try await users.find(id: id, tenantID: tenantID, on: database)
    }

    func transaction(id: String) async throws -> ApprovalTransaction? {
        try await approvals.find(id: id, on: database)
    }

    func create(_ session: BrowserSession, clientID: String) async throws {
        try await database.transaction { executor in
            try await executor.run(
                """
                INSERT INTO browser_sessions (id, token_hash, tenant_id, user_id, csrf_token, auth_time, acr, amr,
                    ip_address, user_agent, created_at, last_seen_at, expires_at, authenticator)
                VALUES (\(session.id), \(session.tokenHash), \(session.tenantID), \(session.userID), \(session.csrfToken),
                    \(session.authTime), \(session.context.acr), \(session.context.amr.joined(separator: " ")),
                    \(session.ipAddress), \(session.userAgent), \(session.createdAt), \(session.lastSeenAt),
                    \(session.expiresAt), \(session.authenticator?.stored))
                """)
            try await audit.record(
                "session.created", actor: "user:\(session.userID)", tenantID: session.tenantID,
                target: ("session", session.id),
                details: ["client_id": clientID, "acr": session.context.acr, "ip_address": session.ipAddress ?? ""],
                at: session.createdAt, on: executor)
        }
    }

    func session(tokenHash: Data, tenantID: String) async throws -> BrowserSession? {
        try await database.first(
            """
            SELECT \(raw: BrowserSessionRow.columns) FROM browser_sessions
            WHERE token_hash = \(tokenHash) AND tenant_id = \(tenantID)
            """, as: BrowserSessionRow.self)?.session()
    }

    func touch(sessionID: String, at date: Date) async throws {
        try await database.run("UPDATE browser_sessions SET last_seen_at = \(date) WHERE id = \(sessionID)")
    }

    func end(_ session: BrowserSession, reason: String?, at date: Date) async throws {
        try await database.transaction { executor in
            let ended = !(try await executor.run(
                """
                UPDATE browser_sessions SET revoked_at = \(date)
                WHERE id = \(session.id) AND revoked_at IS NULL RETURNING id
                """)).isEmpty
            guard ended else { return }
            try await audit.record(
                "session.ended", actor: reason == nil ? "user:\(session.userID)" : "system", tenantID: session.tenantID,
                target: ("session", session.id),
                details: ["user_id": session.userID].merging(reason.map { ["reason": $0] } ?? [:]) { $1 }, at: date,
                on: executor)
        }
    }

    func knowsBrowser(_ browserHash: Data, userID: String, tenantID: String, since date: Date) async throws -> Bool {
        !(try await database.run(
            """
            SELECT 1 AS known FROM sign_in_browsers
            WHERE tenant_id = \(tenantID) AND user_id = \(userID) AND browser_hash = \(browserHash) AND last_used_at >= \(date)
            """)).isEmpty
    }

    func rememberBrowser(_ browserHash: Data, userID: String, tenantID: String, at date: Date) async throws {
        try await database.run(
            """
            INSERT INTO sign_in_browsers (tenant_id, user_id, browser_hash, last_used_at)
            VALUES (\(tenantID), \(userID), \(browserHash), \(date))
            ON CONFLICT (tenant_id, user_id, browser_hash) DO UPDATE SET last_used_at = excluded.last_used_at
            """)
    }

    func stands(_ session: BrowserSession) async throws -> Bool {
        guard let user = try await users.find(id: session.userID, tenantID: session.tenantID, on: database),
              user.status == .active else { return false }
        switch session.authenticator {
        case nil:
            return true
        case .device(let id):
            guard let device = try await devices.find(id: id, on: database) else { return false }
            return device.status == .active && device.userID == session.userID
        case .passkey(let id):
            return try await passkeys.passkey(id: id, tenantID: session.tenantID)?.userID == session.userID
        case .recoveryCode, .temporaryAccessPass:
            return try await recovery.stands(session.authenticator, userID: session.userID, on: database)
        case .rememberedBrowser(let id):
            return try await rememberedBrowsers.find(id: id, tenantID: session.tenantID, on: database)?.userID == session.userID
        }
    }

    func offerRemembered(_ browserID: String, challengeHash: Data, to userID: String, passwordVerified: Bool,
                         forAttempt handleHash: Data) async throws {
        try await database.run(
            """
            UPDATE sign_in_attempts SET user_id = \(userID), remembered_browser_id = \(browserID),
                remembered_challenge_hash = \(challengeHash), password_verified = \(passwordVerified)
            WHERE handle_hash = \(handleHash) AND completed_at IS NULL
            """)
    }

    func rememberedBrowser(tokenHash: Data, tenantID: String) async throws -> RememberedBrowser? {
        try await rememberedBrowsers.find(tokenHash: tokenHash, tenantID: tenantID, on: database)
    }

    func remember(_ browser: RememberedBrowser, replacing tokenHash: Data?) async throws {
        try await database.transaction { executor in
            if let tokenHash,
               let earlier = try await rememberedBrowsers.find(tokenHash: tokenHash, tenantID: browser.tenantID, on: executor),
               try await rememberedBrowsers.delete(id: earlier.id, tenantID: earlier.tenantID, on: executor) {
                try await audit.record(
                    "remembered_browser.forgotten", actor: "user:\(browser.userID)", tenantID: browser.tenantID,
                    target: ("remembered_browser", earlier.id), details: ["reason": "the browser was remembered again"],
                    at: browser.createdAt, on: executor)
            }
            try await rememberedBrowsers.insert(browser, on: executor)
            try await audit.record(
                "remembered_browser.created", actor: "user:\(browser.userID)", tenantID: browser.tenantID,
                target: ("remembered_browser", browser.id),
                details: ["acr": browser.context.acr, "expires_at": Timestamps.format(browser.expiresAt),
                          "ip_address": browser.ipAddress ?? ""],
                at: browser.createdAt, on: executor)
        }
    }

    func useRemembered(_ browser: RememberedBrowser, nextTokenHash: Data, at date: Date) async throws -> Bool {
        try await database.transaction { executor in
            guard try await rememberedBrowsers.rotate(
                id: browser.id, from: browser.tokenHash, to: nextTokenHash, at: date, on: executor) else { return false }
            try await audit.record(
                "remembered_browser.used", actor: "user:\(browser.userID)", tenantID: browser.tenantID,
                target: ("remembered_browser", browser.id), details: [:], at: date, on: executor)
            return true
        }
    }

    func forgetRemembered(_ browser: RememberedBrowser, reason: String, at date: Date) async throws {
        try await database.transaction { executor in
            guard try await rememberedBrowsers.delete(id: browser.id, tenantID: browser.tenantID, on: executor) else { return }
            try await audit.record(
                "remembered_browser.forgotten", actor: "system", tenantID: browser.tenantID,
                target: ("remembered_browser", browser.id), details: ["reason": reason], at: date, on: executor)
        }
    }
}

extension SQLSignInStore {
    func purgeExpired(before date: Date) async throws {
        try await database.run("DELETE FROM sign_in_attempts WHERE expires_at < \(date)")
        try await database.run(
            "DELETE FROM browser_sessions WHERE expires_at < \(date) OR (revoked_at IS NOT NULL AND revoked_at < \(date))")
        try await database.run(
            "DELETE FROM sign_in_browsers WHERE last_used_at < \(date.addingTimeInterval(-SignInPushLimits.browserMemory))")
        try await rememberedBrowsers.purge(expiredBefore: date, on: database)
    }
}

/// A row of `sign_in_attempts` as stored.
struct SignInAttemptRow: Decodable {
    static let columns = CodingKeys.allCases.map(\.rawValue).joined(separator: ", ")

    var handleHash: Data
    var tenantID: String
    var clientID: String
    var parameters: String
    var browserHash: Data
    var userID: String?
    var transactionID: String?
    var createdAt: Date
    var expiresAt: Date
    var completedAt: Date?
    var passwordVerified: Bool
    var rememberedBrowserID: String?
    var rememberedChallengeHash: Data?

    enum CodingKeys: String, CodingKey, CaseIterable {
        case parameters
        case handleHash = "handle_hash"
        case tenantID = "tenant_id"
        case clientID = "client_id"
        case browserHash = "browser_hash"
        case userID = "user_id"
        case transactionID = "transaction_id"
        case createdAt = "created_at"
        case expiresAt = "expires_at"
        case completedAt = "completed_at"
        case passwordVerified = "password_verified"
        case rememberedBrowserID = "remembered_browser_id"
        case rememberedChallengeHash = "remembered_challenge_hash"
    }

    func attempt() throws -> SignInAttempt {
        SignInAttempt(
            handleHash: handleHash, tenantID: tenantID, clientID: clientID,
            request: try SQLCodeFlowStore.request(fromJSON: parameters, column: "sign_in_attempts.parameters"),
            browserHash: browserHash, userID: userID, transactionID: transactionID, createdAt: createdAt,
            expiresAt: expiresAt, completedAt: completedAt, passwordVerified: passwordVerified,
            rememberedBrowserID: rememberedBrowserID, rememberedChallengeHash: rememberedChallengeHash)
    }
}

/// A row of `browser_sessions` as stored.
struct BrowserSessionRow: Decodable {
    static let columns = CodingKeys.allCases.map(\.rawValue).joined(separator: ", ")

    var id: String
    var tokenHash: Data
    var tenantID: String
    var userID: String
    var csrfToken: String
    var authTime: Date
    var acr: String
    var amr: String
    var ipAddress: String?
    var userAgent: String?
    var createdAt: Date
    var lastSeenAt: Date
    var expiresAt: Date
    var revokedAt: Date?
    var authenticator: String?

    enum CodingKeys: String, CodingKey, CaseIterable {
        case id, acr, amr, authenticator
        case tokenHash = "token_hash"
        case tenantID = "tenant_id"
        case userID = "user_id"
        case csrfToken = "csrf_token"
        case authTime = "auth_time"
        case ipAddress = "ip_address"
        case userAgent = "user_agent"
        case createdAt = "created_at"
        case lastSeenAt = "last_seen_at"
        case expiresAt = "expires_at"
        case revokedAt = "revoked_at"
    }

    func session() -> BrowserSession {
        BrowserSession(
            id: id, tokenHash: tokenHash, tenantID: tenantID, userID: userID, csrfToken: csrfToken, authTime: authTime,
            context: AuthenticationContext(acr: acr, amr: amr.split(separator: " ").map(String.init)),
            ipAddress: ipAddress, userAgent: userAgent, createdAt: createdAt, lastSeenAt: lastSeenAt,
            expiresAt: expiresAt, revokedAt: revokedAt, authenticator: authenticator.flatMap(SessionAuthenticator.init(stored:)))
    }
}

/// What other features do to a user's browser sessions inside their own transactions.
struct SQLBrowserSessionRepository: Sendable {
    /// Ends every live session of the user in the tenant for good; how many.
    func revokeAll(tenantID: String, userID: String, at date: Date, on executor: any SQLExecutor) async throws -> Int {
        try await executor.run(
            """
            UPDATE browser_sessions SET revoked_at = \(date)
            WHERE tenant_id = \(tenantID) AND user_id = \(userID) AND revoked_at IS NULL RETURNING id
            """).count
    }
}
