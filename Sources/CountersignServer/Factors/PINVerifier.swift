import CountersignCore
import Foundation

/// Checks a PIN proof: a signature by the key the device derives from the PIN. The device
/// cannot tell a right PIN from a wrong one — every PIN gives it a valid key — so the count of
/// wrong PINs lives here: each wrong one is recorded in its own transaction (it stands even
/// though the answer fails), a right one clears the count, and the tenant's limit removes the
/// enrollment.
struct PINVerifier: Sendable {
    let store: any PINAttemptStore
    let now: @Sendable () -> Date

    func check(_ signature: String, over message: Data, device: Device, tenant: Tenant) async throws {
        guard let key = device.pinKey else { throw FactorError.factorNotEnrolled(.pin) }
        if FactorProof.isValid(signature, of: message, by: try key.signingKey()) {
            if device.pinFailures > 0 { try await store.clearPINFailures(deviceID: device.id) }
            return
        }
        let outcome = try await store.recordWrongPIN(
            device: device, tenantID: tenant.id, limit: tenant.policy.pinAttemptLimit, at: now())
        switch outcome {
        case .wrong(let remaining): throw FactorError.wrongPIN(attemptsRemaining: remaining)
        case .limitReached, nil: throw FactorError.userDeregistered
        }
    }
}
