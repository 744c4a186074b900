import CountersignCore
import Foundation

/// An identity provider a tenant trusts to say who its users are: a phone may enroll with an
/// access token (or ID token) this issuer signed, instead of a ticket or one of the tenant's own
/// tokens (`TrustedIssuerTokenVerifier`). Trusting an issuer lets it enroll a phone for any user
/// of the tenant, which is why only system keys (`tenants:manage`) set one.
struct TrustedIssuer: Sendable, Equatable {
    /// Where the issuer's public keys come from.
    enum Keys: Sendable, Equatable {
        /// Fetched over HTTPS and cached (`TrustedIssuerKeyCache`), so the issuer can rotate them.
        case uri(String)
        /// Registered here, for an issuer that publishes none (or in tests).
        case inline(ClientJWKS)
    }

    /// The scope a token needs unless the administrator names another (or none).
    static let defaultRequiredScope = EnrollmentService.enrollScope
    /// The OpenID Connect claim most providers put the sign-in name in.
    static let defaultUsernameClaim = "preferred_username"
    /// A bound on the tokens whose `iss` must be looked up, and on the key sets kept in memory.
    static let maximumPerTenant = 10

    var id: String
    var tenantID: String
    /// The exact `iss` of its tokens.
    var issuer: String
    var keys: Keys
    /// A value the token's `aud` must contain: the client id the bank's app has at its provider,
    /// or the audience it asks access tokens for.
    var audience: String
    /// The claim whose value is the user's Countersign username.
    var usernameClaim: String
    /// The scope the token must carry; empty for no scope check (ID tokens carry none).
    var requiredScope: String
    var createdAt: Date
    var updatedAt: Date
}

/// The administration API's view of a trusted issuer: `jwks_uri` or `jwks`, never both.
extension TrustedIssuer: Encodable {
    enum CodingKeys: String, CodingKey {
        case id, issuer, jwks, audience
        case jwksURI = "jwks_uri"
        case usernameClaim = "username_claim"
        case requiredScope = "required_scope"
        case createdAt = "created_at"
        case updatedAt = "updated_at"
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(id, forKey: .id)
        try container.encode(issuer, forKey: .issuer)
        switch keys {
        case .uri(let uri): try container.encode(uri, forKey: .jwksURI)
        case .inline(let jwks): try container.encode(jwks, forKey: .jwks)
        }
        try container.encode(audience, forKey: .audience)
        try container.encode(usernameClaim, forKey: .usernameClaim)
        try container.encode(requiredScope, forKey: .requiredScope)
        try container.encode(createdAt, forKey: .createdAt)
        try container.encode(updatedAt, forKey: .updatedAt)
    }
}
