import Foundation

/// What the user routes (`UserAdminRoutes`) read and write, and nothing else: users, their
/// enrollment tickets and their devices. Each write is one transaction with its audit.
protocol UserAdminStore: Sendable {
    /// The tenant's users after `cursor`, by id.
    /// The tenant's users, or those whose username starts with `prefix` (any case).
    func users(tenantID: String, usernamePrefix prefix: String?, after cursor: String?, limit: Int) async throws -> [User]
    /// The user, if it belongs to the tenant.
    func user(id: String, tenantID: String) async throws -> User?
    /// Adds the user, as of its `createdAt`; `AdminError.conflict` if the tenant has a user of that name.
    func create(_ user: User, actor: String) async throws
    /// Stores the changed user, as of its `updatedAt`, and its code when `userCode` is given (an
    /// inner nil removes it); `AdminError.conflict` if the tenant has another user of that name.
    func update(_ user: User, userCode: UserCode??, actor: String) async throws
    /// Deletes the user with its tickets and devices, each device recorded as deleted.
    func delete(_ user: User, actor: String, at date: Date) async throws

    /// Removes every factor of the user in one transaction: each active device (with the PIN,
    /// biometric and TOTP keys it holds) is recorded as deleted, each passkey as removed, and the
    /// TOTP lock is lifted; recorded as `user.factors_reset`. Returns how many of each went.
    func resetFactors(_ user: User, actor: String, at date: Date) async throws -> (devices: Int, passkeys: Int)

    /// The user's tickets before `cursor`, newest first.
    func tickets(userID: String, before cursor: String?, limit: Int) async throws -> [EnrollmentTicket]
    func ticket(id: String) async throws -> EnrollmentTicket?
    /// Revokes the ticket; false if it was used or revoked already.
    func revoke(_ ticket: EnrollmentTicket, actor: String, at date: Date) async throws -> Bool

    /// The user's devices after `cursor`, by id.
    func devices(userID: String, after cursor: String?, limit: Int) async throws -> [Device]
    /// The tenant's active devices after `cursor`, by id, each with its user's username; only
    /// those whose push channel is in `push`'s state when it is given.
    func devices(tenantID: String, push: DevicePushState?, after cursor: String?, limit: Int) async throws -> [DeviceRecord]
    func device(id: String) async throws -> Device?
    /// Marks the device deleted; false if it was deleted already.
    func delete(_ device: Device, actor: String, at date: Date) async throws -> Bool
}

/// The user routes' store on the server's database (SQLite or PostgreSQL).
struct SQLUserAdminStore: UserAdminStore {
    let database: any Database
    let users: any UserRepository
    let userCodes: any UserCodeRepository
    let tickets: any EnrollmentTicketRepository
    let devices: any DeviceRepository
    let audit: AuditLog
    var passkeys = SQLPasskeyRepository()
    var sessions = SQLBrowserSessionRepository()
    /// User codes are stored as hashes keyed by the master key, never as typed.
    let masterKey: MasterKey

    func users(tenantID: String, usernamePrefix prefix: String?, after cursor: String?, limit: Int) async throws -> [User] {
        guard let prefix else { return try await users.list(tenantID: tenantID, after: cursor, limit: limit, on: database) }
        return try await users.list(tenantID: tenantID, usernamePrefix: prefix, after: cursor, limit: limit, on: database)
    }

    func user(id: String, tenantID: String) async throws -> User? {
        try await users.find(id: id, tenantID: tenantID, on: database)
    }

    func create(_ user: User, actor: String) async throws {
        try await database.transaction { executor in
            do {
                try await users.insert(user, on: executor)
            } catch StorageError.uniqueViolation {
                throw AdminError.conflict("a user named \(user.username) already exists in this tenant")
            }
            try await audit.record(
                "user.created", actor: actor, tenantID: user.tenantID, target: ("user", user.id),
                details: ["username": user.username], at: user.createdAt, on: executor)
        }
    }

    func update(_ user: User, userCode: UserCode??, actor: String) async throws {
        var details = ["username": user.username, "status": user.status.rawValue]
        if let userCode { details["user_code"] = userCode == nil ? "removed" : "set" }
        try await database.transaction { [details] executor in
            let before = try await users.find(id: user.id, tenantID: user.tenantID, on: executor)
            do {
                try await users.update(user, on: executor)
            } catch StorageError.uniqueViolation {
                throw AdminError.conflict("a user named \(user.username) already exists in this tenant")
            }
            if let userCode {
                try await userCodes.set(
                    userID: user.id, hash: userCode.map { UserCode.hash($0.text, userID: user.id, masterKey: masterKey) },
                    on: executor)
            }
            var recorded = details
            if let before, before.status != user.status { recorded["previous_status"] = before.status.rawValue }
            if user.status == .disabled {
                // A disabled user's browser sessions end for good, not for as long as the user
                // is disabled: enabling the user again must not bring back a cookie that may be
                // in other hands.
                let ended = try await sessions.revokeAll(tenantID: user.tenantID, userID: user.id, at: user.updatedAt, on: executor)
                if ended > 0 { recorded["sessions_ended"] = String(ended) }
            }
            try await audit.record(
                "user.updated", actor: actor, tenantID: user.tenantID, target: ("user", user.id),
                details: recorded, at: user.updatedAt, on: executor)
        }
    }

