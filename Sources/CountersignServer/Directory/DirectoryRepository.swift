import CountersignCore
import Foundation

/// What the last sync of a directory did, or why it failed: kept on the directory's row for the
/// console and `GET …/directory/sync`.
public struct DirectorySyncRecord: Sendable, Equatable, Codable {
    public var at: Date
    /// Who asked: `schedule`, or the admin key or console user.
    public var actor: String
    /// What it did, when it ran to the end.
    public var summary: DirectorySyncSummary?
    /// Why nothing was changed, when it failed.
    public var error: String?

    enum CodingKeys: String, CodingKey {
        case at, actor, summary, error
    }
}

/// The storage of `directories`.
protocol DirectoryRepository: Sendable {
    func find(tenantID: String, on executor: any SQLExecutor) async throws -> (directory: Directory, sealedPassword: Data)?
    /// Stores the tenant's directory, replacing the one it had; the sealed password when given.
    func save(_ directory: Directory, sealedPassword: Data?, nextSyncAt: Date?, on executor: any SQLExecutor) async throws
    /// Deletes the tenant's directory; false when it had none.
    func delete(tenantID: String, on executor: any SQLExecutor) async throws -> Bool
    /// The last sync's record, if any.
    func lastSync(tenantID: String, on executor: any SQLExecutor) async throws -> DirectorySyncRecord?
    /// Takes the tenant's sync lease until `until` if no node holds it at `now`; with `due`, only
    /// when a scheduled sync is due by `now`. False when another node holds it (or nothing is due).
    func acquireLease(tenantID: String, until: Date, now: Date, due: Bool, on executor: any SQLExecutor) async throws -> Bool
    /// Gives the lease back, records what the sync did and when the next one is due.
    func finishSync(tenantID: String, record: DirectorySyncRecord, nextSyncAt: Date?, on executor: any SQLExecutor) async throws
    /// The tenants whose scheduled sync is due by `now` and whose lease is free.
    func due(now: Date, limit: Int, on executor: any SQLExecutor) async throws -> [String]
}

struct SQLDirectoryRepository: DirectoryRepository {
    private struct Row: Decodable {
        var settings: String
        var bindPasswordSealed: Data
        enum CodingKeys: String, CodingKey {
            case settings
            case bindPasswordSealed = "bind_password_sealed"
        }
    }

    func find(tenantID: String, on executor: any SQLExecutor) async throws -> (directory: Directory, sealedPassword: Data)? {
        guard let row = try await executor.first(
            "SELECT settings, bind_password_sealed FROM directories WHERE tenant_id = \(tenantID)", as: Row.self)
        else { return nil }
        guard let directory = try? Timestamps.decoder().decode(Directory.self, from: Data(row.settings.utf8)) else {
            throw StorageError.corrupt("directories \(tenantID)")
        }
        return (directory, row.bindPasswordSealed)
    }

    func save(_ directory: Directory, sealedPassword: Data?, nextSyncAt: Date?, on executor: any SQLExecutor) async throws {
        let settings = String(decoding: try JSON.encode(directory), as: UTF8.self)
        if let sealedPassword {
            try await executor.run(
                """
                INSERT INTO directories (tenant_id, settings, bind_password_sealed, next_sync_at, created_at, updated_at)
                VALUES (\(directory.tenantID), \(settings), \(sealedPassword), \(nextSyncAt), \(directory.createdAt),
                    \(directory.updatedAt))
                ON CONFLICT (tenant_id) DO UPDATE SET settings = excluded.settings,
                    bind_password_sealed = excluded.bind_password_sealed, next_sync_at = excluded.next_sync_at,
                    updated_at = excluded.updated_at
                """)
        } else {
            try await executor.run(
                """
                UPDATE directories SET settings = \(settings), next_sync_at = \(nextSyncAt), updated_at = \(directory.updatedAt)
                WHERE tenant_id = \(directory.tenantID)
                """)
        }
    }

    func delete(tenantID: String, on executor: any SQLExecutor) async throws -> Bool {
        try await !executor.run("DELETE FROM directories WHERE tenant_id = \(tenantID) RETURNING tenant_id").isEmpty
    }

    func lastSync(tenantID: String, on executor: any SQLExecutor) async throws -> DirectorySyncRecord? {
        guard let text = try await executor.first(
            "SELECT last_sync FROM directories WHERE tenant_id = \(tenantID)", column: "last_sync", as: String?.self),
            let text else { return nil }
        return try? Timestamps.decoder().decode(DirectorySyncRecord.self, from: Data(text.utf8))
    }

    func acquireLease(tenantID: String, until: Date, now: Date, due: Bool, on executor: any SQLExecutor) async throws -> Bool {
        let dueOnly = due ? 1 : 0
        return try await !executor.run(
            """
            UPDATE directories SET sync_lease_until = \(until)
            WHERE tenant_id = \(tenantID) AND (sync_lease_until IS NULL OR sync_lease_until <= \(now))
                AND (\(dueOnly) = 0 OR (next_sync_at IS NOT NULL AND next_sync_at <= \(now)))
            RETURNING tenant_id
            """).isEmpty
    }

    func finishSync(tenantID: String, record: DirectorySyncRecord, nextSyncAt: Date?, on executor: any SQLExecutor) async throws {
        let text = String(decoding: try JSON.encode(record), as: UTF8.self)
        try await executor.run(
            """
            UPDATE directories SET sync_lease_until = NULL, last_sync = \(text), next_sync_at = \(nextSyncAt)
            WHERE tenant_id = \(tenantID)
            """)
    }

    func due(now: Date, limit: Int, on executor: any SQLExecutor) async throws -> [String] {
        try await executor.all(
            """
            SELECT tenant_id FROM directories
            WHERE next_sync_at IS NOT NULL AND next_sync_at <= \(now) AND (sync_lease_until IS NULL OR sync_lease_until <= \(now))
            ORDER BY next_sync_at LIMIT \(limit)
            """, column: "tenant_id", as: String.self)
    }
}

/// Whether a tenant has a directory: what `directory_password` on a client or RADIUS client needs.
enum DirectoryPresence {
    static func configured(tenantID: String, on executor: any SQLExecutor) async throws -> Bool {
        !(try await executor.run("SELECT 1 AS one FROM directories WHERE tenant_id = \(tenantID)")).isEmpty
    }

    /// Refuses `directory_password: true` for a tenant without a directory to check passwords
    /// against. (A directory removed later leaves such a client's sign-ins and logins refused,
    /// not open.)
    static func check(_ directoryPassword: Bool?, present: () async throws -> Bool) async throws {
        guard directoryPassword == true, try await !present() else { return }
        throw AdminError.invalidField(
            "directory_password", "needs the tenant's directory: set it first with PUT /admin/v1/tenants/{tenant}/directory")
    }
}
