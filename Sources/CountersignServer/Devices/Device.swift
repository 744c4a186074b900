import CountersignCore
import Foundation

/// An enrolled authenticator. The server holds its public keys only.
public struct Device: Sendable, Equatable {
    public enum Status: String, Codable, Sendable {
        case active
        /// Enrolled with a handover ticket, waiting for the approval of the device that issued
        /// it (`EnrollmentService.startHandover`): it may only read and remove itself, gets no
        /// requests and is not listed.
        case pending
        /// Removed by an administrator or by the device itself. The row stays so that the
        /// device is told `device_deregistered` rather than `unknown_device`.
        case deleted
    }

    public var id: String
    public var tenantID: String
    public var userID: String
    public var name: String
    public var platform: DevicePlatform
    public var signingKey: ECPublicJWK
    public var encryptionKey: ECPublicJWK
    public var push: PushRegistration?
    public var pushTokenValid: Bool
    public var status: Status
    public var createdAt: Date
    public var updatedAt: Date
    public var lastSeenAt: Date?
    public var deletedAt: Date?
    /// When the current push token was registered.
    public var pushTokenUpdatedAt: Date? = nil
    /// Why the push provider refused the current token, when it did.
    public var pushTokenError: String? = nil
    /// The public key derived from the user's PIN on the device (`pin` factor).
    public var pinKey: ECPublicJWK? = nil
    /// Wrong PINs in a row.
    public var pinFailures: Int = 0
    /// The key the device's platform releases only after a biometric check (`biometric` factor).
    public var biometricKey: ECPublicJWK? = nil
    /// Whether the device holds a TOTP seed.
    public var hasTOTP: Bool = false
    /// The device's X-Wing public key (raw), when it announced one at enrollment.
    public var xwingKey: Data? = nil
    /// The newest device certificate (`DeviceCertificate`), a JWS; nil until one is issued.
    public var certificate: String? = nil

    /// The key request details are sealed to: the X-Wing key where the device has one,
    /// `postQuantum` allows it and this platform has X-Wing (the strongest suite all support),
    /// else the P-256 key.
    func sealingKey(postQuantum: Bool) throws -> SealedDetails.RecipientKey {
        if postQuantum, HPKESuite.xwingAvailable, let xwingKey {
            return .xwing(xwingKey)
        }
        return .p256(try encryptionKey.agreementKey())
    }
    /// Why a deleted device was deleted, when it was for a reason the device should be told.
    public var deregisteredReason: DeregistrationNotice.Reason? = nil

    /// The factor keys and seeds the server holds for the device.
    public var enrolledFactors: DeviceDescription.EnrolledFactors {
        .init(pin: pinKey != nil, biometric: biometricKey != nil, totp: hasTOTP)
    }

    /// The last characters of the push token: enough to tell tokens apart in a list.
    public var pushStatus: DeviceDescription.PushStatus? {
        push.map { .init(provider: $0.provider, tokenSuffix: String($0.token.suffix(8)), valid: pushTokenValid,
              error: pushTokenValid ? nil : pushTokenError) }
    }
}

/// The administration API's view of a device.
public struct DeviceRecord: Codable, Sendable {
    public var id: String
    public var tenantID: String
    public var userID: String
    public var name: String
    public var platform: DevicePlatform
    public var status: Device.Status
    public var signingKeyThumbprint: String
    public var push: DeviceDescription.PushStatus?
    public var factors: DeviceDescription.EnrolledFactors
    public var createdAt: Date
    public var lastSeenAt: Date?
    public var deletedAt: Date?
    /// The user's username: in the tenant-wide list (`GET …/devices`) only.
    public var username: String?

    public init(_ device: Device, username: String? = nil) {
        self.username = username
        id = device.id
        tenantID = device.tenantID
        userID = device.userID
        name = device.name
        platform = device.platform
        status = device.status
        signingKeyThumbprint = device.signingKey.thumbprint
        push = device.pushStatus
        factors = device.enrolledFactors
        createdAt = device.createdAt
        lastSeenAt = device.lastSeenAt
        deletedAt = device.deletedAt
    }

    enum CodingKeys: String, CodingKey {
        case id, name, platform, status, push, factors, username
        case tenantID = "tenant_id"
        case userID = "user_id"
        case signingKeyThumbprint = "signing_key_thumbprint"
        case createdAt = "created_at"
        case lastSeenAt = "last_seen_at"
        case deletedAt = "deleted_at"
    }
}

/// A device's push channel as the tenant-wide device list filters it: registered and accepted,
/// refused by APNs or FCM, or not registered.
public enum DevicePushState: String, CaseIterable, Sendable {
    case valid, invalid, none
}

/// What a wrong PIN did.
public enum PINFailure: Sendable, Equatable {
    /// Counted; this many more wrong PINs are allowed.
    case wrong(attemptsRemaining: Int)
    /// That was the last: the device is deleted.
    case limitReached
}
