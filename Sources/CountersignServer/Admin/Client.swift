import CountersignCore
import Foundation

/// A relying party: what asks Countersign to authenticate users. Its secret is shown once and
/// stored as SHA-256.
public struct Client: Sendable, Equatable, Codable {
    public enum DeliveryMode: String, Codable, Sendable, CaseIterable {
        case poll, ping, push
    }

    /// How the client proves who it is at the OAuth endpoints (OpenID Connect Core §9;
    /// `token_endpoint_auth_method` of RFC 7591 §2, whose default is `client_secret_basic`).
    public enum AuthenticationMethod: String, Codable, Sendable, CaseIterable {
        case clientSecretBasic = "client_secret_basic"
        case clientSecretPost = "client_secret_post"
        case privateKeyJWT = "private_key_jwt"

        /// The two secret methods carry the same secret in two places, so either is accepted
        /// for a client registered with one: refusing the other would break clients and
        /// protect nothing. A `private_key_jwt` client has no usable secret at all.
        var usesSecret: Bool { self != .privateKeyJWT }
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
    public var authenticationMethod: AuthenticationMethod = .clientSecretBasic
    /// The client's public keys: for `private_key_jwt`, signed requests and login hint tokens.
    var jwks: ClientJWKS? = nil
    /// Unsigned authentication requests of this client are refused (CIBA §7.1.1, FAPI-CIBA).
    public var requireSignedRequestObject = false
    /// Requests name a `user_code` the user set, which the server checks (CIBA §7.1).
    public var backchannelUserCodeParameter = false
    /// `bc-authorize` requests this client may send per minute (0: no limit); nil: the tenant's
    /// `client_requests_per_minute` (`ClientRateLimit`).
    public var backchannelRequestsPerMinute: Int? = nil

    /// The limits an administrator may set, for a client and as the tenant's default.
    static let requestsPerMinuteRange = 0...1_000_000
    /// The authorization detail types (RFC 9396 §10.2) its requests may carry; each one is in
    /// the tenant's registry.
    public var authorizationDetailsTypes: [String] = []
    /// What its ID tokens and access tokens are signed with (`TokenSigningAlgorithm`).
    public var idTokenSignedResponseAlg: TokenSigningAlgorithm = .es256

    enum CodingKeys: String, CodingKey {
        case name, scopes
        case defaultAcr = "default_acr"
        case minimumAcr = "minimum_acr"
        case jwks
        case authenticationMethod = "token_endpoint_auth_method"
        case requireSignedRequestObject = "require_signed_request_object"
        case backchannelUserCodeParameter = "backchannel_user_code_parameter"
        case backchannelRequestsPerMinute = "backchannel_requests_per_minute"
        case authorizationDetailsTypes = "authorization_details_types"
        case idTokenSignedResponseAlg = "id_token_signed_response_alg"
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

    private static let columns = """
        id, tenant_id, name, scopes, delivery_mode, notification_endpoint, created_at, updated_at, default_acr, minimum_acr,
        token_endpoint_auth_method, jwks, require_signed_request_object, backchannel_user_code_parameter,
        backchannel_requests_per_minute, authorization_details_types, id_token_signed_response_alg
        """

    public func insert(_ client: Client, secretHash: Data, on executor: any SQLExecutor) async throws {
        try await executor.run(
            """
            INSERT INTO clients (id, tenant_id, name, secret_hash, scopes, delivery_mode, notification_endpoint, created_at,
                updated_at, default_acr, minimum_acr, token_endpoint_auth_method, jwks, require_signed_request_object,
                backchannel_user_code_parameter, backchannel_requests_per_minute, authorization_details_types,
                id_token_signed_response_alg)
            VALUES (\(client.id), \(client.tenantID), \(client.name), \(secretHash), \(client.scopes.joined(separator: " ")), \(client.deliveryMode.rawValue), \(client.notificationEndpoint), \(client.createdAt), \(client.updatedAt), \(client.defaultAcr), \(client.minimumAcr), \(client.authenticationMethod.rawValue), \(client.jwks?.canonicalJSON), \(client.requireSignedRequestObject), \(client.backchannelUserCodeParameter), \(client.backchannelRequestsPerMinute), \(Self.typesColumn(client)), \(client.idTokenSignedResponseAlg.rawValue))
            """)
    }

