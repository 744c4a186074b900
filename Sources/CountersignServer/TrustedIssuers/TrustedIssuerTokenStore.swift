import Foundation

/// What checking a trusted issuer's token (`TrustedIssuerTokenVerifier`) reads and writes, and
/// nothing else: the tenant's issuer a token names, the user a token names, and the tokens spent.
protocol TrustedIssuerTokenStore: Sendable {
    /// The tenant's trusted issuer whose `iss` is exactly `issuer`.
    func trustedIssuer(_ issuer: String, tenantID: String) async throws -> TrustedIssuer?
    /// The tenant's user of that username (exactly), whatever its status.
    func user(username: String, tenantID: String) async throws -> User?
    /// Records the token's `jti` as spent until `until`; false when it was spent already. The
    /// issuer's expired identifiers are forgotten on the way, so the ledger holds only live ones.
    func spend(jti: String, issuer: String, until: Date, at date: Date) async throws -> Bool
}

/// The trusted-issuer token check's store on the server's database (SQLite or PostgreSQL).
struct SQLTrustedIssuerTokenStore: TrustedIssuerTokenStore {
    let database: any Database
    let issuers: any TrustedIssuerRepository
    let users: any UserRepository
    var jwtIDs: any TrustedIssuerJWTIDRepository = SQLTrustedIssuerJWTIDRepository()
    /// Creates a user the tenant's directory has on first use.
    var directory: DirectoryLookup? = nil

    func trustedIssuer(_ issuer: String, tenantID: String) async throws -> TrustedIssuer? {
        try await issuers.find(issuer: issuer, tenantID: tenantID, on: database)
    }

    func user(username: String, tenantID: String) async throws -> User? {
        if let user = try await users.find(username: username, tenantID: tenantID, on: database) { return user }
        return await directory?.provision(username: username, tenantID: tenantID)
    }

    func spend(jti: String, issuer: String, until: Date, at date: Date) async throws -> Bool {
        try await database.transaction { executor in
            try await jwtIDs.purge(issuer: issuer, before: date, on: executor)
            return try await jwtIDs.record(jti, issuer: issuer, until: until, at: date, on: executor)
        }
    }
}
