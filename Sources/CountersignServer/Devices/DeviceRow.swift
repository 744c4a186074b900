import CountersignCore
import Foundation

/// A row of `devices` as stored: decoded by column name, then turned into a `Device` (JSON keys
/// parsed, the push provider and token joined into one registration).
struct DeviceRow: Decodable {
    /// What `SELECT` reads for `CodingKeys`: the columns, and for `has_totp` whether the device
    /// has a TOTP seed (the sealed seed itself is read only to check a code).
    static let columns = CodingKeys.allCases.map { key in
        key == .hasTOTP ? "CASE WHEN totp_seed_sealed IS NULL THEN 0 ELSE 1 END AS has_totp" : key.rawValue
    }.joined(separator: ", ")

    var id: String
    var tenantID: String
    var userID: String
    var name: String
    var platform: DevicePlatform
    var signingKey: String
    var encryptionKey: String
    var pushProvider: PushRegistration.Provider?
    var pushToken: String?
    var pushTokenValid: Bool
    var status: Device.Status
    var createdAt: Date
    var updatedAt: Date
    var lastSeenAt: Date?
    var deletedAt: Date?
    var pushTokenUpdatedAt: Date?
    var pushTokenError: String?
    var pinKey: String?
    var pinFailures: Int
    var biometricKey: String?
    var hasTOTP: Bool
    var deregisteredReason: DeregistrationNotice.Reason?
    var xwingKey: Data?
    var certificate: String?

    enum CodingKeys: String, CodingKey, CaseIterable {
        case id
        case tenantID = "tenant_id"
        case userID = "user_id"
        case name, platform
        case signingKey = "signing_key_jwk"
        case encryptionKey = "encryption_key_jwk"
        case pushProvider = "push_provider"
        case pushToken = "push_token"
        case pushTokenValid = "push_token_valid"
        case status
        case createdAt = "created_at"
        case updatedAt = "updated_at"
        case lastSeenAt = "last_seen_at"
        case deletedAt = "deleted_at"
        case pushTokenUpdatedAt = "push_token_updated_at"
        case pushTokenError = "push_token_error"
        case pinKey = "pin_key_jwk"
        case pinFailures = "pin_failures"
        case biometricKey = "biometric_key_jwk"
        case hasTOTP = "has_totp"
        case deregisteredReason = "deregistered_reason"
        case xwingKey = "xwing_key"
        case certificate
    }

    func device() throws -> Device {
        let decoder = JSONDecoder()
        func key(_ json: String) throws -> ECPublicJWK { try decoder.decode(ECPublicJWK.self, from: Data(json.utf8)) }
        // A registration needs both halves; a device without push stores neither.
        let push = pushProvider.flatMap { provider in pushToken.map { PushRegistration(provider: provider, token: $0) } }
        return Device(
            id: id, tenantID: tenantID, userID: userID, name: name, platform: platform, signingKey: try key(signingKey),
            encryptionKey: try key(encryptionKey), push: push, pushTokenValid: pushTokenValid, status: status,
            createdAt: createdAt, updatedAt: updatedAt, lastSeenAt: lastSeenAt, deletedAt: deletedAt,
            pushTokenUpdatedAt: pushTokenUpdatedAt, pushTokenError: pushTokenError, pinKey: try pinKey.map(key),
            pinFailures: pinFailures, biometricKey: try biometricKey.map(key), hasTOTP: hasTOTP, xwingKey: xwingKey,
            certificate: certificate, deregisteredReason: deregisteredReason)
    }
}
