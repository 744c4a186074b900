import CountersignCore
import Foundation

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

    private typealias Row = ClientRow

    public func insert(_ client: Client, secretHash: Data, on executor: any SQLExecutor) async throws {
        try await executor.run(
            """
            INSERT INTO clients (id, tenant_id, name, secret_hash, scopes, delivery_mode, notification_endpoint,
                created_at, updated_at, default_acr, minimum_acr, token_endpoint_auth_method, jwks,
                require_signed_request_object, backchannel_user_code_parameter, backchannel_requests_per_minute,
                authorization_details_types, id_token_signed_response_alg, redirect_uris, post_logout_redirect_uris,
                require_pushed_authorization_requests, authenticators, directory_password, allowed_groups,
                remember_browser_days)
            VALUES (\(client.id), \(client.tenantID), \(client.name), \(secretHash),
                \(client.scopes.joined(separator: " ")), \(client.deliveryMode), \(client.notificationEndpoint),
                \(client.createdAt), \(client.updatedAt), \(client.defaultAcr), \(client.minimumAcr),
                \(client.authenticationMethod), \(client.jwks?.canonicalJSON),
                \(client.requireSignedRequestObject), \(client.backchannelUserCodeParameter),
                \(client.backchannelRequestsPerMinute), \(Self.typesColumn(client)), \(client.idTokenSignedResponseAlg),
                \(Self.words(client.redirectURIs)), \(Self.words(client.postLogoutRedirectURIs)),
                \(client.requirePushedAuthorizationRequests), \(try Self.json(client.authenticators)),
                \(client.directoryPassword), \(Self.words(client.allowedGroups)), \(client.rememberBrowserDays))
            """)
    }

    public func find(id: String, tenantID: String, on executor: any SQLExecutor) async throws -> Client? {
        try await executor.first(
            "SELECT \(raw: Row.columns) FROM clients WHERE id = \(id) AND tenant_id = \(tenantID)", as: Row.self
        )?.client()
    }

    public func list(tenantID: String, after cursor: String?, limit: Int, on executor: any SQLExecutor) async throws -> [Client] {
        try await executor.all(
            """
            SELECT \(raw: Row.columns) FROM clients
            WHERE tenant_id = \(tenantID) AND id > \(cursor ?? "") ORDER BY id LIMIT \(limit)
            """, as: Row.self
        ).map { try $0.client() }
    }

    public func update(_ client: Client, on executor: any SQLExecutor) async throws {
        try await executor.run(
            """
            UPDATE clients SET name = \(client.name), scopes = \(client.scopes.joined(separator: " ")),
                delivery_mode = \(client.deliveryMode), notification_endpoint = \(client.notificationEndpoint),
                updated_at = \(client.updatedAt), default_acr = \(client.defaultAcr),
                minimum_acr = \(client.minimumAcr),
                token_endpoint_auth_method = \(client.authenticationMethod), jwks = \(client.jwks?.canonicalJSON),
                require_signed_request_object = \(client.requireSignedRequestObject),
                backchannel_user_code_parameter = \(client.backchannelUserCodeParameter),
                backchannel_requests_per_minute = \(client.backchannelRequestsPerMinute),
                authorization_details_types = \(Self.typesColumn(client)),
                id_token_signed_response_alg = \(client.idTokenSignedResponseAlg),
                redirect_uris = \(Self.words(client.redirectURIs)),
                post_logout_redirect_uris = \(Self.words(client.postLogoutRedirectURIs)),
                require_pushed_authorization_requests = \(client.requirePushedAuthorizationRequests),
                authenticators = \(try Self.json(client.authenticators)),
                directory_password = \(client.directoryPassword),
                allowed_groups = \(Self.words(client.allowedGroups)),
                remember_browser_days = \(client.rememberBrowserDays)
            WHERE id = \(client.id)
            """)
    }

    public func replaceSecret(id: String, secretHash: Data, at date: Date, on executor: any SQLExecutor) async throws {
        try await executor.run(
            "UPDATE clients SET secret_hash = \(secretHash), updated_at = \(date) WHERE id = \(id)")
    }

    public func delete(id: String, on executor: any SQLExecutor) async throws {
        try await executor.run("DELETE FROM clients WHERE id = \(id)")
    }

    public func secretHash(id: String, on executor: any SQLExecutor) async throws -> Data? {
        try await executor.first(
            "SELECT secret_hash FROM clients WHERE id = \(id)", column: "secret_hash", as: Data.self)
    }

    public func findWithSecretHash(id: String, tenantID: String, on executor: any SQLExecutor) async throws
        -> (client: Client, secretHash: Data)? {
        guard let row = try await executor.first(
            "SELECT \(raw: Row.columns), secret_hash FROM clients WHERE id = \(id) AND tenant_id = \(tenantID)",
            as: ClientSecretRow.self) else { return nil }
        return (try row.client.client(), row.secretHash)
    }

    /// Type names hold no spaces (`AuthorizationDetailTypes`), so a space separates them; none
    /// is NULL.
    private static func typesColumn(_ client: Client) -> String? {
        words(client.authorizationDetailsTypes)
    }

    /// Words that hold no spaces (type names, and URIs, which `RedirectURI` refuses with
    /// whitespace), separated by one; none is NULL.
    private static func words(_ list: [String]) -> String? {
        list.isEmpty ? nil : list.joined(separator: " ")
    }

    /// A client's policy as canonical JSON; none is NULL.
    private static func json(_ policy: AuthenticatorPolicy?) throws -> String? {
        try policy.map { try JSONValue(encoding: $0).canonicalString }
    }

    /// The names of the clients with these ids, within the tenant (any tenant's for nil).
    func names(ids: [String], tenantID: String?, on executor: any SQLExecutor) async throws -> [String: String] {
        let tenant = tenantID ?? ""
        var names: [String: String] = [:]
        for row in try await executor.run(chunking: ids, { part in
            "SELECT id, name FROM clients WHERE id IN (\(list: part)) AND (\(tenant) = '' OR tenant_id = \(tenant))"
        }) {
            names[try row.decode(column: "id", as: String.self)] = try row.decode(column: "name", as: String.self)
        }
        return names
    }
}
