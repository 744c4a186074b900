import CountersignCore
import Foundation

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
