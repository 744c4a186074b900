import CountersignCore
import Foundation

/// A row of `clients` as stored: decoded by column name, then turned into a `Client` (lists of
/// words split, the key set parsed and checked). The secret hash is not among its columns.
struct ClientRow: Decodable {
    /// The columns `CodingKeys` names, for `SELECT`.
    static let columns = CodingKeys.allCases.map(\.rawValue).joined(separator: ", ")

    var id: String
    var tenantID: String
    var name: String
    /// Scopes, separated by spaces.
    var scopes: String
    var deliveryMode: Client.DeliveryMode
    var notificationEndpoint: String?
    var createdAt: Date
    var updatedAt: Date
    var defaultAcr: String?
    var minimumAcr: String?
    var authenticationMethod: Client.AuthenticationMethod
    /// The key set as canonical JSON.
    var jwks: String?
    var requireSignedRequestObject: Bool
    var backchannelUserCodeParameter: Bool
    var backchannelRequestsPerMinute: Int?
    /// Type names, separated by spaces; NULL for none.
    var authorizationDetailsTypes: String?
    /// Only the API writes the column, and only values it parsed: another value is
    /// `StorageError.corrupt`.
    var idTokenSignedResponseAlg: TokenSigningAlgorithm
    /// URIs, separated by spaces; NULL for none.
    var redirectURIs: String?
    var postLogoutRedirectURIs: String?
    var requirePushedAuthorizationRequests: Bool
    /// `AuthenticatorPolicy` as JSON; NULL for none.
    var authenticators: String?
    var directoryPassword: Bool
    /// Group ids, separated by spaces; NULL for none.
    var allowedGroups: String?
    var rememberBrowserDays: Int?

    enum CodingKeys: String, CodingKey, CaseIterable {
        case id
        case tenantID = "tenant_id"
        case name, scopes
        case deliveryMode = "delivery_mode"
        case notificationEndpoint = "notification_endpoint"
        case createdAt = "created_at"
        case updatedAt = "updated_at"
        case defaultAcr = "default_acr"
        case minimumAcr = "minimum_acr"
        case authenticationMethod = "token_endpoint_auth_method"
        case jwks
        case requireSignedRequestObject = "require_signed_request_object"
        case backchannelUserCodeParameter = "backchannel_user_code_parameter"
        case backchannelRequestsPerMinute = "backchannel_requests_per_minute"
        case authorizationDetailsTypes = "authorization_details_types"
        case idTokenSignedResponseAlg = "id_token_signed_response_alg"
        case redirectURIs = "redirect_uris"
        case postLogoutRedirectURIs = "post_logout_redirect_uris"
        case requirePushedAuthorizationRequests = "require_pushed_authorization_requests"
        case authenticators
        case directoryPassword = "directory_password"
        case allowedGroups = "allowed_groups"
        case rememberBrowserDays = "remember_browser_days"
    }

    func client() throws(StorageError) -> Client {
        func words(_ text: String) -> [String] { text.split(separator: " ").map(String.init) }
        return Client(
            id: id, tenantID: tenantID, name: name, scopes: words(scopes), deliveryMode: deliveryMode,
            notificationEndpoint: notificationEndpoint, createdAt: createdAt, updatedAt: updatedAt,
            defaultAcr: defaultAcr, minimumAcr: minimumAcr, authenticationMethod: authenticationMethod,
            jwks: try jwks.map(Self.keySet), requireSignedRequestObject: requireSignedRequestObject,
            backchannelUserCodeParameter: backchannelUserCodeParameter,
            backchannelRequestsPerMinute: backchannelRequestsPerMinute,
            authorizationDetailsTypes: authorizationDetailsTypes.map(words) ?? [],
            idTokenSignedResponseAlg: idTokenSignedResponseAlg, redirectURIs: redirectURIs.map(words) ?? [],
            postLogoutRedirectURIs: postLogoutRedirectURIs.map(words) ?? [],
            requirePushedAuthorizationRequests: requirePushedAuthorizationRequests,
            authenticators: try authenticators.map(Self.authenticatorPolicy), directoryPassword: directoryPassword,
            allowedGroups: allowedGroups.map(words) ?? [], rememberBrowserDays: rememberBrowserDays)
    }

    /// The policy was checked when it was set; one that no longer parses means the row was altered.
    private static func authenticatorPolicy(_ text: String) throws(StorageError) -> AuthenticatorPolicy {
        do { return try JSONDecoder().decode(AuthenticatorPolicy.self, from: Data(text.utf8)) } catch {
            throw .corrupt("clients.authenticators")
        }
    }

    /// Keys were checked on upload; one that no longer parses means the row was altered.
    private static func keySet(_ text: String) throws(StorageError) -> ClientJWKS {
        do { return try ClientJWKS(validating: try JSONValue(parsing: Data(text.utf8))) } catch {
            throw .corrupt("clients.jwks")
        }
    }
}

/// A row of `clients` with its secret hash, for client authentication: `ClientRow`'s columns
/// and `secret_hash`.
struct ClientSecretRow: Decodable {
    var client: ClientRow
    var secretHash: Data

    enum CodingKeys: String, CodingKey {
        case secretHash = "secret_hash"
    }

    init(from decoder: any Decoder) throws {
        client = try ClientRow(from: decoder)
        secretHash = try decoder.container(keyedBy: CodingKeys.self).decode(Data.self, forKey: .secretHash)
    }
}
