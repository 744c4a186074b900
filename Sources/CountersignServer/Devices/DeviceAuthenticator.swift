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
        let call = try await authenticateDeferringNonce(
            authorization: authorization, method: method, url: url, body: body, tenant: tenant)
        do {
            try await record(call.nonce)
        } catch let error as DeviceRequestError {
            rejectedAsReplayed()
            throw error
        }
        return try await seen(call)
    }

    /// Checks the signature like `authenticate`, but leaves the nonce unrecorded, for a call
    /// that records it in the same commit as what it changes (`ApprovalService.answer`). The
    /// caller records it before it answers, whatever the outcome, does nothing but checks and
    /// reads until then, and then calls `seen`.
    func authenticateDeferringNonce(
        authorization: String?, method: String, url: String, body: Data, tenant: Tenant
    ) async throws -> VerifiedDeviceCall {
        do {
            return try await check(authorization: authorization, method: method, url: url, body: body, tenant: tenant)
        } catch let error as DeviceRequestError {
            metrics.deviceSignatureRejected(code: error.code.rawValue)
            throw error
        }
    }

    /// Records a verified call's nonce by itself; `replayed` if the device used it already
    /// (not counted here: whoever turns it into the 401 counts it, `rejectedAsReplayed`).
    func record(_ nonce: DeviceNonce) async throws {
        guard try await store.recordNonce(deviceID: nonce.deviceID, nonce: nonce.value, expiresAt: nonce.expiresAt) else {
            throw DeviceRequestError.replayed
        }
    }

    /// Counts a call refused because its nonce was used already.
    func rejectedAsReplayed() {
        metrics.deviceSignatureRejected(code: DeviceRequestError.replayed.code.rawValue)
    }

    /// Once the call's nonce is recorded: sweeps expired nonces when due and notes that the
    /// device was seen (at most once a minute); returns the device as seen.
    func seen(_ call: VerifiedDeviceCall) async throws -> Device {
        try await purgeExpiredNonces(now: call.at)
        var seen = call.device
        if call.device.lastSeenAt.map({ call.at.timeIntervalSince($0) > 60 }) ?? true {
            try await store.touch(deviceID: call.device.id, at: call.at)
            seen.lastSeenAt = call.at
        }
        return seen
    }

    private func check(authorization: String?, method: String, url: String, body: Data, tenant: Tenant) async throws
        -> VerifiedDeviceCall {
        let now = now()
        let signature = try DeviceRequestSignature.parse(authorizationHeader: authorization)
        guard let device = try await store.device(id: signature.deviceID),
              device.tenantID == tenant.id else {
            throw DeviceRequestError.unknownDevice
        }
        // A removed device is told so only when it proves it is that device: to anyone else it
        // looks like any device with a bad signature.
        guard device.status != .deleted else {
            guard signature.jws.isValid(for: try device.signingKey.signingKey()) else { throw DeviceRequestError.invalidSignature }
            throw DeviceRequestError.deviceDeregistered
        }
        try signature.verify(key: try device.signingKey.signingKey(), method: method, url: url, body: body, now: now,
                             window: window)
        // A device waiting for its handover's approval may read and remove itself, nothing more.
        if device.status == .pending, !Self.pendingMayCall(method: method, url: url) {
            throw DeviceRequestError.handoverPending
        }
        // A nonce only needs remembering while its iat is inside the window.
        let nonce = DeviceNonce(
            deviceID: device.id, value: signature.nonce,
            expiresAt: Date(timeIntervalSince1970: TimeInterval(signature.issuedAt) + window))
        return VerifiedDeviceCall(device: device, nonce: nonce, at: now)
    }

    /// `GET` and `DELETE` of `…/device/v1/self`, without a query.
    static func pendingMayCall(method: String, url: String) -> Bool {
        guard method == "GET" || method == "DELETE", let url = URL(string: url), url.query == nil else { return false }
        return url.path.hasSuffix("/device/v1/self")
    }

    private func purgeExpiredNonces(now: Date) async throws {
        if lastPurge.isDue(at: now) { try await store.purgeNonces(before: now) }
    }
}

/// A device call whose signature verified, before its nonce is recorded.
struct VerifiedDeviceCall: Sendable {
    let device: Device
    let nonce: DeviceNonce
    /// When the signature was checked.
    let at: Date
}

/// The nonce of a verified device call, remembered until `expiresAt` (its `iat` plus the
/// window) so that the call cannot be played again.
public struct DeviceNonce: Sendable, Equatable {
    public let deviceID: String
    public let value: String
    public let expiresAt: Date
}