    public func find(id: String, tenantID: String, on executor: any SQLExecutor) async throws -> Client? {
        try await executor.run(
            "SELECT \(raw: Self.columns) FROM clients WHERE id = \(id) AND tenant_id = \(tenantID)").first.map(Self.decode)
    }

    public func list(tenantID: String, after cursor: String?, limit: Int, on executor: any SQLExecutor) async throws -> [Client] {
        try await executor.run(
            "SELECT \(raw: Self.columns) FROM clients WHERE tenant_id = \(tenantID) AND id > \(cursor ?? "") ORDER BY id LIMIT \(Int64(limit))").map(Self.decode)
    }

    public func update(_ client: Client, on executor: any SQLExecutor) async throws {
        try await executor.run(
            """
            UPDATE clients SET name = \(client.name), scopes = \(client.scopes.joined(separator: " ")), delivery_mode = \(client.deliveryMode.rawValue), notification_endpoint = \(client.notificationEndpoint), updated_at = \(client.updatedAt),
                default_acr = \(client.defaultAcr), minimum_acr = \(client.minimumAcr), token_endpoint_auth_method = \(client.authenticationMethod.rawValue), jwks = \(client.jwks?.canonicalJSON), require_signed_request_object = \(client.requireSignedRequestObject),
                backchannel_user_code_parameter = \(client.backchannelUserCodeParameter), backchannel_requests_per_minute = \(client.backchannelRequestsPerMinute), authorization_details_types = \(Self.typesColumn(client)),
                id_token_signed_response_alg = \(client.idTokenSignedResponseAlg.rawValue)
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
        try await executor.run("SELECT secret_hash FROM clients WHERE id = \(id)").first?.data("secret_hash")
    }

    public func findWithSecretHash(id: String, tenantID: String, on executor: any SQLExecutor) async throws
        -> (client: Client, secretHash: Data)? {
        guard let row = try await executor.run(
            "SELECT \(raw: Self.columns), secret_hash FROM clients WHERE id = \(id) AND tenant_id = \(tenantID)").first else { return nil }
        return (try Self.decode(row), try row.data("secret_hash"))
    }

    static func decode(_ row: SQLRow) throws -> Client {
        Client(
            id: try row.string("id"), tenantID: try row.string("tenant_id"), name: try row.string("name"),
            scopes: try row.string("scopes").split(separator: " ").map(String.init),
            deliveryMode: try row.string("delivery_mode", as: Client.DeliveryMode.self),
            notificationEndpoint: try row.optionalString("notification_endpoint"),
            createdAt: try row.date("created_at"), updatedAt: try row.date("updated_at"),
            defaultAcr: try row.optionalString("default_acr"), minimumAcr: try row.optionalString("minimum_acr"),
            authenticationMethod: try row.string("token_endpoint_auth_method", as: Client.AuthenticationMethod.self),
            jwks: try row.optionalString("jwks").map(decodeJWKS),
            requireSignedRequestObject: try row.bool("require_signed_request_object"),
            backchannelUserCodeParameter: try row.bool("backchannel_user_code_parameter"),
            backchannelRequestsPerMinute: try row.optionalInt("backchannel_requests_per_minute").map { Int($0) },
            authorizationDetailsTypes: try row.optionalString("authorization_details_types").map {
                $0.split(separator: " ").map(String.init)
            } ?? [],
            idTokenSignedResponseAlg: try decodeAlgorithm(try row.string("id_token_signed_response_alg")))
    }

    /// Only the API writes the column, and only values it parsed.
    private static func decodeAlgorithm(_ text: String) throws -> TokenSigningAlgorithm {
        guard let algorithm = TokenSigningAlgorithm(rawValue: text) else { throw StorageError.corrupt("clients.id_token_signed_response_alg") }
        return algorithm
    }

    /// Type names hold no spaces (`AuthorizationDetailTypes`), so a space separates them.
    private static func typesColumn(_ client: Client) -> SQLValue {
        client.authorizationDetailsTypes.isEmpty ? .null : .text(client.authorizationDetailsTypes.joined(separator: " "))
    }

    /// Keys were checked on upload; one that no longer parses means the row was altered.
    private static func decodeJWKS(_ text: String) throws -> ClientJWKS {
        do { return try ClientJWKS(validating: try JSONValue(parsing: Data(text.utf8))) } catch {
            throw StorageError.corrupt("clients.jwks")
        }
    }
}
