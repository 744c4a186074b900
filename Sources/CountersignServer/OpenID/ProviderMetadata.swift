import Foundation

/// The tenant's OpenID Provider metadata (OpenID Connect Discovery 1.0 §3, CIBA §4), served at
/// `<issuer>/.well-known/openid-configuration`. It lists only what works today.
///
/// - Token delivery: `poll`, `ping`, and `push` unless the tenant's policy refuses it.
/// - `scopes_supported` lists the scopes with a meaning of their own: `openid`, `offline_access`
///   (a refresh token) and `profile` (the user's names at UserInfo). Further scope values are
///   granted per client by the administrator and passed into the access token; they are a
///   client's registration, not public metadata (Discovery §3 lets a provider leave supported
///   scopes unadvertised).
/// - The authorization endpoint issues codes only (`response_type=code`, `response_mode=query`)
///   with PKCE `S256`, names itself with `iss` in its answers (RFC 9207), and takes pushed
///   requests (RFC 9126); `end_session_endpoint` signs the user out (RP-Initiated Logout).
/// - Clients authenticate with their secret or with `private_key_jwt`, public clients with
///   their id alone at the token and revocation endpoints (`none`). Signed requests
///   (`request`) are taken at `bc-authorize` (CIBA §7.1.1), not at the authorization endpoint,
///   so `request_parameter_supported` is false and
///   `backchannel_authentication_request_signing_alg_values_supported` lists their algorithms.
/// - ID tokens (and access tokens) are signed with ES256 or RS256, as each client registered
///   (`id_token_signed_response_alg`); OpenID Connect Core §15.1 makes RS256 mandatory to offer.
/// - `user_code` is checked for clients registered for it.
/// - `authorization_details_types_supported` (RFC 9396 §10.1) lists the tenant's registered
///   authorization detail types, and is left out while it has none.
/// - `countersign_approval_receipt_endpoint` is Countersign's own: where a client fetches the
///   device-signed receipt of a decided request.
struct ProviderMetadata: Encodable, Sendable {
    static let cibaGrantType = "urn:openid:params:grant-type:ciba"

    let issuer: String
    let jwksURI: String
    let tokenEndpoint: String
    let backchannelAuthenticationEndpoint: String
    let receiptEndpoint: String
    let revocationEndpoint: String
    let introspectionEndpoint: String
    let userInfoEndpoint: String
    let authorizationEndpoint: String
    let pushedAuthorizationRequestEndpoint: String
    let endSessionEndpoint: String
    let responseTypesSupported = ["code"]
    let responseModesSupported = ["query"]
    let codeChallengeMethodsSupported = [CodeChallenge.method]
    let authorizationResponseIssParameterSupported = true
    let requirePushedAuthorizationRequests = false
    let requestURIParameterSupported = false
    let promptValuesSupported = AuthorizationRequest.Prompt.allCases.map(\.rawValue)
    /// Push is left out where the tenant's policy refuses it.
    let backchannelTokenDeliveryModesSupported: [String]
    let backchannelUserCodeParameterSupported = true
    let grantTypesSupported = [AuthorizationCodeGrant.grantType, cibaGrantType, RefreshTokenGrant.grantType]
    /// The token and revocation endpoints take every method, a public client's `none` among
    /// them; introspection and the backchannel endpoint only those that authenticate.
    static let clientAuthenticationMethods = Client.AuthenticationMethod.allCases.map(\.rawValue)
    static let confidentialAuthenticationMethods = Client.AuthenticationMethod.allCases.filter { $0 != .none }.map(\.rawValue)
    /// What clients sign with: assertions, signed requests, login hint tokens.
    static let clientSigningAlgorithms = ClientJWSAlgorithm.allCases.map(\.rawValue)
    let tokenEndpointAuthMethodsSupported = clientAuthenticationMethods
    let revocationEndpointAuthMethodsSupported = clientAuthenticationMethods
    let introspectionEndpointAuthMethodsSupported = confidentialAuthenticationMethods
    let tokenEndpointAuthSigningAlgValuesSupported = clientSigningAlgorithms
    let revocationEndpointAuthSigningAlgValuesSupported = clientSigningAlgorithms
    let introspectionEndpointAuthSigningAlgValuesSupported = clientSigningAlgorithms
    let backchannelAuthenticationRequestSigningAlgValuesSupported = clientSigningAlgorithms
    let idTokenSigningAlgValuesSupported = TokenSigningAlgorithm.allCases.map(\.rawValue)
    let scopesSupported = [Scope.openID, RefreshTokenFamily.offlineAccessScope, UserInfo.profileScope]
    let subjectTypesSupported = ["public"]
    let acrValuesSupported = AuthenticationContext.supportedClasses
    let claimsSupported = ["iss", "sub", "aud", "exp", "iat", "auth_time", "nonce", "acr", "amr", "preferred_username", "name"]
    let claimsParameterSupported = false
    let requestParameterSupported = false
    let authorizationDetailsTypesSupported: [String]?

