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
    }
}
