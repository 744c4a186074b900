import Foundation

/// What a user may administer in the console. A role is a set of admin rights: the console
/// acts with an admin key holding exactly these, so every action passes the same checks as the
/// administration API.
enum ConsoleRole: String, Codable, Sendable, CaseIterable {
    /// Every right within the user's own tenant.
    case tenantAdmin = "tenant-admin"
    /// Every right in every tenant; only a user of the default tenant may hold it.
    case systemAdmin = "system-admin"

    var rights: [AdminRight] {
        switch self {
        case .tenantAdmin: AdminRight.allCases.filter { $0 != .tenantsManage }
        case .systemAdmin: AdminRight.allCases
        }
    }
}

/// A user's role, as `console_roles` holds it.
struct ConsoleRoleGrant: Codable, Sendable, Equatable {
    let userID: String
    let tenantID: String
    let role: ConsoleRole
    let grantedBy: String
    let grantedAt: Date

    enum CodingKeys: String, CodingKey, CaseIterable {
        case role
        case userID = "user_id"
        case tenantID = "tenant_id"
        case grantedBy = "granted_by"
        case grantedAt = "granted_at"
    }

    static let columns = CodingKeys.allCases.map(\.rawValue).joined(separator: ", ")
}
