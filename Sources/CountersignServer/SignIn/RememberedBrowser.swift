import CountersignCore
import Crypto
import Foundation

/// A browser the user asked to be remembered after approving a sign-in on their phone
/// (docs/recovery.md §9, "Remembered browsers"). It holds two things: a cookie with a random
/// token (only its hash is stored), and a P-256 key pair made by the browser's WebCrypto as
/// non-extractable and kept in its IndexedDB (only the public key is stored). A later sign-in
/// in that browser skips the push when the cookie names this record, the browser signs a fresh
/// challenge with that key, and the request asks for no more than what the phone gave when the
/// browser was remembered. A copied cookie alone does not pass: the key cannot leave the
/// browser. Each use replaces the cookie's token; the token it replaced, shown again, ends the
/// record (it was copied).
struct RememberedBrowser: Sendable, Equatable {
    /// The most days a tenant or client may remember a browser for.
    static let maximumDays = 90

    let id: String
    let tenantID: String
    let userID: String
    let tokenHash: Data
    /// The token this one replaced at its last use: shown again, the cookie was copied.
    let previousTokenHash: Data?
    let publicKey: ECPublicJWK
    /// What the phone's approval gave when the browser was remembered; a use answers only a
    /// request that this answers (`SignInRequirement.accepts`).
    let context: AuthenticationContext
    /// When the phone approved: the sign-ins it answers keep this `auth_time`.
    let authTime: Date
    /// Where and in what it was remembered: the address and the User-Agent.
    let ipAddress: String?
    let userAgent: String?
    let createdAt: Date
    var lastUsedAt: Date
    let expiresAt: Date

    /// Whether it may answer a sign-in for a client that remembers browsers for `days` days:
    /// it has not expired, and was remembered less than `days` days ago.
    func answers(forDays days: Int, at date: Date) -> Bool {
        days > 0 && date < expiresAt && date < createdAt.addingTimeInterval(TimeInterval(days) * 86_400)
    }

    /// The bytes the browser signs for `challenge`: a label, so that the key signs nothing else
    /// that could be taken for this, and the challenge.
    static func signedBytes(challenge: String) -> Data {
        Data("countersign-remembered-browser:\(challenge)".utf8)
    }

    /// Whether `signature` (WebCrypto's ECDSA with SHA-256: r and s, 32 bytes each) is this
    /// browser's over `challenge`.
    func verifies(_ signature: Data, challenge: String) -> Bool {
        guard let key = try? publicKey.signingKey(),
              let parsed = try? P256.Signing.ECDSASignature(rawRepresentation: signature) else { return false }
        return key.isValidSignature(parsed, for: Self.signedBytes(challenge: challenge))
    }

    /// The public key a browser sent (its WebCrypto JWK export), if it is a P-256 point.
    static func publicKey(fromJWK text: String) -> ECPublicJWK? {
        guard text.utf8.count <= 1024,
              let jwk = try? JSONDecoder().decode(ECPublicJWK.self, from: Data(text.utf8)),
              jwk.kty == "EC", jwk.crv == "P-256", (try? jwk.signingKey()) != nil else { return nil }
        return ECPublicJWK(x: jwk.x, y: jwk.y)
    }
}

/// A browser's name for people, read from its User-Agent: "Chrome on Linux", "Safari on iOS".
/// Nil when neither the browser nor the system is recognised.
enum BrowserName {
    static func describe(_ userAgent: String) -> String? {
        let browsers: [(String, String)] = [
            ("Edg/", "Edge"), ("OPR/", "Opera"), ("Firefox/", "Firefox"), ("FxiOS/", "Firefox"), ("CriOS/", "Chrome"),
            ("Chromium/", "Chromium"), ("Chrome/", "Chrome"), ("Safari/", "Safari"),
        ]
        let systems: [(String, String)] = [
            ("iPhone", "iOS"), ("iPad", "iPadOS"), ("Android", "Android"), ("Windows", "Windows"), ("Mac OS X", "macOS"),
            ("CrOS", "ChromeOS"), ("Linux", "Linux"),
        ]
        let browser = browsers.first { userAgent.contains($0.0) }?.1
        let system = systems.first { userAgent.contains($0.0) }?.1
        switch (browser, system) {
        case let (browser?, system?): return "\(browser) on \(system)"
        case let (browser?, nil): return browser
        case let (nil, system?): return "A browser on \(system)"
        case (nil, nil): return nil
        }
    }
}

/// The remembered browsers on the server's database (SQLite or PostgreSQL).
struct SQLRememberedBrowserRepository: Sendable {
    func insert(_ browser: RememberedBrowser, on executor: any SQLExecutor) async throws {
        try await executor.run(
            """
            INSERT INTO remembered_browsers (id, tenant_id, user_id, token_hash, public_key, acr, amr, auth_time, ip_address,
                user_agent, created_at, last_used_at, expires_at)
            VALUES (\(browser.id), \(browser.tenantID), \(browser.userID), \(browser.tokenHash),
                \(String(decoding: try JSONEncoder().encode(browser.publicKey), as: UTF8.self)), \(browser.context.acr),
                \(browser.context.amr.joined(separator: " ")), \(browser.authTime), \(browser.ipAddress), \(browser.userAgent),
                \(browser.createdAt), \(browser.lastUsedAt), \(browser.expiresAt))
            """)
    }

