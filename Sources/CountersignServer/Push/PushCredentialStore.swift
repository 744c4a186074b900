import Foundation

/// What `PushCredentialService` reads and writes, and nothing else. Each write is one
/// transaction with its audit record.
protocol PushCredentialStore: Sendable {
    /// The tenant's credentials, newest first per provider.
    func list(tenantID: String) async throws -> [PushCredential]
    /// Stores the tenant's credential of `kind` and `clientAppKey`: `make` is given the one it
    /// replaces (nil for a new one) and returns the credential to store, which `seal` seals the
    /// secret for (a replacement keeps the row's id, which the sealed secret names). The audit
    /// record's details are `auditDetails` of what was stored or deleted.
    func put(
        tenantID: String, kind: PushCredential.Kind, clientAppKey: String,
        make: @escaping @Sendable (PushCredential?) -> PushCredential, seal: @escaping @Sendable (PushCredential) throws -> Data,
        auditDetails: @escaping @Sendable (PushCredential) -> [String: String], actor: String, at date: Date
    ) async throws -> PushCredential
    /// Deletes the credential and records it; nil when the tenant has none of that kind and key.
    func delete(tenantID: String, kind: PushCredential.Kind, clientAppKey: String, actor: String, at date: Date,
                auditDetails: @escaping @Sendable (PushCredential) -> [String: String]) async throws -> PushCredential?
}

/// The push credential store on the server's database (SQLite or PostgreSQL).
struct SQLPushCredentialStore: PushCredentialStore {
    let database: any Database
    let credentials: any PushCredentialRepository
    let audit: AuditLog

    func list(tenantID: String) async throws -> [PushCredential] {
        try await credentials.list(tenantID: tenantID, on: database)
    }

    func put(
        tenantID: String, kind: PushCredential.Kind, clientAppKey: String,
        make: @escaping @Sendable (PushCredential?) -> PushCredential, seal: @escaping @Sendable (PushCredential) throws -> Data,
        auditDetails: @escaping @Sendable (PushCredential) -> [String: String], actor: String, at date: Date
    ) async throws -> PushCredential {
        do {
            return try await putOnce(
                tenantID: tenantID, kind: kind, clientAppKey: clientAppKey, make: make, seal: seal, auditDetails: auditDetails,
                actor: actor, at: date)
        } catch StorageError.uniqueViolation {
            // Two first puts at once: the other inserted first; this one now replaces it.
            return try await putOnce(
                tenantID: tenantID, kind: kind, clientAppKey: clientAppKey, make: make, seal: seal, auditDetails: auditDetails,
                actor: actor, at: date)
        }
    }

    private func putOnce(
        tenantID: String, kind: PushCredential.Kind, clientAppKey: String,
        make: @escaping @Sendable (PushCredential?) -> PushCredential, seal: @escaping @Sendable (PushCredential) throws -> Data,
        auditDetails: @escaping @Sendable (PushCredential) -> [String: String], actor: String, at date: Date
    ) async throws -> PushCredential {
        try await database.transaction { executor in
            let existing = try await credentials.find(tenantID: tenantID, kind: kind, clientAppKey: clientAppKey, on: executor)
            let credential = make(existing)
            let sealed = try seal(credential)
            if existing == nil {
                try await credentials.insert(credential, sealedSecret: sealed, on: executor)
            } else {
                try await credentials.replace(credential, sealedSecret: sealed, on: executor)
            }
            try await audit.record(
                "push_credential.set", actor: actor, tenantID: tenantID, target: ("push_credential", credential.id),
                details: auditDetails(credential), at: date, on: executor)
            return credential
        }
    }

    func delete(tenantID: String, kind: PushCredential.Kind, clientAppKey: String, actor: String, at date: Date,
                auditDetails: @escaping @Sendable (PushCredential) -> [String: String]) async throws -> PushCredential? {
        try await database.transaction { executor in
            guard let deleted = try await credentials.delete(
                tenantID: tenantID, kind: kind, clientAppKey: clientAppKey, on: executor) else { return nil }
            try await audit.record(
                "push_credential.deleted", actor: actor, tenantID: tenantID, target: ("push_credential", deleted.id),
                details: auditDetails(deleted), at: date, on: executor)
            return deleted
        }
    }
}
