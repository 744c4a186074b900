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
        /// A public client (RFC 6749 §2.1): a native app or a browser application, which can keep
        /// no secret. It sends its `client_id` alone, may use only the authorization code grant
        /// (with PKCE, as every client must) and its refresh tokens, and is refused at the CIBA
        /// endpoints, which need a client that proves who it is.
        case none

        /// The two secret methods carry the same secret in two places, so either is accepted
        /// for a client registered with one: refusing the other would break clients and
        /// protect nothing. A `private_key_jwt` client and a public one have no usable secret.
        var usesSecret: Bool { self == .clientSecretBasic || self == .clientSecretPost }
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
    /// Where the authorization endpoint may send the user back (`RedirectURI`); a client with
    /// none cannot use the authorization code flow.
    public var redirectURIs: [String] = []
    /// Where sign-out may send the user back (OpenID Connect RP-Initiated Logout §3.1).
    public var postLogoutRedirectURIs: [String] = []
    /// Authorization requests of this client must be pushed first (RFC 9126 §5).
    public var requirePushedAuthorizationRequests = false
    /// The client's own alternatives for some classes, taking precedence over the tenant's
    /// (`AuthenticationPolicy.alternatives(for:client:)`); nil: the tenant's for every class.
    public var authenticators: AuthenticatorPolicy? = nil

    /// The most redirect URIs of either kind a client registers.
    static let maximumRedirectURIs = 20

    /// Whether the client is public: it has no credentials, only its id.
    public var isPublic: Bool { authenticationMethod == .none }

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
        case redirectURIs = "redirect_uris"
        case postLogoutRedirectURIs = "post_logout_redirect_uris"
        case requirePushedAuthorizationRequests = "require_pushed_authorization_requests"
        case authenticators
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

    private typealias Row = ClientRow

    public func insert(_ client: Client, secretHash: Data, on executor: any SQLExecutor) async throws {
        try await executor.run(
            """
            INSERT INTO clients (id, tenant_id, name, secret_hash, scopes, delivery_mode, notification_endpoint,
                created_at, updated_at, default_acr, minimum_acr, token_endpoint_auth_method, jwks,
                require_signed_request_object, backchannel_user_code_parameter, backchannel_requests_per_minute,
                authorization_details_types, id_token_signed_response_alg, redirect_uris, post_logout_redirect_uris,
                require_pushed_authorization_requests, authenticators)
            VALUES (\(client.id), \(client.tenantID), \(client.name), \(secretHash),
                \(client.scopes.joined(separator: " ")), \(client.deliveryMode), \(client.notificationEndpoint),
                \(client.createdAt), \(client.updatedAt), \(client.defaultAcr), \(client.minimumAcr),
                \(client.authenticationMethod), \(client.jwks?.canonicalJSON),
                \(client.requireSignedRequestObject), \(client.backchannelUserCodeParameter),
                \(client.backchannelRequestsPerMinute), \(Self.typesColumn(client)), \(client.idTokenSignedResponseAlg),
                \(Self.words(client.redirectURIs)), \(Self.words(client.postLogoutRedirectURIs)),
                \(client.requirePushedAuthorizationRequests), \(try Self.json(client.authenticators)))
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
                authenticators = \(try Self.json(client.authenticators))
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