    /// The record whose cookie token hashes to `tokenHash`, or whose previous token did.
    func find(tokenHash: Data, tenantID: String, on executor: any SQLExecutor) async throws -> RememberedBrowser? {
        try await executor.first(
            """
            SELECT \(raw: Row.columns) FROM remembered_browsers
            WHERE tenant_id = \(tenantID) AND (token_hash = \(tokenHash) OR previous_token_hash = \(tokenHash))
            """, as: Row.self)?.browser()
    }

    func find(id: String, tenantID: String, on executor: any SQLExecutor) async throws -> RememberedBrowser? {
        try await executor.first(
            "SELECT \(raw: Row.columns) FROM remembered_browsers WHERE id = \(id) AND tenant_id = \(tenantID)",
            as: Row.self)?.browser()
    }

    /// The user's remembered browsers not expired at `date`, newest first.
    func list(userID: String, tenantID: String, at date: Date, on executor: any SQLExecutor) async throws -> [RememberedBrowser] {
        try await executor.all(
            """
            SELECT \(raw: Row.columns) FROM remembered_browsers
            WHERE tenant_id = \(tenantID) AND user_id = \(userID) AND expires_at > \(date)
            ORDER BY created_at DESC, id DESC LIMIT 100
            """, as: Row.self).map { try $0.browser() }
    }

    /// Replaces the cookie's token after a use, if `current` is still the token: false when
    /// another use replaced it first.
    func rotate(id: String, from current: Data, to next: Data, at date: Date, on executor: any SQLExecutor) async throws -> Bool {
        !(try await executor.run(
            """
            UPDATE remembered_browsers SET token_hash = \(next), previous_token_hash = \(current), last_used_at = \(date)
            WHERE id = \(id) AND token_hash = \(current) RETURNING id
            """)).isEmpty
    }

    /// Deletes one; false when it was gone.
    @discardableResult
    func delete(id: String, tenantID: String, on executor: any SQLExecutor) async throws -> Bool {
        !(try await executor.run(
            "DELETE FROM remembered_browsers WHERE id = \(id) AND tenant_id = \(tenantID) RETURNING id")).isEmpty
    }

    /// Deletes every remembered browser of the user (disabled or deleted): their ids.
    @discardableResult
    func deleteAll(userID: String, on executor: any SQLExecutor) async throws -> [String] {
        try await executor.all("DELETE FROM remembered_browsers WHERE user_id = \(userID) RETURNING id", column: "id",
                               as: String.self)
    }

    /// After the device `id` was removed: deletes its owner's remembered browsers if the owner
    /// has no active device left. A browser is remembered on the strength of a phone, and goes
    /// with the last one.
    func deleteUnanchored(ofDevice id: String, on executor: any SQLExecutor) async throws {
        try await executor.run(
            """
            DELETE FROM remembered_browsers
            WHERE user_id = \(SQLDeviceRepository.owner(of: id))
                AND NOT \(SQLDeviceRepository.userHasActiveDevice("remembered_browsers.user_id"))
            """)
    }

    func purge(expiredBefore date: Date, on executor: any SQLExecutor) async throws {
        try await executor.run("DELETE FROM remembered_browsers WHERE expires_at < \(date)")
    }

    private struct Row: Decodable {
        static let columns = CodingKeys.allCases.map(\.rawValue).joined(separator: ", ")

        var id: String
        var tenantID: String
        var userID: String
        var tokenHash: Data
        var previousTokenHash: Data?
        var publicKey: String
        var acr: String
        var amr: String
        var authTime: Date
        var ipAddress: String?
        var userAgent: String?
        var createdAt: Date
        var lastUsedAt: Date
        var expiresAt: Date

        enum CodingKeys: String, CodingKey, CaseIterable {
            case id, acr, amr
            case tenantID = "tenant_id"
            case userID = "user_id"
            case tokenHash = "token_hash"
            case previousTokenHash = "previous_token_hash"
            case publicKey = "public_key"
            case authTime = "auth_time"
            case ipAddress = "ip_address"
            case userAgent = "user_agent"
            case createdAt = "created_at"
            case lastUsedAt = "last_used_at"
            case expiresAt = "expires_at"
        }

        func browser() throws -> RememberedBrowser {
            guard let key = try? JSONDecoder().decode(ECPublicJWK.self, from: Data(publicKey.utf8)) else {
                throw StorageError.corrupt("remembered_browsers.public_key of \(id) is not a JWK")
            }
            return RememberedBrowser(
                id: id, tenantID: tenantID, userID: userID, tokenHash: tokenHash, previousTokenHash: previousTokenHash,
                publicKey: key, context: AuthenticationContext(acr: acr, amr: amr.split(separator: " ").map(String.init)),
                authTime: authTime, ipAddress: ipAddress, userAgent: userAgent, createdAt: createdAt, lastUsedAt: lastUsedAt,
                expiresAt: expiresAt)
        }
    }
}
