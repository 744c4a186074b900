import CountersignCore
import Foundation

/// One message of a tenant's mail, kept until it is sent or given up. The row is written in the
/// transaction of what it tells of, rendered once, so every attempt sends the same message.
public struct MailOutboxEntry: Sendable, Equatable {
    public enum Status: String, Sendable, Codable {
        case queued, sending, sent, failed
    }

    /// `mail_…`; also the `Message-ID`'s left half.
    public var id: String
    public var tenantID: String
    public var kind: MailKind
    public var userID: String?
    public var recipient: String
    public var recipientName: String?
    public var sender: String
    public var senderName: String?
    public var subject: String
    public var body: String
    public var status: Status
    public var attempts: Int
    public var nextAttemptAt: Date
    public var lastError: String?
    public var createdAt: Date
    public var updatedAt: Date
    public var sentAt: Date?
}

extension MailOutboxEntry: OutboxRow {
    static let columns = CodingKeys.allCases.map(\.rawValue).joined(separator: ", ")

    enum CodingKeys: String, CodingKey, CaseIterable {
        case id, kind, recipient, sender, subject, body, status, attempts
        case tenantID = "tenant_id"
        case userID = "user_id"
        case recipientName = "recipient_name"
        case senderName = "sender_name"
        case nextAttemptAt = "next_attempt_at"
        case lastError = "last_error"
        case createdAt = "created_at"
        case updatedAt = "updated_at"
        case sentAt = "sent_at"
    }
}

/// What happens to the stored SMTP password when settings are saved.
enum MailPasswordChange: Sendable {
    case keep
    case set(Data)
    case clear
}

/// The storage of `tenant_mail` and `mail_outbox`.
struct SQLMailRepository: Sendable {
    private static let outbox = OutboxRepository(name: "mail_outbox")

    private struct SettingsRow: Decodable {
        var settings: String
        var passwordSealed: Data?
        enum CodingKeys: String, CodingKey {
            case settings
            case passwordSealed = "password_sealed"
        }
    }

    func settings(tenantID: String, on executor: any SQLExecutor) async throws
        -> (settings: MailSettings, sealedPassword: Data?)? {
        guard let row = try await executor.first(
            "SELECT settings, password_sealed FROM tenant_mail WHERE tenant_id = \(tenantID)", as: SettingsRow.self)
        else { return nil }
        guard let settings = try? Timestamps.decoder().decode(MailSettings.self, from: Data(row.settings.utf8)) else {
            throw StorageError.corrupt("tenant_mail \(tenantID)")
        }
        return (settings, row.passwordSealed)
    }

    func save(_ settings: MailSettings, password: MailPasswordChange, on executor: any SQLExecutor) async throws {
        let text = String(decoding: try JSON.encode(settings), as: UTF8.self)
        switch password {
        case .keep:
            try await executor.run(
                """
                INSERT INTO tenant_mail (tenant_id, settings, password_sealed, created_at, updated_at)
                VALUES (\(settings.tenantID), \(text), NULL, \(settings.createdAt), \(settings.updatedAt))
                ON CONFLICT (tenant_id) DO UPDATE SET settings = excluded.settings, updated_at = excluded.updated_at
                """)
        case .set(let sealed):
            try await executor.run(
                """
                INSERT INTO tenant_mail (tenant_id, settings, password_sealed, created_at, updated_at)
                VALUES (\(settings.tenantID), \(text), \(sealed), \(settings.createdAt), \(settings.updatedAt))
                ON CONFLICT (tenant_id) DO UPDATE SET settings = excluded.settings,
                    password_sealed = excluded.password_sealed, updated_at = excluded.updated_at
                """)
        case .clear:
            let none: Data? = nil
            try await executor.run(
                """
                INSERT INTO tenant_mail (tenant_id, settings, password_sealed, created_at, updated_at)
                VALUES (\(settings.tenantID), \(text), \(none), \(settings.createdAt), \(settings.updatedAt))
                ON CONFLICT (tenant_id) DO UPDATE SET settings = excluded.settings,
                    password_sealed = excluded.password_sealed, updated_at = excluded.updated_at
                """)
        }
    }

    func delete(tenantID: String, on executor: any SQLExecutor) async throws -> Bool {
        try await !executor.run("DELETE FROM tenant_mail WHERE tenant_id = \(tenantID) RETURNING tenant_id").isEmpty
    }

    func enqueue(_ entry: MailOutboxEntry, on executor: any SQLExecutor) async throws {
        try await executor.run(
            """
            INSERT INTO mail_outbox (id, tenant_id, kind, user_id, recipient, recipient_name, sender, sender_name, subject,
                body, status, attempts, next_attempt_at, created_at, updated_at)
            VALUES (\(entry.id), \(entry.tenantID), \(entry.kind), \(entry.userID), \(entry.recipient),
                \(entry.recipientName), \(entry.sender), \(entry.senderName), \(entry.subject), \(entry.body),
                \(entry.status), \(entry.attempts), \(entry.nextAttemptAt), \(entry.createdAt), \(entry.updatedAt))
            """)
    }

    func claim(limit: Int, at date: Date, leaseUntil: Date, on executor: any SQLExecutor) async throws -> [MailOutboxEntry] {
        try await Self.outbox.claim(limit: limit, at: date, leaseUntil: leaseUntil, as: MailOutboxEntry.self, on: executor)
    }

    func markSent(id: String, at date: Date, on executor: any SQLExecutor) async throws {
        try await Self.outbox.markSent(ids: [id], at: date, on: executor)
    }

    func reschedule(id: String, next: Date, error: String, at date: Date, on executor: any SQLExecutor) async throws {
        try await Self.outbox.reschedule(id: id, next: next, error: error, at: date, on: executor)
    }

    func markFailed(id: String, error: String, at date: Date, on executor: any SQLExecutor) async throws {
        try await Self.outbox.close(id: id, status: MailOutboxEntry.Status.failed, error: error, at: date, on: executor)
    }

    /// A tenant's mail, newest first, older than `cursor` (an id) if given.
    func recent(tenantID: String, before cursor: String?, limit: Int, on executor: any SQLExecutor) async throws
        -> [MailOutboxEntry] {
        let statement: SQLStatement = if let cursor {
            """
            SELECT \(raw: MailOutboxEntry.columns) FROM mail_outbox
            WHERE tenant_id = \(tenantID) AND id < \(cursor) ORDER BY id DESC LIMIT \(limit)
            """
        } else {
            """
            SELECT \(raw: MailOutboxEntry.columns) FROM mail_outbox
            WHERE tenant_id = \(tenantID) ORDER BY id DESC LIMIT \(limit)
            """
        }
        return try await executor.all(statement, as: MailOutboxEntry.self)
    }
}
