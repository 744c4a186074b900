import CountersignCore
import Foundation

/// The storage of push credentials.
public protocol PushCredentialRepository: Sendable {
    /// The credential of this tenant, kind and client app key, if one is set.
    func find(tenantID: String, kind: PushCredential.Kind, clientAppKey: String, on executor: any SQLExecutor) async throws
        -> PushCredential?
    func insert(_ credential: PushCredential, sealedSecret: Data, on executor: any SQLExecutor) async throws
    /// Replaces the fields and sealed secret of a stored credential (same id).
    func replace(_ credential: PushCredential, sealedSecret: Data, on executor: any SQLExecutor) async throws
    func list(tenantID: String, on executor: any SQLExecutor) async throws -> [PushCredential]
    /// The credential a tenant sends with for `provider`: the most recently set one.
    func active(tenantID: String, provider: PushRegistration.Provider, on executor: any SQLExecutor) async throws
        -> (PushCredential, Data)?
    /// Deletes the credential and returns it; nil if there was none.
    func delete(tenantID: String, kind: PushCredential.Kind, clientAppKey: String, on executor: any SQLExecutor) async throws
        -> PushCredential?
}

public struct SQLPushCredentialRepository: PushCredentialRepository {
    public init() {}

    private typealias Row = PushCredentialRow

    public func find(tenantID: String, kind: PushCredential.Kind, clientAppKey: String, on executor: any SQLExecutor)
        async throws -> PushCredential? {
        try await executor.first(
            """
            SELECT \(raw: Row.columns) FROM push_credentials
            WHERE tenant_id = \(tenantID) AND kind = \(kind) AND client_app_key = \(clientAppKey)
            """, as: Row.self
        )?.credential()
    }

    public func insert(_ credential: PushCredential, sealedSecret: Data, on executor: any SQLExecutor) async throws {
        try await executor.run(
            """
            INSERT INTO push_credentials (id, tenant_id, provider, kind, client_app_key, environment, topic, summary,
                sealed_secret, created_at, updated_at)
            VALUES (\(credential.id), \(credential.tenantID), \(credential.kind.provider), \(credential.kind),
                \(credential.clientAppKey), \(credential.environment), \(credential.topic),
                \(try Self.summaryText(credential)), \(sealedSecret), \(credential.createdAt), \(credential.updatedAt))
            """)
    }

    public func replace(_ credential: PushCredential, sealedSecret: Data, on executor: any SQLExecutor) async throws {
        try await executor.run(
            """
            UPDATE push_credentials
            SET environment = \(credential.environment), topic = \(credential.topic),
                summary = \(try Self.summaryText(credential)), sealed_secret = \(sealedSecret),
                updated_at = \(credential.updatedAt)
            WHERE id = \(credential.id)
            """)
    }

    private static func summaryText(_ credential: PushCredential) throws -> String {
        String(decoding: try JSON.encode(credential.summary), as: UTF8.self)
    }

    public func list(tenantID: String, on executor: any SQLExecutor) async throws -> [PushCredential] {
        try await executor.all(
            """
            SELECT \(raw: Row.columns) FROM push_credentials
            WHERE tenant_id = \(tenantID) ORDER BY provider, updated_at DESC, id DESC
            """, as: Row.self
        ).map { try $0.credential() }
    }

    public func active(tenantID: String, provider: PushRegistration.Provider, on executor: any SQLExecutor) async throws
        -> (PushCredential, Data)? {
        guard let row = try await executor.run(
            """
            SELECT \(raw: Row.columns), sealed_secret FROM push_credentials
            WHERE tenant_id = \(tenantID) AND provider = \(provider)
            ORDER BY updated_at DESC, id DESC LIMIT 1
            """).first else { return nil }
        return (try row.decode(Row.self).credential(), try row.decode(column: "sealed_secret", as: Data.self))
    }

    public func delete(tenantID: String, kind: PushCredential.Kind, clientAppKey: String, on executor: any SQLExecutor)
        async throws -> PushCredential? {
        try await executor.first(
            """
            DELETE FROM push_credentials
            WHERE tenant_id = \(tenantID) AND kind = \(kind) AND client_app_key = \(clientAppKey)
            RETURNING \(raw: Row.columns)
            """, as: Row.self
        )?.credential()
    }
}

/// A row of `push_credentials` as stored, without its sealed secret (which only `active`
/// reads): decoded by column name, then turned into a `PushCredential` (the summary parsed).
struct PushCredentialRow: Decodable {
    /// The columns `CodingKeys` names, for `SELECT` and `RETURNING`.
    static let columns = CodingKeys.allCases.map(\.rawValue).joined(separator: ", ")

    var id: String
    var tenantID: String
    var kind: PushCredential.Kind
    var clientAppKey: String
    var environment: PushCredential.Environment?
    var topic: String?
    var summary: String
    var createdAt: Date
    var updatedAt: Date

    enum CodingKeys: String, CodingKey, CaseIterable {
        case id
        case tenantID = "tenant_id"
        case kind
        case clientAppKey = "client_app_key"
        case environment, topic, summary
        case createdAt = "created_at"
        case updatedAt = "updated_at"
    }

    func credential() throws -> PushCredential {
        guard let parsed = try? JSON.decode(PushCredentialSummary.self, from: Data(summary.utf8)) else {
            throw StorageError.corrupt("push credential")
        }
        return PushCredential(
            id: id, tenantID: tenantID, kind: kind, clientAppKey: clientAppKey, environment: environment,
            topic: topic, summary: parsed, createdAt: createdAt, updatedAt: updatedAt)
    }
}
