import CountersignCore
import Foundation

/// What checking a one-time code (`TOTPVerification`) reads and writes, and nothing else: the
/// sealed seeds of the user's devices, the last step each accepted, and the user's count of
/// wrong codes. Each write of a count is one transaction with its audit record.
protocol TOTPVerificationStore: Sendable {
    /// The sealed TOTP seed and last accepted step of each of the user's active devices that has one.
    func seeds(userID: String) async throws -> [(deviceID: String, sealed: Data, lastStep: Int64?)]
    /// Records `step` as used on the device, if no later or equal step was; false otherwise.
    func acceptStep(deviceID: String, step: Int64) async throws -> Bool
    /// Clears the user's count of wrong codes and records the code `clientID` had checked, in one
    /// transaction.
    func recordVerified(userID: String, deviceID: String, clientID: String, tenantID: String, at date: Date) async throws
    /// Counts a wrong code and records it, in one transaction; at `limit` wrong codes in a row
    /// codes are locked until `lockUntil`. Returns the lock's end when this failure set it.
    func recordWrongCode(userID: String, clientID: String, tenantID: String, limit: Int, lockUntil: Date, at date: Date)
        async throws -> Date?
}

/// The one-time code check's store on the server's database (SQLite or PostgreSQL).
struct SQLTOTPVerificationStore: TOTPVerificationStore {
    let database: any Database
    let devices: any DeviceRepository
    let users: any UserRepository
    let audit: AuditLog

    func seeds(userID: String) async throws -> [(deviceID: String, sealed: Data, lastStep: Int64?)] {
        try await devices.totpSeeds(userID: userID, on: database)
    }

    func acceptStep(deviceID: String, step: Int64) async throws -> Bool {
        try await devices.acceptTOTPStep(id: deviceID, step: step, on: database)
    }

    func recordVerified(userID: String, deviceID: String, clientID: String, tenantID: String, at date: Date) async throws {
        try await database.transaction { executor in
            try await users.resetTOTPFailures(userID: userID, on: executor)
            try await audit.record(
                "totp.verified", actor: "client:\(clientID)", tenantID: tenantID, target: ("user", userID),
                details: ["device_id": deviceID], at: date, on: executor)
        }
    }

    func recordWrongCode(userID: String, clientID: String, tenantID: String, limit: Int, lockUntil: Date, at date: Date)
        async throws -> Date? {
        try await database.transaction { executor in
            let locked = try await users.recordTOTPFailure(userID: userID, limit: limit, lockUntil: lockUntil, on: executor)
            try await audit.record(
                "totp.failed", actor: "client:\(clientID)", tenantID: tenantID, target: ("user", userID),
                details: locked.map { ["locked_until": Timestamps.format($0)] } ?? [:], at: date, on: executor)
            return locked
        }
    }
}
