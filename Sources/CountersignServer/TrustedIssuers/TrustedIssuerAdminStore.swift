import Foundation

/// What the trusted-issuer routes (`TrustedIssuerAdminRoutes`) read and write, and nothing else.
/// Each write is one transaction with its audit record, which names the issuer and where its
/// keys come from (never the URL: it may carry a credential of the issuer's).
protocol TrustedIssuerAdminStore: Sendable {
    func list(tenantID: String) async throws -> [TrustedIssuer]
    func find(id: String, tenantID: String) async throws -> TrustedIssuer?
    /// Stores the new issuer unless the tenant has `limit` already or trusts its `iss`.
    func create(_ issuer: TrustedIssuer, limit: Int, actor: String) async throws -> TrustedIssuerWrite
    /// Stores the changed issuer, as of its `updatedAt`, unless another of the tenant's has its `iss`.
    func update(_ issuer: TrustedIssuer, actor: String) async throws -> TrustedIssuerWrite
    /// Deletes the issuer and records it; nil when the tenant has none of that id.
    func delete(id: String, tenantID: String, actor: String, at date: Date) async throws -> TrustedIssuer?
}

/// What a write did.
enum TrustedIssuerWrite: Sendable, Equatable {
    case stored
    case limitReached
    /// Another trusted issuer of the tenant, with this id, has the `iss`.
    case issuerTaken(String)
}

/// The trusted-issuer routes' store on the server's database (SQLite or PostgreSQL).
struct SQLTrustedIssuerAdminStore: TrustedIssuerAdminStore {
    let database: any Database
    let issuers: any TrustedIssuerRepository
    let audit: AuditLog

    func list(tenantID: String) async throws -> [TrustedIssuer] {
        try await issuers.list(tenantID: tenantID, on: database)
    }

    func find(id: String, tenantID: String) async throws -> TrustedIssuer? {
        try await issuers.find(id: id, tenantID: tenantID, on: database)
    }

    func create(_ issuer: TrustedIssuer, limit: Int, actor: String) async throws -> TrustedIssuerWrite {
        try await database.transaction { executor in
            try await issuers.lockForCreation(tenantID: issuer.tenantID, on: executor)
            if let taken = try await issuers.find(issuer: issuer.issuer, tenantID: issuer.tenantID, on: executor) {
                return .issuerTaken(taken.id)
            }
            guard try await issuers.count(tenantID: issuer.tenantID, on: executor) < limit else { return .limitReached }
            try await issuers.insert(issuer, on: executor)
            try await audit.record(
                "trusted_issuer.created", actor: actor, tenantID: issuer.tenantID, target: ("trusted_issuer", issuer.id),
                details: Self.details(issuer), at: issuer.createdAt, on: executor)
            return .stored
        }
    }

    func update(_ issuer: TrustedIssuer, actor: String) async throws -> TrustedIssuerWrite {
        try await database.transaction { executor in
            if let taken = try await issuers.find(issuer: issuer.issuer, tenantID: issuer.tenantID, on: executor),
               taken.id != issuer.id {
                return .issuerTaken(taken.id)
            }
            try await issuers.update(issuer, on: executor)
            try await audit.record(
                "trusted_issuer.updated", actor: actor, tenantID: issuer.tenantID, target: ("trusted_issuer", issuer.id),
                details: Self.details(issuer), at: issuer.updatedAt, on: executor)
            return .stored
        }
    }

    func delete(id: String, tenantID: String, actor: String, at date: Date) async throws -> TrustedIssuer? {
        try await database.transaction { executor in
            guard let deleted = try await issuers.delete(id: id, tenantID: tenantID, on: executor) else { return nil }
            try await audit.record(
                "trusted_issuer.deleted", actor: actor, tenantID: tenantID, target: ("trusted_issuer", id),
                details: ["issuer": deleted.issuer], at: date, on: executor)
            return deleted
        }
    }

    private static func details(_ issuer: TrustedIssuer) -> [String: String] {
        let keys = switch issuer.keys {
        case .uri: "jwks_uri"
        case .inline: "jwks"
        }
        return ["issuer": issuer.issuer, "keys": keys, "audience": issuer.audience, "username_claim": issuer.usernameClaim,
                "required_scope": issuer.requiredScope]
    }
}
