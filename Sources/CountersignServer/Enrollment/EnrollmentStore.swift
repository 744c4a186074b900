import CountersignCore
import Foundation

/// What enrollment (`EnrollmentService`) reads and writes, and nothing else: tickets, the user a
/// ticket is for, and the one redemption of a ticket for a device. Each write is one transaction
/// with its audit record.
protocol EnrollmentStore: Sendable {
    /// Stores a new ticket by the hash of its secret and records who issued it
    /// (`ticket.createdBy`).
    func issue(_ ticket: EnrollmentTicket, secretHash: Data, at date: Date) async throws
    /// The ticket whose secret hashes to `secretHash`.
    func ticket(secretHash: Data) async throws -> EnrollmentTicket?
    /// The user, if it still exists in the tenant.
    func user(id: String, tenantID: String) async throws -> User?
    /// Redeems the ticket (if the enrollment has one) for the device, stores the device with its sealed TOTP seed (if it has
    /// one) and records the enrollment with `auditDetails`, all in one transaction. Throws
    /// `EnrollmentConflict`, with nothing stored, when the ticket was redeemed or revoked or
    /// expired meanwhile, or the device's signing key is enrolled already.
    func enroll(_ device: Device, totpSeed: Data?, ticketID: String?, auditDetails: [String: String], at date: Date)
        async throws
}

/// Why `EnrollmentStore.enroll` stored nothing.
enum EnrollmentConflict: Error, Equatable {
    case ticketRevoked
    case ticketExpired
    case ticketUsed
    case signingKeyEnrolled
}

/// Enrollment's store on the server's database (SQLite or PostgreSQL).
struct SQLEnrollmentStore: EnrollmentStore {
    let database: any Database
    let tickets: any EnrollmentTicketRepository
    let users: any UserRepository
    let devices: any DeviceRepository
    let audit: AuditLog
    /// Tells the user's other devices that this one was added.
    var notices = SQLSecurityNoticeRepository()

    func issue(_ ticket: EnrollmentTicket, secretHash: Data, at date: Date) async throws {
        try await database.transaction { executor in
            try await tickets.insert(ticket, secretHash: secretHash, on: executor)
            try await audit.record(
                "enrollment_ticket.created", actor: ticket.createdBy, tenantID: ticket.tenantID,
                target: ("user", ticket.userID),
                details: ["ticket_id": ticket.id, "expires_at": Timestamps.format(ticket.expiresAt)],
                at: date, on: executor)
        }
    }

    func ticket(secretHash: Data) async throws -> EnrollmentTicket? {
        try await tickets.find(secretHash: secretHash, on: database)
    }

    func user(id: String, tenantID: String) async throws -> User? {
        try await users.find(id: id, tenantID: tenantID, on: database)
    }

    func enroll(_ device: Device, totpSeed: Data?, ticketID: String?, auditDetails: [String: String], at date: Date)
        async throws {
        try await database.transaction { executor in
            if let ticketID, !(try await tickets.redeem(id: ticketID, deviceID: device.id, at: date, on: executor)) {
                // Another redemption or a revocation came first: say which.
                let current = try await tickets.find(id: ticketID, on: executor)
                if current?.revokedAt != nil { throw EnrollmentConflict.ticketRevoked }
                if current?.usedAt == nil { throw EnrollmentConflict.ticketExpired }
                throw EnrollmentConflict.ticketUsed
            }
            do {
                try await devices.insert(device, totpSeed: totpSeed, on: executor)
            } catch StorageError.uniqueViolation {
                throw EnrollmentConflict.signingKeyEnrolled
            }
            try await audit.record(
                "device.enrolled", actor: "device:\(device.id)", tenantID: device.tenantID, target: ("device", device.id),
                details: auditDetails, at: date, on: executor)
            try await notices.record(
                .deviceAdded, tenantID: device.tenantID, userID: device.userID, subjectID: device.id, subjectName: device.name,
                ipAddress: nil, at: date, on: executor)
        }
    }
}
