import Foundation

/// What checking a device's request signature (`DeviceAuthenticator`) reads and writes: the
/// device, the nonces it has used, and when it was last seen.
protocol DeviceSignatureStore: Sendable {
    func device(id: String) async throws -> Device?
    /// Remembers a nonce until `expiresAt`; false if the device used it already.
    func recordNonce(deviceID: String, nonce: String, expiresAt: Date) async throws -> Bool
    func purgeNonces(before date: Date) async throws
    func touch(deviceID: String, at date: Date) async throws
}

/// The signature check's store on the server's database.
struct SQLDeviceSignatureStore: DeviceSignatureStore {
    let database: any Database
    let devices: any DeviceRepository

    func device(id: String) async throws -> Device? {
        try await devices.find(id: id, on: database)
    }

    func recordNonce(deviceID: String, nonce: String, expiresAt: Date) async throws -> Bool {
        try await devices.recordNonce(deviceID: deviceID, nonce: nonce, expiresAt: expiresAt, on: database)
    }

    func purgeNonces(before date: Date) async throws {
        try await devices.purgeNonces(before: date, on: database)
    }

    func touch(deviceID: String, at date: Date) async throws {
        try await devices.touch(id: deviceID, at: date, on: database)
    }
}
