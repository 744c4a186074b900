import CountersignCore
import Foundation

/// The storage of `trusted_issuers`, the one table this feature owns.
protocol TrustedIssuerRepository: Sendable {
    /// The tenant's issuers by id (creation order); at most `TrustedIssuer.maximumPerTenant`.
    func list(tenantID: String, on executor: any SQLExecutor) async throws -> [TrustedIssuer]
    func find(id: String, tenantID: String, on executor: any SQLExecutor) async throws -> TrustedIssuer?
    /// The tenant's issuer whose `iss` is exactly `issuer`.
    func find(issuer: String, tenantID: String, on executor: any SQLExecutor) async throws -> TrustedIssuer?
    func count(tenantID: String, on executor: any SQLExecutor) async throws -> Int
    /// Throws `StorageError.uniqueViolation` when the tenant already trusts that `iss`.
    func insert(_ issuer: TrustedIssuer, on executor: any SQLExecutor) async throws
    /// Throws `StorageError.uniqueViolation` when the tenant already trusts the new `iss`.
    func update(_ issuer: TrustedIssuer, on executor: any SQLExecutor) async throws
    /// Deletes the issuer and returns it; nil when the tenant has none of that id.
    func delete(id: String, tenantID: String, on executor: any SQLExecutor) async throws -> TrustedIssuer?
    /// Serialises the creations of one tenant, so that two at once cannot pass the limit together.
    func lockForCreation(tenantID: String, on executor: any SQLExecutor) async throws
}

struct SQLTrustedIssuerRepository: TrustedIssuerRepository {
    private typealias Row = TrustedIssuerRow

    func list(tenantID: String, on executor: any SQLExecutor) async throws -> [TrustedIssuer] {
        try await executor.all(
            "SELECT \(raw: Row.columns) FROM trusted_issuers WHERE tenant_id = \(tenantID) ORDER BY id", as: Row.self
        ).map { try $0.trustedIssuer() }
    }

    func find(id: String, tenantID: String, on executor: any SQLExecutor) async throws -> TrustedIssuer? {
        try await executor.first(
            "SELECT \(raw: Row.columns) FROM trusted_issuers WHERE id = \(id) AND tenant_id = \(tenantID)", as: Row.self
        )?.trustedIssuer()
    }

    func find(issuer: String, tenantID: String, on executor: any SQLExecutor) async throws -> TrustedIssuer? {
        try await executor.first(
            "SELECT \(raw: Row.columns) FROM trusted_issuers WHERE tenant_id = \(tenantID) AND issuer = \(issuer)",
            as: Row.self
        )?.trustedIssuer()
    }

    func count(tenantID: String, on executor: any SQLExecutor) async throws -> Int {
        try await executor.first(
            "SELECT COUNT(*) AS issuers FROM trusted_issuers WHERE tenant_id = \(tenantID)", column: "issuers", as: Int.self
        ) ?? 0
    }

    func insert(_ issuer: TrustedIssuer, on executor: any SQLExecutor) async throws {
        let (uri, jwks) = Row.keyColumns(issuer.keys)
        try await executor.run(
            """
            INSERT INTO trusted_issuers (id, tenant_id, issuer, jwks_uri, jwks, audience, username_claim, required_scope,
                created_at, updated_at)
            VALUES (\(issuer.id), \(issuer.tenantID), \(issuer.issuer), \(uri), \(jwks), \(issuer.audience),
                \(issuer.usernameClaim), \(issuer.requiredScope), \(issuer.createdAt), \(issuer.updatedAt))
            """)
    }

    func update(_ issuer: TrustedIssuer, on executor: any SQLExecutor) async throws {
        let (uri, jwks) = Row.keyColumns(issuer.keys)
        try await executor.run(
            """
            UPDATE trusted_issuers SET issuer = \(issuer.issuer), jwks_uri = \(uri), jwks = \(jwks),
                audience = \(issuer.audience), username_claim = \(issuer.usernameClaim),
                required_scope = \(issuer.requiredScope), updated_at = \(issuer.updatedAt)
            WHERE id = \(issuer.id) AND tenant_id = \(issuer.tenantID)
            """)
    }

    func delete(id: String, tenantID: String, on executor: any SQLExecutor) async throws -> TrustedIssuer? {
        try await executor.first(
            "DELETE FROM trusted_issuers WHERE id = \(id) AND tenant_id = \(tenantID) RETURNING \(raw: Row.columns)",
            as: Row.self
        )?.trustedIssuer()
    }

    func lockForCreation(tenantID: String, on executor: any SQLExecutor) async throws {
        // SQLite transactions begin IMMEDIATE and so already exclude every other writer; on
        // PostgreSQL a lock of the transaction's keyed by the tenant, held until it ends (the
        // two-key space, apart from the token-signing keys' 4242002).
        guard executor.dialect == .postgres else { return }
        try await executor.run("SELECT pg_advisory_xact_lock(4242003, hashtext(\(tenantID))) IS NULL AS locked")
    }
}

/// A row of `trusted_issuers` as stored: decoded by column name, then turned into a
/// `TrustedIssuer`, whose key set is parsed and checked again.
struct TrustedIssuerRow: Decodable {
    /// The columns `CodingKeys` names, for `SELECT` and `RETURNING`.
    static let columns = CodingKeys.allCases.map(\.rawValue).joined(separator: ", ")

    var id: String
    var tenantID: String
    var issuer: String
    var jwksURI: String?
    /// The inline key set as canonical JSON.
    var jwks: String?
    var audience: String
    var usernameClaim: String
    var requiredScope: String
    var createdAt: Date
    var updatedAt: Date

    enum CodingKeys: String, CodingKey, CaseIterable {
        case id
        case tenantID = "tenant_id"
        case issuer
        case jwksURI = "jwks_uri"
        case jwks, audience
        case usernameClaim = "username_claim"
        case requiredScope = "required_scope"
        case createdAt = "created_at"
        case updatedAt = "updated_at"
    }

    static func keyColumns(_ keys: TrustedIssuer.Keys) -> (uri: String?, jwks: String?) {
        switch keys {
        case .uri(let uri): (uri, nil)
        case .inline(let jwks): (nil, jwks.canonicalJSON)
        }
    }

    func trustedIssuer() throws(StorageError) -> TrustedIssuer {
        let keys: TrustedIssuer.Keys
        switch (jwksURI, jwks) {
        case (let uri?, nil): keys = .uri(uri)
        case (nil, let text?):
            // Keys were checked on upload; a set that no longer parses means the row was altered.
            do { keys = .inline(try ClientJWKS(validating: try JSONValue(parsing: Data(text.utf8)))) } catch {
                throw .corrupt("trusted_issuers.jwks")
            }
        default: throw .corrupt("trusted_issuers: exactly one of jwks_uri and jwks must be set")
        }
        return TrustedIssuer(
            id: id, tenantID: tenantID, issuer: issuer, keys: keys, audience: audience, usernameClaim: usernameClaim,
            requiredScope: requiredScope, createdAt: createdAt, updatedAt: updatedAt)
    }
}
