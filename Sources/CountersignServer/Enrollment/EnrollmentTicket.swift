import Foundation

/// A one-time permission for one user to enroll one device. The secret (`cst_…`) is in the
/// enrollment URI only; the server keeps its SHA-256.
public struct EnrollmentTicket: Sendable, Equatable, Codable {
    public var id: String
    public var tenantID: String
    public var userID: String
    public var createdBy: String
    public var createdAt: Date
    public var expiresAt: Date
    public var usedAt: Date?
    public var revokedAt: Date?
    public var deviceID: String?

    public static let secretPrefix = "cst_"
    public static let defaultLifetime: TimeInterval = 600

    /// The API's member names, which are also the table's columns (`EnrollmentTicketRow`).
    enum CodingKeys: String, CodingKey, CaseIterable {
        case id
        case tenantID = "tenant_id"
        case userID = "user_id"
        case createdBy = "created_by"
        case createdAt = "created_at"
        case expiresAt = "expires_at"
        case usedAt = "used_at"
        case revokedAt = "revoked_at"
        case deviceID = "device_id"
    }
}
