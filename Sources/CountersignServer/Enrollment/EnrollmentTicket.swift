import Foundation

/// A one-time permission for one user to enroll one device. The secret (`cst_…`) is in the
/// enrollment URI only; the server keeps its SHA-256.
public struct EnrollmentTicket: Sendable, Equatable, Codable {
    public var id: String
    public var tenantID: String
    public var userID: String
    public var createdBy: String
    public var createdAt: Date
    public var expiresAt: Date
    public var usedAt: Date?
    public var revokedAt: Date?
    public var deviceID: String?

    public static let secretPrefix = "cst_"
    public static let defaultLifetime: TimeInterval = 600

    enum CodingKeys: String, CodingKey {
        case id
        case tenantID = "tenant_id"
        case userID = "user_id"
        case createdBy = "created_by"
        case createdAt = "created_at"
        case expiresAt = "expires_at"
        case usedAt = "used_at"
        case revokedAt = "revoked_at"
        case deviceID = "device_id"
    }
}

public protocol EnrollmentTicketRepository: Sendable {
    func insert(_ ticket: EnrollmentTicket, secretHash: Data, on executor: any SQLExecutor) async throws
    func find(secretHash: Data, on executor: any SQLExecutor) async throws -> EnrollmentTicket?
    func find(id: String, on executor: any SQLExecutor) async throws -> EnrollmentTicket?
    /// A user's tickets, newest first.
    func list(userID: String, before cursor: String?, limit: Int, on executor: any SQLExecutor) async throws -> [EnrollmentTicket]
    /// Revokes an unused, unrevoked ticket; false if it was used or revoked already.
    func revoke(id: String, at date: Date, on executor: any SQLExecutor) async throws -> Bool
    /// Marks an unused, unexpired ticket used, atomically; false if another redemption won or
    /// the ticket expired in between.
    func redeem(id: String, deviceID: String, at date: Date, on executor: any SQLExecutor) async throws -> Bool
}

public struct SQLEnrollmentTicketRepository: EnrollmentTicketRepository {
    public init() {}

    public func insert(_ ticket: EnrollmentTicket, secretHash: Data, on executor: any SQLExecutor) async throws {
        try await executor.run(
            """
            INSERT INTO enrollment_tickets (id, tenant_id, user_id, secret_hash, created_by, created_at, expires_at)
            VALUES (\(ticket.id), \(ticket.tenantID), \(ticket.userID), \(secretHash), \(ticket.createdBy), \(ticket.createdAt), \(ticket.expiresAt))
            """)
    }

    private static let columns = "id, tenant_id, user_id, created_by, created_at, expires_at, used_at, revoked_at, device_id"

    public func find(secretHash: Data, on executor: any SQLExecutor) async throws -> EnrollmentTicket? {
        try await executor.run("SELECT \(raw: Self.columns) FROM enrollment_tickets WHERE secret_hash = \(secretHash)").first
            .map(Self.decode)
    }

    public func find(id: String, on executor: any SQLExecutor) async throws -> EnrollmentTicket? {
        try await executor.run("SELECT \(raw: Self.columns) FROM enrollment_tickets WHERE id = \(id)").first.map(Self.decode)
    }

    public func list(userID: String, before cursor: String?, limit: Int, on executor: any SQLExecutor) async throws -> [EnrollmentTicket] {
        try await executor.run(
            "SELECT \(raw: Self.columns) FROM enrollment_tickets WHERE user_id = \(userID) AND id < \(cursor ?? "~") ORDER BY id DESC LIMIT \(Int64(limit))").map(Self.decode)
    }

    public func revoke(id: String, at date: Date, on executor: any SQLExecutor) async throws -> Bool {
        !(try await executor.run(
            "UPDATE enrollment_tickets SET revoked_at = \(date) WHERE id = \(id) AND used_at IS NULL AND revoked_at IS NULL RETURNING id")).isEmpty
    }

    static func decode(_ row: SQLRow) throws -> EnrollmentTicket {
        EnrollmentTicket(
            id: try row.string("id"), tenantID: try row.string("tenant_id"), userID: try row.string("user_id"),
            createdBy: try row.string("created_by"), createdAt: try row.date("created_at"),
            expiresAt: try row.date("expires_at"), usedAt: try row.optionalDate("used_at"),
            revokedAt: try row.optionalDate("revoked_at"), deviceID: try row.optionalString("device_id"))
    }

    public func redeem(id: String, deviceID: String, at date: Date, on executor: any SQLExecutor) async throws -> Bool {
        !(try await executor.run(
            """
            UPDATE enrollment_tickets SET used_at = \(date), device_id = \(deviceID)
            WHERE id = \(id) AND used_at IS NULL AND revoked_at IS NULL AND expires_at > \(date) RETURNING id
            """)).isEmpty
    }
}
