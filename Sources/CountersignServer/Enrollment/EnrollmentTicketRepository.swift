import Foundation

public protocol EnrollmentTicketRepository: Sendable {
    func insert(_ ticket: EnrollmentTicket, secretHash: Data, on executor: any SQLExecutor) async throws
    func find(secretHash: Data, on executor: any SQLExecutor) async throws -> EnrollmentTicket?
    func find(id: String, on executor: any SQLExecutor) async throws -> EnrollmentTicket?
    /// A user's tickets, newest first.
    func list(userID: String, before cursor: String?, limit: Int, on executor: any SQLExecutor) async throws -> [EnrollmentTicket]
    /// Revokes an unused, unrevoked ticket; false if it was used or revoked already.
    func revoke(id: String, at date: Date, on executor: any SQLExecutor) async throws -> Bool
    /// Revokes the user's tickets not yet used nor revoked; how many.
    func revokeUnused(userID: String, at date: Date, on executor: any SQLExecutor) async throws -> Int
    /// Marks an unused, unexpired ticket used, atomically; false if another redemption won or
    /// the ticket expired in between.
    func redeem(id: String, deviceID: String, at date: Date, on executor: any SQLExecutor) async throws -> Bool
}

public struct SQLEnrollmentTicketRepository: EnrollmentTicketRepository {
    public init() {}

    private typealias Row = EnrollmentTicketRow

    public func insert(_ ticket: EnrollmentTicket, secretHash: Data, on executor: any SQLExecutor) async throws {
        try await executor.run(
            """
            INSERT INTO enrollment_tickets (id, tenant_id, user_id, secret_hash, created_by, created_at, expires_at)
            VALUES (\(ticket.id), \(ticket.tenantID), \(ticket.userID), \(secretHash), \(ticket.createdBy),
                \(ticket.createdAt), \(ticket.expiresAt))
            """)
    }

    public func find(secretHash: Data, on executor: any SQLExecutor) async throws -> EnrollmentTicket? {
        try await executor.first(
            "SELECT \(raw: Row.columns) FROM enrollment_tickets WHERE secret_hash = \(secretHash)", as: Row.self
        )?.ticket()
    }

    public func find(id: String, on executor: any SQLExecutor) async throws -> EnrollmentTicket? {
        try await executor.first("SELECT \(raw: Row.columns) FROM enrollment_tickets WHERE id = \(id)", as: Row.self)?
            .ticket()
    }

    public func list(userID: String, before cursor: String?, limit: Int, on executor: any SQLExecutor) async throws -> [EnrollmentTicket] {
        try await executor.all(
            """
            SELECT \(raw: Row.columns) FROM enrollment_tickets
            WHERE user_id = \(userID) AND id < \(cursor ?? "~") ORDER BY id DESC LIMIT \(limit)
            """, as: Row.self
        ).map { $0.ticket() }
    }

    public func revoke(id: String, at date: Date, on executor: any SQLExecutor) async throws -> Bool {
        !(try await executor.run(
            """
            UPDATE enrollment_tickets SET revoked_at = \(date)
            WHERE id = \(id) AND used_at IS NULL AND revoked_at IS NULL RETURNING id
            """)).isEmpty
    }

    public func redeem(id: String, deviceID: String, at date: Date, on executor: any SQLExecutor) async throws -> Bool {
        !(try await executor.run(
            """
            UPDATE enrollment_tickets SET used_at = \(date), device_id = \(deviceID)
            WHERE id = \(id) AND used_at IS NULL AND revoked_at IS NULL AND expires_at > \(date) RETURNING id
            """)).isEmpty
    }

    public func revokeUnused(userID: String, at date: Date, on executor: any SQLExecutor) async throws -> Int {
        try await executor.run(
            """
            UPDATE enrollment_tickets SET revoked_at = \(date)
            WHERE user_id = \(userID) AND used_at IS NULL AND revoked_at IS NULL RETURNING id
            """).count
    }
}

/// A row of `enrollment_tickets` as stored, decoded by column name. The secret hash is not
/// among its columns.
struct EnrollmentTicketRow: Decodable {
    /// The columns `CodingKeys` names, for `SELECT`.
    static let columns = CodingKeys.allCases.map(\.rawValue).joined(separator: ", ")

    var id: String
    var tenantID: String
    var userID: String
    var createdBy: String
    var createdAt: Date
    var expiresAt: Date
    var usedAt: Date?
    var revokedAt: Date?
    var deviceID: String?

    /// The columns are the API's member names.
    typealias CodingKeys = EnrollmentTicket.CodingKeys

    func ticket() -> EnrollmentTicket {
        EnrollmentTicket(
            id: id, tenantID: tenantID, userID: userID, createdBy: createdBy, createdAt: createdAt,
            expiresAt: expiresAt, usedAt: usedAt, revokedAt: revokedAt, deviceID: deviceID)
    }
}
