import Foundation

/// What finding the user a hint names (`UserHintResolver`) reads, and nothing else: the
/// tenant's users, by id, and by id or username. The keys an `id_token_hint` is checked with are the
/// `TokenSigningKeys`'.
protocol UserHintStore: Sendable {
    /// The user of that id in the tenant.
    func user(id: String, tenantID: String) async throws -> User?
    /// The user of that id in the tenant, or failing that of that username.
    func user(idOrUsername hint: String, tenantID: String) async throws -> User?
    /// The ids of the groups the user is in.
    func groupIDs(userID: String) async throws -> Set<String>
}

/// The hint resolver's store on the server's database (SQLite or PostgreSQL).
struct SQLUserHintStore: UserHintStore {
    let database: any Database
    let users: any UserRepository
    /// Creates a user the tenant's directory has on first use.
    var directory: DirectoryLookup? = nil

    func user(id: String, tenantID: String) async throws -> User? {
        try await users.find(id: id, tenantID: tenantID, on: database)
    }

    func groupIDs(userID: String) async throws -> Set<String> {
        try await GroupReferences.groupIDs(of: userID, on: database)
    }

    func user(idOrUsername hint: String, tenantID: String) async throws -> User? {
        if let user = try await users.find(idOrUsername: hint, tenantID: tenantID, on: database) { return user }
        // A user id is Countersign's own: only a username can be the directory's.
        guard !hint.hasPrefix("usr_") else { return nil }
        return await directory?.provision(username: hint, tenantID: tenantID)
    }
}
