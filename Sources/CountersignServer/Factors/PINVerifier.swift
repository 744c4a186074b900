import CountersignCore
import Foundation

/// Checks a PIN proof: a signature by the key the device derives from the PIN. The device
/// cannot tell a right PIN from a wrong one — every PIN gives it a valid key — so the count of
/// wrong PINs lives here: each wrong one is recorded in its own transaction (it stands even
/// though the answer fails), a right one clears the count, and the tenant's limit removes the
/// enrollment.
struct PINVerifier: Sendable {
    let database: any Database
    let devices: any DeviceRepository
    let audit: AuditLog
    let now: @Sendable () -> Date

    func check(_ signature: String, over message: Data, device: Device, tenant: Tenant) async throws {
        guard let key = device.pinKey else { throw FactorError.factorNotEnrolled(.pin) }
                if FactorProof.isValid(signature, of: message, by: try key.signingKey()) {
            if device.pinFailures > 0 { try await devices.resetPINFailures(id: device.id, on: database) }
            return
        }
        let now = now()
        let outcome = try await database.transaction { executor -> PINFailure? in
            let outcome = try await devices.recordPINFailure(
                id: device.id, limit: tenant.policy.pinAttemptLimit, at: now, on: executor)
            switch outcome {
            case .wrong(let remaining):
                try await audit.record(
                    "device.pin_failed", actor: "device:\(device.id)", tenantID: tenant.id, target: ("device", device.id),
                    details: ["attempts_remaining": String(remaining)], at: now, on: executor)
            case .limitReached:
                try await audit.record(
                    "device.deregistered", actor: "device:\(device.id)", tenantID: tenant.id, target: ("device", device.id),
                    details: ["user_id": device.userID, "reason": DeregistrationNotice.Reason.pinAttemptsExceeded.rawValue],
                    at: now, on: executor)
            case nil:
                break
            }
            return outcome
        }
        switch outcome {
        case .wrong(let remaining): throw FactorError.wrongPIN(attemptsRemaining: remaining)
        case .limitReached, nil: throw FactorError.userDeregistered
        }
    }
}
