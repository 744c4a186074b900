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
    /// The hosted sign-in asks for the user's password in the tenant's directory, checked by an
    /// LDAP bind, before it sends the request to the phone (`DirectoryPasswords`).
    public var directoryPassword = false
    /// Only members of one of these groups (ids) may sign in to it or be asked for by it (the
    /// hosted sign-in, CIBA and the PAM module through it); empty: every user (`GroupReferences`).
    public var allowedGroups: [String] = []
    /// How many days the hosted sign-in may remember a browser for this client, 0 to 90 (0:
    /// never); nil: the tenant's `remembered_browser_days` (`RememberedBrowser`).
    public var rememberBrowserDays: Int? = nil

    /// The most groups `allowed_groups` names.
    static let maximumAllowedGroups = 50

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
        case directoryPassword = "directory_password"
        case allowedGroups = "allowed_groups"
        case rememberBrowserDays = "remember_browser_days"
        case id = "client_id"
        case tenantID = "tenant_id"
        case deliveryMode = "token_delivery_mode"
        case notificationEndpoint = "notification_endpoint"
        case createdAt = "created_at"
        case updatedAt = "updated_at"
    }
}
