import CountersignCore
import Foundation

/// One enrollment of this device with a Countersign server: who it is enrolled for, where, and
/// the server key that signs what the server sends it. The private keys are in the `KeyStore`
/// under the same `id`, never in this record.
///
/// ```swift
/// for enrollment in try await authenticator.enrollments() {
///     print("\(enrollment.user.username) at \(enrollment.server.host() ?? "?") as \(enrollment.deviceName)")
/// }
/// ```
public struct Enrollment: Sendable, Codable, Equatable, Identifiable {
    /// Local identifier, generated on the device before its keys; not known to the server.
    public let id: String
    /// The server URL from the enrollment URI; device endpoints are below `<server>/device/v1/`.
    public let server: URL
    public let tenant: String
    /// The device's id at the server (the `kid` of every request it signs).
    public let deviceID: String
    public let user: EnrolledUser
    public internal(set) var deviceName: String
    public let platform: DevicePlatform
    /// The server's device-protocol signing key, pinned at enrollment by the URI's fingerprint.
    public let serverKey: ECPublicJWK
    public let enrolledAt: Date
    /// Set while this enrollment, made with another device's handover URI, waits for that
    /// device's approval: show `number` until `checkHandover(_:)` says it was approved.
    public internal(set) var handover: EnrollmentHandover?

    init(
        id: String, server: URL, tenant: String, deviceID: String, user: EnrolledUser, deviceName: String,
        platform: DevicePlatform, serverKey: ECPublicJWK, enrolledAt: Date
    ) {
        self.id = id
        self.server = server
        self.tenant = tenant
        self.deviceID = deviceID
        self.user = user
        self.deviceName = deviceName
        self.platform = platform
        self.serverKey = serverKey
        self.enrolledAt = enrolledAt
    }

    enum CodingKeys: String, CodingKey {
        case id, server, tenant, user, platform
        case deviceID = "device_id"
        case deviceName = "device_name"
        case serverKey = "server_key"
        case enrolledAt = "enrolled_at"
        case handover
    }
}

/// A new device's side of a handover: the number it shows, and the device that vouched for it
/// (named by the server's signed receipt).
public struct EnrollmentHandover: Sendable, Codable, Equatable {
    /// `hov_…`.
    public let id: String
    /// The two digits the user picks on the other device.
    public let number: String
    /// The device that asked for the enrollment URI and approves this one.
    public let vouchedBy: String
    public let expiresAt: Date

    enum CodingKeys: String, CodingKey {
        case id, number
        case vouchedBy = "vouched_by"
        case expiresAt = "expires_at"
    }
}
