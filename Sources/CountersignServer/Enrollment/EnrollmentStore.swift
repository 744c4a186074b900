import CountersignCore
import Foundation

/// What enrollment (`EnrollmentService`) reads and writes, and nothing else: tickets, the user a
/// ticket is for, and the one redemption of a ticket for a device. Each write is one transaction
/// with its audit record.
protocol EnrollmentStore: Sendable {
    /// Stores a new ticket by the hash of its secret and records who issued it
    /// (`ticket.createdBy`).
    /// Stores the ticket and audits it; with an `invitation` link, queues the invitation's mail
    /// to the user in the same transaction and returns its id. Throws `AdminError.conflict`, with
    /// nothing stored, when the tenant has no mail settings or the user's address cannot be mailed.
    func issue(_ ticket: EnrollmentTicket, secretHash: Data, invitation: String?, at date: Date) async throws -> String?
    /// The ticket whose secret hashes to `secretHash`.
    func ticket(secretHash: Data) async throws -> EnrollmentTicket?
    /// The user, if it still exists in the tenant.
    func user(id: String, tenantID: String) async throws -> User?
    /// Redeems the ticket (if the enrollment has one) for the device, stores the device with its sealed TOTP seed (if it has
    /// one) and records the enrollment with `auditDetails`, all in one transaction. Throws
    /// `EnrollmentConflict`, with nothing stored, when the ticket was redeemed or revoked or
    /// expired meanwhile, or the device's signing key is enrolled already.
    /// With `handover`, the device is the pending one of that handover: the handover records it
    /// and the number it shows, and no notice is made until the handover is approved.
    func enroll(_ device: Device, totpSeed: Data?, ticketID: String?, handover: (id: String, number: String)?,
                auditDetails: [String: String], at date: Date) async throws

    /// Stores the handover with its ticket, and audits it, in one transaction.
    func startHandover(_ handover: Handover, ticket: EnrollmentTicket, secretHash: Data, at date: Date) async throws
    func handover(id: String) async throws -> Handover?
    func handover(ticketID: String) async throws -> Handover?
    /// Approves: the new device becomes active and is announced to the user's other devices
    /// (not pushed to the one that approved), and the first device is removed if it asked to
    /// be. False if the handover was closed meanwhile.
    func approve(_ handover: Handover, at date: Date) async throws -> Bool
    /// Refuses (`denied`) or ends (`expired`) a handover: its new device, if any, is removed.
    /// False if it was closed meanwhile.
    func close(_ handover: Handover, as status: Handover.Status, actor: String, at date: Date) async throws -> Bool
    /// Open handovers whose time ran out before `date`.
    func expiredHandovers(before date: Date) async throws -> [Handover]
    /// A device, whatever its state.
    func device(id: String) async throws -> Device?
}

/// Why `EnrollmentStore.enroll` stored nothing.
enum EnrollmentConflict: Error, Equatable {
    case ticketRevoked
    case ticketExpired
    case ticketUsed
    case signingKeyEnrolled
    /// The handover's time ran out, or it was closed, before the device enrolled.
    case handoverClosed
}

/// Enrollment's store on the server's database (SQLite or PostgreSQL).
struct SQLEnrollmentStore: EnrollmentStore {
    let database: any Database
    let tickets: any EnrollmentTicketRepository
    let users: any UserRepository
    let devices: any DeviceRepository
    let audit: AuditLog
    /// Tells the user's other devices that this one was added.
    let notices: SQLSecurityNoticeRepository
    var handovers = SQLHandoverRepository()
    /// Wakes the mail dispatcher when an invitation is queued.
    var mailWakeup: PushWakeup? = nil

    func issue(_ ticket: EnrollmentTicket, secretHash: Data, invitation: String?, at date: Date) async throws -> String? {
        try await database.transaction { executor in
            try await tickets.insert(ticket, secretHash: secretHash, on: executor)
            var mailID: String?
            if let invitation {
                mailID = try await TenantMail.queue(
                    .invitation, toUser: ticket.userID, tenantID: ticket.tenantID,
                    values: ["invitation_url": invitation, "expires": MailText.time(ticket.expiresAt)], at: date,
                    wakeup: mailWakeup, on: executor)
                guard mailID != nil else {
                    throw AdminError.conflict("the invitation cannot be mailed: this tenant has no mail settings (PUT …/mail), or the user has no address mail can be sent to")
                }
            }
            var details = ["ticket_id": ticket.id, "expires_at": Timestamps.format(ticket.expiresAt)]
            details["mail_id"] = mailID
            try await audit.record(
                "enrollment_ticket.created", actor: ticket.createdBy, tenantID: ticket.tenantID,
                target: ("user", ticket.userID), details: details, at: date, on: executor)
            return mailID
        }
    }

