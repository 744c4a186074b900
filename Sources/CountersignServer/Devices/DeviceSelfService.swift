import CountersignCore
import Foundation

/// What a device may do to its own enrollment: read it, rename itself, change its push token,
/// and unenroll.
public struct DeviceSelfService: Sendable {
    let database: any Database
    let devices: any DeviceRepository
    let users: any UserRepository
    let audit: AuditLog
    let pins: PINVerifier
    let now: @Sendable () -> Date

    /// The device as the server holds it; `device` is the row the request's authentication just
    /// read, so no second read is needed.
    public func describe(_ device: Device, tenant: Tenant) async throws -> DeviceDescription {
        guard let user = try await users.find(id: device.userID, tenantID: tenant.id,
                                                                   on: database) else {
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
        try await database.transaction { executor in
            try await devices.setPINKey(id: device.id, change.pinKey, at: date, on: executor)
            try await audit.record(
                "device.pin_changed", actor: "device:\(device.id)", tenantID: tenant.id, target: ("device", device.id),
                at: date, on: executor)
        }
        return try await describe(try await reloaded(device), tenant: tenant)
    }

    public func rename(_ device: Device, to rawName: String, tenant: Tenant) async throws -> DeviceDescription {
        guard let name = DeviceName.validate(rawName) else {
            throw APIError.badRequest("name must be 1 to \(DeviceName.maximumLength) characters without control characters")
        }
        let date = now()
        try await database.transaction { executor in
            try await devices.rename(id: device.id, to: name, at: date, on: executor)
            try await audit.record(
                "device.renamed", actor: "device:\(device.id)", tenantID: tenant.id, target: ("device", device.id),
                details: ["name": name], at: date, on: executor)
        }
        return try await describe(try await reloaded(device), tenant: tenant)
    }

    public func setPush(_ device: Device, _ push: PushRegistration?, tenant: Tenant) async throws -> DeviceDescription {
        if let push, push.token.isEmpty || push.token.unicodeScalars.count > PushRegistration.maximumTokenLength {
            throw APIError.badRequest("token must be 1 to \(PushRegistration.maximumTokenLength) characters")
        }
        let date = now()
        try await database.transaction { executor in
            try await devices.setPush(id: device.id, push, at: date, on: executor)
            try await audit.record(
                push == nil ? "device.push_token_removed" : "device.push_token_updated", actor: "device:\(device.id)",
                tenantID: tenant.id, target: ("device", device.id),
                details: push.map { ["provider": $0.provider.rawValue] } ?? [:], at: date, on: executor)
        }
        return try await describe(try await reloaded(device), tenant: tenant)
    }

    private func reloaded(_ device: Device) async throws -> Device {
        guard let current = try await devices.find(id: device.id, on: database) else {
            throw DeviceRequestError.unknownDevice
        }
        return current
    }

    public func unenroll(_ device: Device, tenant: Tenant) async throws {
        let date = now()
        try await database.transaction { executor in
            guard try await devices.markDeleted(id: device.id, at: date, on: executor) else {
                throw DeviceRequestError.deviceDeregistered
            }
            try await audit.record(
                "device.unenrolled", actor: "device:\(device.id)", tenantID: tenant.id, target: ("device", device.id),
                at: date, on: executor)
        }
    }
}
