import CountersignCore
import Crypto
import Foundation
import Synchronization
import Testing
@testable import CountersignServer

/// The device signature check alone, on a store held in memory: no server, no database. The
/// flow reads and writes only what `DeviceSignatureStore` declares, so this is all it needs.
@Suite("Device signature check on an in-memory store")
struct DeviceAuthenticatorFlowTests {
    /// `DeviceSignatureStore` in memory, recording what the flow asked of it.
    final class MemoryStore: DeviceSignatureStore {
        struct State {
            var devices: [String: Device] = [:]
            var nonces: [String: Date] = [:]
            var touched: [String: Date] = [:]
            var purges = 0
        }

        let state = Mutex(State())

        func device(id: String) async throws -> Device? { state.withLock { $0.devices[id] } }

        func recordNonce(deviceID: String, nonce: String, expiresAt: Date) async throws -> Bool {
            state.withLock { state in
                let key = deviceID + " " + nonce
                guard state.nonces[key] == nil else { return false }
                state.nonces[key] = expiresAt
                return true
            }
        }

        func purgeNonces(before date: Date) async throws {
            state.withLock { state in
                state.nonces = state.nonces.filter { $0.value >= date }
                state.purges += 1
            }
        }

        func touch(deviceID: String, at date: Date) async throws {
            state.withLock { $0.touched[deviceID] = date }
        }
    }

    let now = Date(timeIntervalSince1970: 1_790_000_000)
    let key = P256.Signing.PrivateKey()
    let tenant = Tenant(
        id: "ten_one", slug: "one", displayName: "One", isDefault: true, signingKey: ECPublicJWK(x: "x", y: "y"),
        createdAt: Date(timeIntervalSince1970: 0), updatedAt: Date(timeIntervalSince1970: 0))
    let url = "https://countersign.test/device/v1/self"

    private func device(status: Device.Status = .active, tenantID: String = "ten_one") -> Device {
        Device(
            id: "dev_one", tenantID: tenantID, userID: "usr_one", name: "Phone", platform: .ios,
            signingKey: ECPublicJWK(key.publicKey), encryptionKey: ECPublicJWK(P256.KeyAgreement.PrivateKey().publicKey),
            push: nil, pushTokenValid: true, status: status, createdAt: now, updatedAt: now)
    }

    private func authenticator(_ store: MemoryStore) -> DeviceAuthenticator {
        let now = now
        return DeviceAuthenticator(store: store, window: 60, metrics: ServerMetrics(), now: { now })
    }

    private func header(nonce: String = DeviceRequestSignature.randomNonce(), at date: Date? = nil,
                        signer: P256.Signing.PrivateKey? = nil) throws -> String {
        try DeviceRequestSignature.sign(
            method: "GET", url: url, body: Data(), deviceID: "dev_one", signer: signer ?? key, now: date ?? now, nonce: nonce
        ).authorizationHeader
    }

    @Test("a good signature is accepted once; its nonce is remembered to the window's end and the device marked seen")
    func acceptedOnce() async throws {
        let store = MemoryStore()
        store.state.withLock { $0.devices["dev_one"] = device() }
        let flow = authenticator(store)
        let signed = try header(nonce: "nonce-0123456789abcdef")
        let seen = try await flow.authenticate(authorization: signed, method: "GET", url: url, body: Data(), tenant: tenant)
        #expect(seen.lastSeenAt == now)
        store.state.withLock { state in
            #expect(state.nonces["dev_one nonce-0123456789abcdef"] == now.addingTimeInterval(60))
            #expect(state.touched["dev_one"] == now)
        }
        await #expect(throws: DeviceRequestError.replayed) {
            try await flow.authenticate(authorization: signed, method: "GET", url: url, body: Data(), tenant: tenant)
        }
    }

    @Test("another tenant's device, a removed device and a wrong key are refused, and nothing is recorded")
    func refusals() async throws {
        let store = MemoryStore()
        let flow = authenticator(store)
        store.state.withLock { $0.devices["dev_one"] = device(tenantID: "ten_two") }
        await #expect(throws: DeviceRequestError.unknownDevice) {
            try await flow.authenticate(authorization: try header(), method: "GET", url: url, body: Data(), tenant: tenant)
        }
        store.state.withLock { $0.devices["dev_one"] = device(status: .deleted) }
        await #expect(throws: DeviceRequestError.invalidSignature) {
            try await flow.authenticate(
                authorization: try header(signer: P256.Signing.PrivateKey()), method: "GET", url: url, body: Data(), tenant: tenant)
        }
        await #expect(throws: DeviceRequestError.deviceDeregistered) {
            try await flow.authenticate(authorization: try header(), method: "GET", url: url, body: Data(), tenant: tenant)
        }
        store.state.withLock { $0.devices["dev_one"] = device() }
        await #expect(throws: DeviceRequestError.outsideTimeWindow) {
            try await flow.authenticate(
                authorization: try header(at: now.addingTimeInterval(-61)), method: "GET", url: url, body: Data(), tenant: tenant)
        }
        await #expect(throws: DeviceRequestError.methodMismatch) {
            try await flow.authenticate(authorization: try header(), method: "POST", url: url, body: Data(), tenant: tenant)
        }
        store.state.withLock { state in
            #expect(state.nonces.isEmpty)
            #expect(state.touched.isEmpty)
        }
    }
}
