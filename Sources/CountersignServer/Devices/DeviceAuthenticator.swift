import CountersignCore
import Foundation

/// Checks the `Authorization: Device <jws>` signature of a device call: the device exists in
/// this tenant and is active, its key signed this method, URL and body, the time is inside the
/// window, and the nonce has not been seen. The nonce is recorded only after the signature
/// verifies, so nobody but the device can burn its nonces.
public struct DeviceAuthenticator: Sendable {
    let store: any DeviceSignatureStore
    /// How far a signature's `iat` may be from now, either way.
    let window: TimeInterval
    let metrics: ServerMetrics
    let now: @Sendable () -> Date
    /// Expired nonces are swept at most once a minute, by whichever request comes first.
    private let lastPurge = PeriodicSchedule(every: 60)

    init(store: any DeviceSignatureStore, window: TimeInterval, metrics: ServerMetrics, now: @escaping @Sendable () -> Date) {
        self.store = store
        self.window = window
        self.metrics = metrics
        self.now = now
    }

    public func authenticate(
        authorization: String?, method: String, url: String, body: Data, tenant: Tenant
    ) async throws -> Device {
        do {
            return try await check(authorization: authorization, method: method, url: url, body: body, tenant: tenant)
        } catch let error as DeviceRequestError {
            metrics.deviceSignatureRejected(code: error.code.rawValue)
            throw error
        }
    }

    private func check(authorization: String?, method: String, url: String, body: Data, tenant: Tenant) async throws -> Device {
        let now = now()
        let signature = try DeviceRequestSignature.parse(authorizationHeader: authorization)
        guard let device = try await store.device(id: signature.deviceID),
              device.tenantID == tenant.id else {
            throw DeviceRequestError.unknownDevice
        }
        // A removed device is told so only when it proves it is that device: to anyone else it
        // looks like any device with a bad signature.
        guard device.status == .active else {
            guard signature.jws.isValid(for: try device.signingKey.signingKey()) else { throw DeviceRequestError.invalidSignature }
            throw DeviceRequestError.deviceDeregistered
        }
        try signature.verify(key: try device.signingKey.signingKey(), method: method, url: url, body: body, now: now,
                             window: window)
        // A nonce only needs remembering while its iat is inside the window.
        let expiry = Date(timeIntervalSince1970: TimeInterval(signature.issuedAt) + window)
        guard try await store.recordNonce(deviceID: device.id, nonce: signature.nonce, expiresAt: expiry) else {
            throw DeviceRequestError.replayed
        }
        try await purgeExpiredNonces(now: now)
        var seen = device
        if device.lastSeenAt.map({ now.timeIntervalSince($0) > 60 }) ?? true {
            try await store.touch(deviceID: device.id, at: now)
            seen.lastSeenAt = now
        }
        return seen
    }

    private func purgeExpiredNonces(now: Date) async throws {
        if lastPurge.isDue(at: now) { try await store.purgeNonces(before: now) }
    }
}
