import CountersignCore
import Crypto
import Foundation
import Synchronization
import Testing
@testable import CountersignServer

/// The PIN check alone, on a store held in memory: no server, no database. The flow reads and
/// writes only what `PINAttemptStore` declares, so this is all it needs.
@Suite("PIN check on an in-memory store")
struct FactorFlowStoreTests {
    /// `PINAttemptStore` in memory: the count of wrong PINs per device, whether the device is
    /// still active, and the audit events the SQL store would record.
    final class MemoryStore: PINAttemptStore {
        struct State {
            var failures: [String: Int] = [:]
            var deleted: Set<String> = []
            var events: [String] = []
            var clears = 0
        }

        let state = Mutex(State())

        func clearPINFailures(deviceID: String) async throws {
            state.withLock { state in
                state.failures[deviceID] = 0
                state.clears += 1
            }
        }

        func recordWrongPIN(device: Device, tenantID: String, limit: Int, at date: Date) async throws -> PINFailure? {
            state.withLock { state in
                guard !state.deleted.contains(device.id) else { return nil }
                let failures = state.failures[device.id, default: 0] + 1
                state.failures[device.id] = failures
                guard failures >= limit else {
                    state.events.append("device.pin_failed")
                    return .wrong(attemptsRemaining: limit - failures)
                }
                state.deleted.insert(device.id)
                state.events.append("device.deregistered")
                return .limitReached
            }
        }
    }

    let now = Date(timeIntervalSince1970: 1_790_000_000)
    let pinKey = P256.Signing.PrivateKey()
    let message = FactorProof.message(factor: .pin, response: "response.jws")

    private func tenant(limit: Int) -> Tenant {
        var tenant = Tenant(
            id: "ten_one", slug: "one", displayName: "One", isDefault: true, signingKey: ECPublicJWK(x: "x", y: "y"),
            createdAt: Date(timeIntervalSince1970: 0), updatedAt: Date(timeIntervalSince1970: 0))
        tenant.policy.pinAttemptLimit = limit
        return tenant
    }

    private func device(pinFailures: Int = 0, withPIN: Bool = true) -> Device {
        var device = Device(
            id: "dev_one", tenantID: "ten_one", userID: "usr_one", name: "Phone", platform: .ios,
            signingKey: ECPublicJWK(P256.Signing.PrivateKey().publicKey),
            encryptionKey: ECPublicJWK(P256.KeyAgreement.PrivateKey().publicKey),
            push: nil, pushTokenValid: true, status: .active, createdAt: now, updatedAt: now)
        device.pinKey = withPIN ? ECPublicJWK(pinKey.publicKey) : nil
        device.pinFailures = pinFailures
        return device
    }

    private func verifier(_ store: MemoryStore) -> PINVerifier {
        let now = now
        return PINVerifier(store: store, now: { now })
    }

    private func signature(by key: P256.Signing.PrivateKey) throws -> String {
        try key.signature(for: message).rawRepresentation.base64URLEncodedString
    }

    @Test("wrong PINs count down to the tenant's limit, the last removes the enrollment, and later ones record nothing")
    func attemptLimit() async throws {
        let store = MemoryStore()
        let flow = verifier(store)
        let wrong = try signature(by: P256.Signing.PrivateKey())
        let tenant = tenant(limit: 3)

        await #expect(throws: FactorError.wrongPIN(attemptsRemaining: 2)) {
            try await flow.check(wrong, over: message, device: device(), tenant: tenant)
        }
        await #expect(throws: FactorError.wrongPIN(attemptsRemaining: 1)) {
            try await flow.check(wrong, over: message, device: device(pinFailures: 1), tenant: tenant)
        }
        await #expect(throws: FactorError.userDeregistered) {
            try await flow.check(wrong, over: message, device: device(pinFailures: 2), tenant: tenant)
        }
        await #expect(throws: FactorError.userDeregistered) {
            try await flow.check(wrong, over: message, device: device(pinFailures: 3), tenant: tenant)
        }
        store.state.withLock { state in
            #expect(state.deleted == ["dev_one"])
            #expect(state.events == ["device.pin_failed", "device.pin_failed", "device.deregistered"])
            #expect(state.clears == 0)
        }
    }

    @Test("a right PIN passes and clears the count only when there is one to clear")
    func rightPINClears() async throws {
        let store = MemoryStore()
        store.state.withLock { $0.failures["dev_one"] = 2 }
        let flow = verifier(store)
        let right = try signature(by: pinKey)

        try await flow.check(right, over: message, device: device(pinFailures: 0), tenant: tenant(limit: 3))
        #expect(store.state.withLock { $0.clears } == 0)

        try await flow.check(right, over: message, device: device(pinFailures: 2), tenant: tenant(limit: 3))
        store.state.withLock { state in
            #expect(state.clears == 1)
            #expect(state.failures["dev_one"] == 0)
            #expect(state.events.isEmpty)
        }

        // The count starts again from zero: the next wrong PIN leaves the whole limit less one.
        await #expect(throws: FactorError.wrongPIN(attemptsRemaining: 2)) {
            try await flow.check(try signature(by: P256.Signing.PrivateKey()), over: message, device: device(),
                                 tenant: tenant(limit: 3))
        }
    }

    @Test("a device without a PIN key is refused before the store is asked anything")
    func notEnrolled() async throws {
        let store = MemoryStore()
        let flow = verifier(store)
        await #expect(throws: FactorError.factorNotEnrolled(.pin)) {
            try await flow.check(try signature(by: pinKey), over: message, device: device(withPIN: false),
                                 tenant: tenant(limit: 3))
        }
        store.state.withLock { state in
            #expect(state.failures.isEmpty)
            #expect(state.events.isEmpty)
            #expect(state.clears == 0)
        }
    }
}
