import CountersignCore
import Foundation

/// What a device may do to its own enrollment: read it, rename itself, change its push token,
/// and unenroll.
public struct DeviceSelfService: Sendable {
    let store: any DeviceSelfServiceStore
    let pins: PINVerifier
    let now: @Sendable () -> Date

    /// The device as the server holds it; `device` is the row the request's authentication just
    /// read, so no second read is needed.
    public func describe(_ device: Device, tenant: Tenant) async throws -> DeviceDescription {
        guard let user = try await store.user(id: device.userID, tenantID: tenant.id) else {
            throw DeviceRequestError.unknownDevice
        }
        let current = device
        return DeviceDescription(
            deviceID: current.id, tenant: tenant.slug,
            user: EnrolledUser(id: user.id, username: user.username, displayName: user.displayName),
            name: current.name, platform: current.platform, status: current.status.rawValue, push: current.pushStatus,
            createdAt: current.createdAt, lastSeenAt: current.lastSeenAt, factors: current.enrolledFactors)
    }

    /// Replaces the PIN key, proved by a signature of the current one; a wrong current PIN
    /// counts like a wrong PIN on an answer.
    func changePIN(_ device: Device, _ change: PINChange, tenant: Tenant) async throws -> DeviceDescription {
        guard device.pinKey != nil else { throw FactorError.factorNotEnrolled(.pin) }
        do { _ = try change.pinKey.signingKey() } catch {
            throw APIError(.badRequest, .invalidKey, "pin_key: \(error.description)")
        }
        guard ![device.signingKey, device.encryptionKey, device.biometricKey].contains(change.pinKey) else {
            throw APIError(.badRequest, .invalidKey, "pin_key must be a key of its own, not another key of this device")
        }
        try await pins.check(
            change.pinSignature, over: FactorProof.pinChangeMessage(deviceID: device.id, newKey: change.pinKey),
            device: device, tenant: tenant)
        let date = now()
        try await store.changePINKey(deviceID: device.id, to: change.pinKey, tenantID: tenant.id, at: date)
        return try await describe(try await reloaded(device), tenant: tenant)
    }

    /// Adds a PIN key, a biometric key or both to an enrollment that lacks them. Each must be a
    /// P-256 key of its own; a factor the device has already is refused (the PIN is changed
    /// with `changePIN`, proved by the current one). The device certificate is issued again at
    /// the next receipt, with the new keys.
    func addFactors(_ device: Device, _ addition: FactorAddition, tenant: Tenant) async throws -> DeviceDescription {
        guard addition.pinKey != nil || addition.biometricKey != nil else {
            throw APIError.badRequest("name at least one factor to add: pin_key, biometric_key")
        }
        if addition.pinKey != nil, device.pinKey != nil {
            throw APIError.badRequest("this device has a PIN already; change it with PUT /self/pin")
        }
        if addition.biometricKey != nil, device.biometricKey != nil {
            throw APIError.badRequest("this device has a biometric key already")
        }
        var taken = [device.signingKey, device.encryptionKey] + [device.pinKey, device.biometricKey].compactMap { $0 }
        for (field, key) in [("pin_key", addition.pinKey), ("biometric_key", addition.biometricKey)] {
            guard let key else { continue }
            do { _ = try key.signingKey() } catch { throw APIError(.badRequest, .invalidKey, "\(field): \(error.description)") }
            guard !taken.contains(key) else {
                throw APIError(.badRequest, .invalidKey, "\(field) must be a key of its own, not another key of this device")
            }
            taken.append(key)
        }
        try await store.addFactors(deviceID: device.id, addition, tenantID: tenant.id, at: now())
        return try await describe(try await reloaded(device), tenant: tenant)
    }

    public func rename(_ device: Device, to rawName: String, tenant: Tenant) async throws -> DeviceDescription {
        guard let name = DeviceName.validate(rawName) else {
            throw APIError.badRequest(
                "name must be 1 to \(DeviceName.maximumLength) characters without control or format characters (such as bidirectional overrides)")
        }
        let date = now()
        try await store.rename(deviceID: device.id, to: name, tenantID: tenant.id, at: date)
        return try await describe(try await reloaded(device), tenant: tenant)
    }

    public func setPush(_ device: Device, _ push: PushRegistration?, tenant: Tenant) async throws -> DeviceDescription {
        if let push, push.token.isEmpty || push.token.unicodeScalars.count > PushRegistration.maximumTokenLength {
            throw APIError.badRequest("token must be 1 to \(PushRegistration.maximumTokenLength) characters")
        }
        let date = now()
        try await store.setPush(deviceID: device.id, push, tenantID: tenant.id, at: date)
        return try await describe(try await reloaded(device), tenant: tenant)
    }

    private func reloaded(_ device: Device) async throws -> Device {
        guard let current = try await store.device(id: device.id) else {
            throw DeviceRequestError.unknownDevice
        }
        return current
    }

    public func unenroll(_ device: Device, tenant: Tenant) async throws {
        let date = now()
        guard try await store.unenroll(deviceID: device.id, tenantID: tenant.id, at: date) else {
            throw DeviceRequestError.deviceDeregistered
        }
    }
}
