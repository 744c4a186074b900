import CountersignCore
import Foundation

/// Checks the `Authorization: Device <jws>` signature of a device call: the device exists in
/// this tenant and is active, its key signed this method, URL and body, the time is inside the
/// window, and the nonce has not been seen. The nonce is recorded only after the signature
/// verifies, so nobody but the device can burn its nonces.
public struct DeviceAuthenticator: Sendable {
    let services: ServerServices
    /// Expired nonces are swept at most once a minute, by whichever request comes first.
    private let lastPurge = PeriodicSchedule(every: 60)

    init(services: ServerServices) { self.services = services }

    public func authenticate(
        authorization: String?, method: String, url: String, body: Data, tenant: Tenant
    ) async throws -> Device {
        do {
            return try await check(authorization: authorization, method: method, url: url, body: body, tenant: tenant)
        } catch let error as DeviceRequestError {
            services.metrics.deviceSignatureRejected(code: error.code.rawValue)
            throw error
        }
    }

    private func check(authorization: String?, method: String, url: String, body: Data, tenant: Tenant) async throws -> Device {
        let now = services.now()
        let signature = try DeviceRequestSignature.parse(authorizationHeader: authorization)
        let devices = services.repositories.devices
        guard let device = try await devices.find(id: signature.deviceID, on: services.database),
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
                             window: services.configuration.signatureWindow)
        // A nonce only needs remembering while its iat is inside the window.
        let expiry = Date(timeIntervalSince1970: TimeInterval(signature.issuedAt) + services.configuration.signatureWindow)
        guard try await devices.recordNonce(deviceID: device.id, nonce: signature.nonce, expiresAt: expiry,
                                            on: services.database) else {
            throw DeviceRequestError.replayed
        }
        try await purgeExpiredNonces(now: now)
        var seen = device
        if device.lastSeenAt.map({ now.timeIntervalSince($0) > 60 }) ?? true {
            try await devices.touch(id: device.id, at: now, on: services.database)
            seen.lastSeenAt = now
        }
        return seen
    }

    private func purgeExpiredNonces(now: Date) async throws {
        if lastPurge.isDue(at: now) { try await services.repositories.devices.purgeNonces(before: now, on: services.database) }
    }
}
