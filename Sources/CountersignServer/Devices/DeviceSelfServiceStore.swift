import CountersignCore
import Foundation

/// What a device's self-service (`DeviceSelfService`) reads and writes, and nothing else: the
/// device and its user, and the device's own changes. Each change is one transaction with its
/// audit record. (A wrong current PIN is counted through `PINAttemptStore`.)
protocol DeviceSelfServiceStore: Sendable {
    /// The user, if it still exists in the tenant.
    func user(id: String, tenantID: String) async throws -> User?
    func device(id: String) async throws -> Device?
    /// Replaces the device's PIN key (clearing its count of wrong PINs) and records it.
    func changePINKey(deviceID: String, to key: ECPublicJWK, tenantID: String, at date: Date) async throws
    /// Sets the keys of new factors and records it.
    func addFactors(deviceID: String, _ addition: FactorAddition, tenantID: String, at date: Date) async throws
    func rename(deviceID: String, to name: String, tenantID: String, at date: Date) async throws
    /// Sets or, with nil, removes the device's push registration, and records it.
    func setPush(deviceID: String, _ push: PushRegistration?, tenantID: String, at date: Date) async throws
    /// Deletes the device and records it; false if it was not active (nothing is recorded).
    func unenroll(deviceID: String, tenantID: String, at date: Date) async throws -> Bool
}

/// The device self-service's store on the server's database (SQLite or PostgreSQL).
struct SQLDeviceSelfServiceStore: DeviceSelfServiceStore {
    let database: any Database
    let devices: any DeviceRepository
    let users: any UserRepository
    let audit: AuditLog

    func user(id: String, tenantID: String) async throws -> User? {
        try await users.find(id: id, tenantID: tenantID, on: database)
    }

    func device(id: String) async throws -> Device? {
        try await devices.find(id: id, on: database)
    }

    func changePINKey(deviceID: String, to key: ECPublicJWK, tenantID: String, at date: Date) async throws {
        try await database.transaction { executor in
            try await devices.setPINKey(id: deviceID, key, at: date, on: executor)
            try await audit.record(
                "device.pin_changed", actor: "device:\(deviceID)", tenantID: tenantID, target: ("device", deviceID),
                at: date, on: executor)
        }
    }

    func addFactors(deviceID: String, _ addition: FactorAddition, tenantID: String, at date: Date) async throws {
        try await database.transaction { executor in
            try await devices.addFactorKeys(id: deviceID, pin: addition.pinKey, biometric: addition.biometricKey, at: date,
                                            on: executor)
            let added = [addition.pinKey.map { _ in "pin" }, addition.biometricKey.map { _ in "biometric" }].compactMap { $0 }
            try await audit.record(
                "device.factors_added", actor: "device:\(deviceID)", tenantID: tenantID, target: ("device", deviceID),
                details: ["factors": added.joined(separator: " ")], at: date, on: executor)
        }
    }

    func rename(deviceID: String, to name: String, tenantID: String, at date: Date) async throws {
        try await database.transaction { executor in
            try await devices.rename(id: deviceID, to: name, at: date, on: executor)
            try await audit.record(
                "device.renamed", actor: "device:\(deviceID)", tenantID: tenantID, target: ("device", deviceID),
                details: ["name": name], at: date, on: executor)
        }
    }

    func setPush(deviceID: String, _ push: PushRegistration?, tenantID: String, at date: Date) async throws {
        try await database.transaction { executor in
            try await devices.setPush(id: deviceID, push, at: date, on: executor)
            try await audit.record(
                push == nil ? "device.push_token_removed" : "device.push_token_updated", actor: "device:\(deviceID)",
                tenantID: tenantID, target: ("device", deviceID),
                details: push.map { ["provider": $0.provider.rawValue] } ?? [:], at: date, on: executor)
        }
    }

    func unenroll(deviceID: String, tenantID: String, at date: Date) async throws -> Bool {
        try await database.transaction { executor in
            guard try await devices.markDeleted(id: deviceID, at: date, on: executor) else { return false }
            try await audit.record(
                "device.unenrolled", actor: "device:\(deviceID)", tenantID: tenantID, target: ("device", deviceID),
                at: date, on: executor)
            return true
        }
    }
}
