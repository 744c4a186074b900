import Foundation

/// A relying party: what asks Countersign to authenticate users. Its secret is shown once and
/// stored as SHA-256.
public struct Client: Sendable, Equatable, Codable {
    public enum DeliveryMode: String, Codable, Sendable, CaseIterable {
        case poll, ping, push
    }

    public var id: String
    public var tenantID: String
    public var name: String
    public var scopes: [String]
    public var deliveryMode: DeliveryMode
    public var notificationEndpoint: String?
    public var createdAt: Date
    public var updatedAt: Date
    /// The class (`acr`) a request of this client requires when it asks for none; nil: the tenant's.
    public var defaultAcr: String? = nil
    /// No request of this client requires less; the stronger of this and the tenant's minimum applies.
    public var minimumAcr: String? = nil

    enum CodingKeys: String, CodingKey {
        case name, scopes
        case defaultAcr = "default_acr"
        case minimumAcr = "minimum_acr"
        case id = "client_id"
        case tenantID = "tenant_id"
        case deliveryMode = "token_delivery_mode"
        case notificationEndpoint = "notification_endpoint"
        case createdAt = "created_at"
        case updatedAt = "updated_at"
    }
}

public protocol ClientRepository: Sendable {
    func insert(_ client: Client, secretHash: Data, on executor: any SQLExecutor) async throws
    func find(id: String, tenantID: String, on executor: any SQLExecutor) async throws -> Client?
    func list(tenantID: String, after cursor: String?, limit: Int, on executor: any SQLExecutor) async throws -> [Client]
    func update(_ client: Client, on executor: any SQLExecutor) async throws
    func replaceSecret(id: String, secretHash: Data, at date: Date, on executor: any SQLExecutor) async throws
    func delete(id: String, on executor: any SQLExecutor) async throws
    /// The stored secret hash, for client authentication.
    func secretHash(id: String, on executor: any SQLExecutor) async throws -> Data?
    /// The client and its stored secret hash in one read, for client authentication.
    func findWithSecretHash(id: String, tenantID: String, on executor: any SQLExecutor) async throws
        -> (client: Client, secretHash: Data)?
}

public struct SQLClientRepository: ClientRepository {
    public init() {}

    private static let columns = "id, tenant_id, name, scopes, delivery_mode, notification_endpoint, created_at, updated_at, default_acr, minimum_acr"

    public func insert(_ client: Client, secretHash: Data, on executor: any SQLExecutor) async throws {
        try await executor.query(
            """
            INSERT INTO clients (id, tenant_id, name, secret_hash, scopes, delivery_mode, notification_endpoint, created_at,
                updated_at, default_acr, minimum_acr)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
            """,
            .text(client.id), .text(client.tenantID), .text(client.name), .blob(secretHash),
            .text(client.scopes.joined(separator: " ")), .text(client.deliveryMode.rawValue),
            SQLValue(client.notificationEndpoint), SQLValue(client.createdAt), SQLValue(client.updatedAt),
            SQLValue(client.defaultAcr), SQLValue(client.minimumAcr))
    }

    public func find(id: String, tenantID: String, on executor: any SQLExecutor) async throws -> Client? {
        try await executor.first(
            "SELECT \(Self.columns) FROM clients WHERE id = ? AND tenant_id = ?", .text(id), .text(tenantID)
        ).map(Self.decode)
    }

    public func list(tenantID: String, after cursor: String?, limit: Int, on executor: any SQLExecutor) async throws -> [Client] {
        try await executor.query(
            "SELECT \(Self.columns) FROM clients WHERE tenant_id = ? AND id > ? ORDER BY id LIMIT ?",
            [.text(tenantID), .text(cursor ?? ""), .integer(Int64(limit))]
        ).map(Self.decode)
    }

    public func update(_ client: Client, on executor: any SQLExecutor) async throws {
        try await executor.query(
            """
            UPDATE clients SET name = ?, scopes = ?, delivery_mode = ?, notification_endpoint = ?, updated_at = ?,
                default_acr = ?, minimum_acr = ?
            WHERE id = ?
            """,
            .text(client.name), .text(client.scopes.joined(separator: " ")), .text(client.deliveryMode.rawValue),
            SQLValue(client.notificationEndpoint), SQLValue(client.updatedAt), SQLValue(client.defaultAcr),
            SQLValue(client.minimumAcr), .text(client.id))
    }

    public func replaceSecret(id: String, secretHash: Data, at date: Date, on executor: any SQLExecutor) async throws {
        try await executor.query(
            "UPDATE clients SET secret_hash = ?, updated_at = ? WHERE id = ?", .blob(secretHash), SQLValue(date), .text(id))
    }

    public func delete(id: String, on executor: any SQLExecutor) async throws {
        try await executor.query("DELETE FROM clients WHERE id = ?", .text(id))
    }

    public func secretHash(id: String, on executor: any SQLExecutor) async throws -> Data? {
        try await executor.first("SELECT secret_hash FROM clients WHERE id = ?", .text(id))?.data("secret_hash")
    }

    public func findWithSecretHash(id: String, tenantID: String, on executor: any SQLExecutor) async throws
        -> (client: Client, secretHash: Data)? {
        guard let row = try await executor.first(
            "SELECT \(Self.columns), secret_hash FROM clients WHERE id = ? AND tenant_id = ?", .text(id), .text(tenantID)
        ) else { return nil }
        return (try Self.decode(row), try row.data("secret_hash"))
    }

    static func decode(_ row: SQLRow) throws -> Client {
        Client(
            id: try row.string("id"), tenantID: try row.string("tenant_id"), name: try row.string("name"),
            scopes: try row.string("scopes").split(separator: " ").map(String.init),
            deliveryMode: Client.DeliveryMode(rawValue: try row.string("delivery_mode")) ?? .poll,
            notificationEndpoint: try row.optionalString("notification_endpoint"),
            createdAt: try row.date("created_at"), updatedAt: try row.date("updated_at"),
            defaultAcr: try row.optionalString("default_acr"), minimumAcr: try row.optionalString("minimum_acr"))
    }
}