    func delete(_ user: User, actor: String, at date: Date) async throws {
        try await database.transaction { executor in
            var found: [Device] = []
            var page: [Device]
            repeat {
                page = try await devices.list(userID: user.id, after: found.last?.id, limit: 200, on: executor)
                found += page
            } while page.count == 200
            for device in found {
                try await audit.record(
                    "device.deleted", actor: actor, tenantID: user.tenantID, target: ("device", device.id),
                    details: ["user_id": user.id, "reason": "user deleted"], at: date, on: executor)
            }
            try await users.delete(id: user.id, on: executor)
            try await audit.record(
                "user.deleted", actor: actor, tenantID: user.tenantID, target: ("user", user.id),
                details: ["username": user.username, "devices": String(found.count)], at: date, on: executor)
        }
    }

    func resetFactors(_ user: User, actor: String, at date: Date) async throws -> (devices: Int, passkeys: Int) {
        try await database.transaction { executor in
            let removed = try await devices.deleteAll(userID: user.id, at: date, on: executor)
            for id in removed {
                try await audit.record(
                    "device.deleted", actor: actor, tenantID: user.tenantID, target: ("device", id),
                    details: ["user_id": user.id, "reason": "factors reset"], at: date, on: executor)
            }
            let removedPasskeys = try await passkeys.deleteAll(userID: user.id, on: executor)
            for passkey in removedPasskeys {
                try await audit.record(
                    "passkey.removed", actor: actor, tenantID: user.tenantID, target: ("passkey", passkey.id),
                    details: ["user_id": user.id, "name": passkey.name, "reason": "factors reset"],
                    at: date, on: executor)
            }
            try await executor.run("UPDATE users SET totp_failures = 0, totp_locked_until = NULL WHERE id = \(user.id)")
            // No way back in with what may be in other hands: an unused invitation, a browser
            // signed in with a factor that is gone.
            let revokedTickets = try await tickets.revokeUnused(userID: user.id, at: date, on: executor)
            let endedSessions = try await sessions.revokeAll(tenantID: user.tenantID, userID: user.id, at: date, on: executor)
            try await audit.record(
                "user.factors_reset", actor: actor, tenantID: user.tenantID, target: ("user", user.id),
                details: ["username": user.username, "devices": String(removed.count), "passkeys": String(removedPasskeys.count),
                          "tickets": String(revokedTickets), "sessions": String(endedSessions)],
                at: date, on: executor)
            return (removed.count, removedPasskeys.count)
        }
    }

    func tickets(userID: String, before cursor: String?, limit: Int) async throws -> [EnrollmentTicket] {
        try await tickets.list(userID: userID, before: cursor, limit: limit, on: database)
    }

    func ticket(id: String) async throws -> EnrollmentTicket? {
        try await tickets.find(id: id, on: database)
    }

    func revoke(_ ticket: EnrollmentTicket, actor: String, at date: Date) async throws -> Bool {
        try await database.transaction { executor in
            guard try await tickets.revoke(id: ticket.id, at: date, on: executor) else { return false }
            try await audit.record(
                "enrollment_ticket.revoked", actor: actor, tenantID: ticket.tenantID, target: ("user", ticket.userID),
                details: ["ticket_id": ticket.id], at: date, on: executor)
            return true
        }
    }

    func devices(userID: String, after cursor: String?, limit: Int) async throws -> [Device] {
        try await devices.list(userID: userID, after: cursor, limit: limit, on: database)
    }

    func devices(tenantID: String, push: DevicePushState?, after cursor: String?, limit: Int) async throws -> [DeviceRecord] {
        let found = try await devices.list(tenantID: tenantID, push: push, after: cursor, limit: limit, on: database)
        let names = try await users.usernames(ids: Array(Set(found.map(\.userID))), on: database)
        return found.map { DeviceRecord($0, username: names[$0.userID]) }
    }

    func device(id: String) async throws -> Device? {
        try await devices.find(id: id, on: database)
    }

    func delete(_ device: Device, actor: String, at date: Date) async throws -> Bool {
        try await database.transaction { executor in
            guard try await devices.markDeleted(id: device.id, at: date, on: executor) else { return false }
            try await audit.record(
                "device.deleted", actor: actor, tenantID: device.tenantID, target: ("device", device.id),
                details: ["user_id": device.userID], at: date, on: executor)
            return true
        }
    }
}

extension UserAdminStore {
    /// The user the route's `{id}` names in `tenant`; 404 `user <id> was not found` otherwise.
    func user(in context: CountersignRequestContext, tenant: Tenant) async throws -> User {
        let id = try context.parameters.require("id")
        guard let user = try await user(id: id, tenantID: tenant.id) else { throw AdminError.notFound("user \(id)") }
        return user
    }
}