    func ticket(secretHash: Data) async throws -> EnrollmentTicket? {
        try await tickets.find(secretHash: secretHash, on: database)
    }

    func user(id: String, tenantID: String) async throws -> User? {
        try await users.find(id: id, tenantID: tenantID, on: database)
    }

    func enroll(_ device: Device, totpSeed: Data?, ticketID: String?, handover: (id: String, number: String)?,
                auditDetails: [String: String], at date: Date) async throws {
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
            if let handover {
                guard try await handovers.enrolled(
                    id: handover.id, deviceID: device.id, number: handover.number, at: date, on: executor) else {
                    throw EnrollmentConflict.handoverClosed
                }
            } else {
                try await notices.record(
                    .deviceAdded, tenantID: device.tenantID, userID: device.userID, subjectID: device.id,
                    subjectName: device.name, ipAddress: nil, at: date, on: executor)
            }
        }
    }

    func startHandover(_ handover: Handover, ticket: EnrollmentTicket, secretHash: Data, at date: Date) async throws {
        try await database.transaction { executor in
            try await tickets.insert(ticket, secretHash: secretHash, on: executor)
            try await handovers.insert(handover, on: executor)
            try await audit.record(
                "device.handover_started", actor: "device:\(handover.fromDeviceID)", tenantID: handover.tenantID,
                target: ("device", handover.fromDeviceID),
                details: ["handover_id": handover.id, "ticket_id": ticket.id, "user_id": handover.userID,
                          "retire": String(handover.retire), "expires_at": Timestamps.format(handover.expiresAt)],
                at: date, on: executor)
        }
    }

    func handover(id: String) async throws -> Handover? {
        try await handovers.find(id: id, on: database)
    }

    func handover(ticketID: String) async throws -> Handover? {
        try await handovers.find(ticketID: ticketID, on: database)
    }

    func approve(_ handover: Handover, at date: Date) async throws -> Bool {
        guard let newDeviceID = handover.newDeviceID else { return false }
        return try await database.transaction { executor in
            guard try await handovers.decide(id: handover.id, .approved, at: date, on: executor),
                  try await devices.activate(id: newDeviceID, at: date, on: executor) else {
                return false
            }
            let actor = "device:\(handover.fromDeviceID)"
            try await audit.record(
                "device.handover_approved", actor: actor, tenantID: handover.tenantID, target: ("device", newDeviceID),
                details: ["handover_id": handover.id, "user_id": handover.userID, "vouched_by": handover.fromDeviceID],
                at: date, on: executor)
            let name = try await devices.find(id: newDeviceID, on: executor)?.name
            try await notices.record(
                .deviceAdded, tenantID: handover.tenantID, userID: handover.userID, subjectID: newDeviceID, subjectName: name,
                ipAddress: nil, quiet: handover.fromDeviceID, at: date, on: executor)
            if handover.retire, try await devices.markDeleted(id: handover.fromDeviceID, at: date, on: executor) {
                try await audit.record(
                    "device.deleted", actor: actor, tenantID: handover.tenantID, target: ("device", handover.fromDeviceID),
                    details: ["user_id": handover.userID, "reason": "handed over to \(newDeviceID)"], at: date, on: executor)
            }
            return true
        }
    }

    func close(_ handover: Handover, as status: Handover.Status, actor: String, at date: Date) async throws -> Bool {
        try await database.transaction { executor in
            guard try await handovers.decide(id: handover.id, status, at: date, on: executor) else { return false }
            // The URI can no longer enroll a device.
            _ = try await tickets.revoke(id: handover.ticketID, at: date, on: executor)
            var details = ["handover_id": handover.id, "user_id": handover.userID]
            if let newDeviceID = handover.newDeviceID,
               try await devices.markDeleted(id: newDeviceID, at: date, on: executor) {
                details["removed_device"] = newDeviceID
            }
            try await audit.record(
                status == .denied ? "device.handover_denied" : "device.handover_expired", actor: actor,
                tenantID: handover.tenantID, target: ("device", handover.fromDeviceID), details: details, at: date,
                on: executor)
            return true
        }
    }

    func expiredHandovers(before date: Date) async throws -> [Handover] {
        try await handovers.expired(before: date, limit: 100, on: database)
    }

    func device(id: String) async throws -> Device? {
        try await devices.find(id: id, on: database)
    }
}