    init(_ issuer: Issuer) {
        let types = issuer.tenant.authorizationDetailTypes.names
        authorizationDetailsTypesSupported = types.isEmpty ? nil : types
        self.issuer = issuer.identifier
        backchannelTokenDeliveryModesSupported = issuer.tenant.policy.pushDeliveryAllowed ? ["poll", "ping", "push"] : ["poll", "ping"]
        jwksURI = issuer.jwksURI
        tokenEndpoint = issuer.tokenEndpoint
        backchannelAuthenticationEndpoint = issuer.backchannelAuthenticationEndpoint
        receiptEndpoint = issuer.receiptEndpoint
        revocationEndpoint = issuer.revocationEndpoint
        introspectionEndpoint = issuer.introspectionEndpoint
        userInfoEndpoint = issuer.userInfoEndpoint
        authorizationEndpoint = issuer.authorizationEndpoint
        pushedAuthorizationRequestEndpoint = issuer.pushedAuthorizationRequestEndpoint
        endSessionEndpoint = issuer.endSessionEndpoint
    }

    enum CodingKeys: String, CodingKey {
        case issuer
        case jwksURI = "jwks_uri"
        case tokenEndpoint = "token_endpoint"
        case backchannelAuthenticationEndpoint = "backchannel_authentication_endpoint"
        case receiptEndpoint = "countersign_approval_receipt_endpoint"
        case revocationEndpoint = "revocation_endpoint"
        case introspectionEndpoint = "introspection_endpoint"
        case userInfoEndpoint = "userinfo_endpoint"
        case authorizationEndpoint = "authorization_endpoint"
        case pushedAuthorizationRequestEndpoint = "pushed_authorization_request_endpoint"
        case endSessionEndpoint = "end_session_endpoint"
        case responseTypesSupported = "response_types_supported"
        case responseModesSupported = "response_modes_supported"
        case codeChallengeMethodsSupported = "code_challenge_methods_supported"
        case authorizationResponseIssParameterSupported = "authorization_response_iss_parameter_supported"
        case requirePushedAuthorizationRequests = "require_pushed_authorization_requests"
        case requestURIParameterSupported = "request_uri_parameter_supported"
        case promptValuesSupported = "prompt_values_supported"
        case revocationEndpointAuthMethodsSupported = "revocation_endpoint_auth_methods_supported"
        case introspectionEndpointAuthMethodsSupported = "introspection_endpoint_auth_methods_supported"
        case backchannelTokenDeliveryModesSupported = "backchannel_token_delivery_modes_supported"
        case backchannelUserCodeParameterSupported = "backchannel_user_code_parameter_supported"
        case grantTypesSupported = "grant_types_supported"
        case tokenEndpointAuthMethodsSupported = "token_endpoint_auth_methods_supported"
        case tokenEndpointAuthSigningAlgValuesSupported = "token_endpoint_auth_signing_alg_values_supported"
        case revocationEndpointAuthSigningAlgValuesSupported = "revocation_endpoint_auth_signing_alg_values_supported"
        case introspectionEndpointAuthSigningAlgValuesSupported = "introspection_endpoint_auth_signing_alg_values_supported"
        case backchannelAuthenticationRequestSigningAlgValuesSupported = "backchannel_authentication_request_signing_alg_values_supported"
        case idTokenSigningAlgValuesSupported = "id_token_signing_alg_values_supported"
        case scopesSupported = "scopes_supported"
        case subjectTypesSupported = "subject_types_supported"
        case acrValuesSupported = "acr_values_supported"
        case claimsSupported = "claims_supported"
        case claimsParameterSupported = "claims_parameter_supported"
        case requestParameterSupported = "request_parameter_supported"
        case authorizationDetailsTypesSupported = "authorization_details_types_supported"
    }
}
