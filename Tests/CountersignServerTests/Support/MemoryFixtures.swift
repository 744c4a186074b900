import CountersignCore
import Foundation
@testable import CountersignServer

/// The tenant, client and user the in-memory flow suites (`*FlowStoreTests`) share: rows that no
/// database holds, built as the repositories would return them.
enum MemoryFixtures {
    static let epoch = Date(timeIntervalSince1970: 0)
    /// The time the suites start their clocks at.
    static let start = Date(timeIntervalSince1970: 1_790_000_000)

    static let tenant = Tenant(
        id: "ten_one", slug: "one", displayName: "One", isDefault: true, signingKey: ECPublicJWK(x: "x", y: "y"),
        createdAt: epoch, updatedAt: epoch)

    /// A poll client of `tenant` named Bank, allowed `scopes`.
    static func client(id: String = "cli_one", name: String = "Bank", scopes: [String] = ["openid"]) -> Client {
        Client(id: id, tenantID: tenant.id, name: name, scopes: scopes, deliveryMode: .poll, notificationEndpoint: nil,
               createdAt: epoch, updatedAt: epoch)
    }

    static func user(id: String = "usr_one", username: String = "alice", status: User.Status = .active) -> User {
        User(id: id, tenantID: tenant.id, username: username, displayName: nil, status: status, createdAt: epoch, updatedAt: epoch)
    }
}
