import CountersignCore
import Foundation

/// A device handing over to a new device of the same user (`EnrollmentService.startHandover`):
/// the ticket it asked for, and, once a device enrolled with it, that device and the number it
/// shows until the first device approves.
struct Handover: Sendable, Equatable {
    enum Status: String, Sendable, Codable {
        case waiting
        case awaitingApproval = "awaiting_approval"
        case approved, denied, expired
    }

    var id: String
    var tenantID: String
    var userID: String
    var ticketID: String
    var fromDeviceID: String
    var retire: Bool
    var status: Status
    var newDeviceID: String?
    var matchNumber: String?
    var createdAt: Date
    var expiresAt: Date
    var decidedAt: Date?

    /// How long the new device has to enroll, and then the first device to approve it.
    static let lifetime: TimeInterval = 600
}

/// `device_handovers`.
struct SQLHandoverRepository: Sendable {
    private struct Row: Decodable {
        static let columns = """
            id, tenant_id, user_id, ticket_id, from_device_id, retire, status, new_device_id, match_number, created_at, \
            expires_at, decided_at
            """
        var id: String
        var tenantID: String
        var userID: String
        var ticketID: String
        var fromDeviceID: String
        var retire: Int64
        var status: Handover.Status
        var newDeviceID: String?
        var matchNumber: String?
        var createdAt: Date
        var expiresAt: Date
        var decidedAt: Date?

        enum CodingKeys: String, CodingKey {
            case id, retire, status
            case tenantID = "tenant_id"
            case userID = "user_id"
            case ticketID = "ticket_id"
            case fromDeviceID = "from_device_id"
            case newDeviceID = "new_device_id"
            case matchNumber = "match_number"
            case createdAt = "created_at"
            case expiresAt = "expires_at"
            case decidedAt = "decided_at"
        }

        var handover: Handover {
            Handover(id: id, tenantID: tenantID, userID: userID, ticketID: ticketID, fromDeviceID: fromDeviceID,
                     retire: retire != 0, status: status, newDeviceID: newDeviceID, matchNumber: matchNumber,
                     createdAt: createdAt, expiresAt: expiresAt, decidedAt: decidedAt)
        }
    }

    func insert(_ handover: Handover, on executor: any SQLExecutor) async throws {
        try await executor.run(
            """
            INSERT INTO device_handovers (id, tenant_id, user_id, ticket_id, from_device_id, retire, status, created_at,
                expires_at)
            VALUES (\(handover.id), \(handover.tenantID), \(handover.userID), \(handover.ticketID), \(handover.fromDeviceID),
                \(handover.retire), \(handover.status.rawValue), \(handover.createdAt), \(handover.expiresAt))
            """)
    }

    func find(id: String, on executor: any SQLExecutor) async throws -> Handover? {
        try await executor.first("SELECT \(raw: Row.columns) FROM device_handovers WHERE id = \(id)", as: Row.self)?.handover
    }

    func find(ticketID: String, on executor: any SQLExecutor) async throws -> Handover? {
        try await executor.first(
            "SELECT \(raw: Row.columns) FROM device_handovers WHERE ticket_id = \(ticketID)", as: Row.self)?.handover
    }

    /// Records the device that enrolled with the handover's ticket, and the number it shows; the
    /// first device then has `Handover.lifetime` to approve. False if no device may enroll any more.
    func enrolled(id: String, deviceID: String, number: String, at date: Date, on executor: any SQLExecutor) async throws
        -> Bool {
        !(try await executor.run(
            """
            UPDATE device_handovers
            SET status = 'awaiting_approval', new_device_id = \(deviceID), match_number = \(number),
                expires_at = \(date.addingTimeInterval(Handover.lifetime))
            WHERE id = \(id) AND status = 'waiting' AND expires_at > \(date) RETURNING id
            """)).isEmpty
    }

    /// Closes a handover that awaits approval; false if it was closed already.
    func decide(id: String, _ status: Handover.Status, at date: Date, on executor: any SQLExecutor) async throws -> Bool {
        !(try await executor.run(
            """
            UPDATE device_handovers SET status = \(status.rawValue), decided_at = \(date)
            WHERE id = \(id) AND status IN ('waiting', 'awaiting_approval') RETURNING id
            """)).isEmpty
    }

    /// The open handovers whose time ran out before `date`.
    func expired(before date: Date, limit: Int, on executor: any SQLExecutor) async throws -> [Handover] {
        try await executor.all(
            """
            SELECT \(raw: Row.columns) FROM device_handovers
            WHERE status IN ('waiting', 'awaiting_approval') AND expires_at <= \(date) ORDER BY expires_at LIMIT \(limit)
            """, as: Row.self).map(\.handover)
    }
}
