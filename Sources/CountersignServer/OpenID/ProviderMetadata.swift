import Foundation

/// The tenant's OpenID Provider metadata (OpenID Connect Discovery 1.0 §3, CIBA §4), served at
/// `<issuer>/.well-known/openid-configuration`. It lists only what works today.
///
/// - Token delivery: `poll` only; ping and push clients are refused at `bc-authorize` until
///   those modes exist.
/// - `scopes_supported` is `["openid"]`: the one scope with a meaning of its own. Further scope
///   values are granted per client by the administrator and passed into the access token; they
///   are a client's registration, not public metadata (Discovery §3 lets a provider leave
///   supported scopes unadvertised).
/// - No authorization endpoint: a CIBA-only provider has none, so `response_types_supported`
///   (which describes that endpoint) is left out rather than filled with untrue values.
/// - No `user_code` (`backchannel_user_code_parameter_supported: false`) and no signed
///   authentication requests (no `backchannel_authentication_request_signing_alg_values_supported`).
/// - `countersign_approval_receipt_endpoint` is Countersign's own: where a client fetches the
///   device-signed receipt of a decided request.
struct ProviderMetadata: Encodable, Sendable {
    static let cibaGrantType = "urn:openid:params:grant-type:ciba"

    let issuer: String
    let jwksURI: String
    let tokenEndpoint: String
    let backchannelAuthenticationEndpoint: String
    let receiptEndpoint: String
    let backchannelTokenDeliveryModesSupported = ["poll"]
    let backchannelUserCodeParameterSupported = false
    let grantTypesSupported = [cibaGrantType]
    let tokenEndpointAuthMethodsSupported = ["client_secret_basic", "client_secret_post"]
    let idTokenSigningAlgValuesSupported = ["ES256"]
    let scopesSupported = ["openid"]
    let subjectTypesSupported = ["public"]
    let acrValuesSupported = AuthenticationContext.supportedClasses
    let claimsSupported = ["iss", "sub", "aud", "exp", "iat", "auth_time", "acr", "amr"]
    let claimsParameterSupported = false
    let requestParameterSupported = false

    init(_ issuer: Issuer) {
        self.issuer = issuer.identifier
        jwksURI = issuer.jwksURI
        tokenEndpoint = issuer.tokenEndpoint
        backchannelAuthenticationEndpoint = issuer.backchannelAuthenticationEndpoint
        receiptEndpoint = issuer.receiptEndpoint
    }

    enum CodingKeys: String, CodingKey {
        case issuer
        case jwksURI = "jwks_uri"
        case tokenEndpoint = "token_endpoint"
        case backchannelAuthenticationEndpoint = "backchannel_authentication_endpoint"
        case receiptEndpoint = "countersign_approval_receipt_endpoint"
        case backchannelTokenDeliveryModesSupported = "backchannel_token_delivery_modes_supported"
        case backchannelUserCodeParameterSupported = "backchannel_user_code_parameter_supported"
        case grantTypesSupported = "grant_types_supported"
        case tokenEndpointAuthMethodsSupported = "token_endpoint_auth_methods_supported"
        case idTokenSigningAlgValuesSupported = "id_token_signing_alg_values_supported"
        case scopesSupported = "scopes_supported"
        case subjectTypesSupported = "subject_types_supported"
        case acrValuesSupported = "acr_values_supported"
        case claimsSupported = "claims_supported"
        case claimsParameterSupported = "claims_parameter_supported"
        case requestParameterSupported = "request_parameter_supported"
    }
}
