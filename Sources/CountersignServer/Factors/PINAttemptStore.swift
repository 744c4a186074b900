import CountersignCore
import Foundation

/// What the PIN check (`PINVerifier`) reads and writes, and nothing else: the device's count of
/// wrong PINs, and the removal of the enrollment when the count reaches the tenant's limit.
protocol PINAttemptStore: Sendable {
    /// Clears the device's count of wrong PINs after a right one.
    func clearPINFailures(deviceID: String) async throws
    /// Counts a wrong PIN on the device and records it, in one transaction: at `limit` wrong PINs
    /// in a row the device is deleted with the reason `pin_attempts_exceeded`. Nil if the device
    /// was not active (nothing is recorded).
    func recordWrongPIN(device: Device, tenantID: String, limit: Int, at date: Date) async throws -> PINFailure?
}

/// The PIN check's store on the server's database (SQLite or PostgreSQL).
struct SQLPINAttemptStore: PINAttemptStore {
    let database: any Database
    let devices: any DeviceRepository
    let audit: AuditLog

    func clearPINFailures(deviceID: String) async throws {
        try await devices.resetPINFailures(id: deviceID, on: database)
    }

    func recordWrongPIN(device: Device, tenantID: String, limit: Int, at date: Date) async throws -> PINFailure? {
        try await database.transaction { executor -> PINFailure? in
            let outcome = try await devices.recordPINFailure(id: device.id, limit: limit, at: date, on: executor)
            switch outcome {
            case .wrong(let remaining):
                try await audit.record(
                    "device.pin_failed", actor: "device:\(device.id)", tenantID: tenantID, target: ("device", device.id),
                    details: ["attempts_remaining": String(remaining)], at: date, on: executor)
            case .limitReached:
                try await audit.record(
                    "device.deregistered", actor: "device:\(device.id)", tenantID: tenantID, target: ("device", device.id),
                    details: ["user_id": device.userID, "reason": DeregistrationNotice.Reason.pinAttemptsExceeded.rawValue],
                    at: date, on: executor)
            case nil:
                break
            }
            return outcome
        }
    }
}
