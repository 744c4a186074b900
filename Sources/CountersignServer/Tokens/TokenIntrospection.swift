import CountersignCore
import Foundation

/// `POST /introspect` (RFC 7662), client-authenticated like the token endpoint: resource
/// servers are registered as clients of the tenant. Form parameter `token`.
///
/// - an access token of this tenant: active while its signature, issuer and expiry hold, it is
///   not revoked and its user is active, whichever client of the tenant asks (a resource server
///   is not the client the token was issued to).
/// - a refresh token: active only for the client that holds it, while it is unused, unrevoked,
///   unexpired and its user is active; to any other client it does not exist.
/// - anything else: `{"active": false}`, and nothing more (RFC 7662 §2.2).
struct TokenIntrospection: Sendable {
    let store: any TokenIntrospectionStore
    let now: @Sendable () -> Date
    let accessTokens: AccessTokenVerifier

    func introspect(_ form: FormParameters, client: Client, issuer: Issuer) async throws -> IntrospectionResponse {
        switch try PresentedToken(form) {
        case .jws(let value):
            do {
                return IntrospectionResponse(try await accessTokens.validate(value, issuer: issuer).token)
            } catch is AccessTokenRejection {
                return .inactive
            }
        case .opaque(let value):
            let now = now()
            guard let found = try await store.refreshToken(hash: Secrets.hash(value)),
                  found.family.clientID == client.id, found.family.tenantID == client.tenantID,
                  found.family.revokedAt == nil, found.token.revokedAt == nil, found.token.usedAt == nil,
                  !found.token.isExpired(at: now, in: found.family),
                  let user = try await store.user(id: found.family.userID, tenantID: found.family.tenantID),
                  user.status == .active else {
                return .inactive
            }
            return IntrospectionResponse(found.token, of: found.family, issuer: issuer.identifier)
        }
    }
}

/// The introspection answer (RFC 7662 §2.2). Members that do not apply are left out, and an
/// inactive token gets `active` alone.
struct IntrospectionResponse: Encodable, Sendable, Equatable {
    static let inactive = IntrospectionResponse(active: false)

    let active: Bool
    var scope: String?
    var clientID: String?
    var sub: String?
    var iss: String?
    var aud: String?
    var exp: Int64?
    var iat: Int64?
    var jti: String?
    var tokenType: String?
    var authTime: Int64?
    var acr: String?
    var amr: [String]?
    /// RFC 9396 §9.2: the details the token grants.
    var authorizationDetails: JSONValue?

    enum CodingKeys: String, CodingKey {
        case active, scope, sub, iss, aud, exp, iat, jti, acr, amr
        case authorizationDetails = "authorization_details"
        case clientID = "client_id"
        case tokenType = "token_type"
        case authTime = "auth_time"
    }

    /// An access token: its own claims, and `token_type` `Bearer`.
    init(_ token: VerifiedAccessToken) {
        self.init(
            active: true, scope: token.scope.joined(separator: " "), clientID: token.clientID, sub: token.userID,
            iss: token.issuer, aud: token.audience, exp: token.expiresAt, iat: token.issuedAt, jti: token.id,
            tokenType: "Bearer", authTime: token.authTime, acr: token.acr, amr: token.amr,
            authorizationDetails: token.authorizationDetails)
    }

    /// A refresh token: its grant's scope and approval, when it was issued and when it expires.
    /// No `token_type`: RFC 7662 means by it the type of an access token (RFC 6749 §7.1).
    init(_ token: RefreshToken, of family: RefreshTokenFamily, issuer: String) {
        self.init(
            active: true, scope: family.scope.joined(separator: " "), clientID: family.clientID, sub: family.userID,
            iss: issuer, exp: Self.seconds(min(token.expiresAt, family.expiresAt)), iat: Self.seconds(token.issuedAt),
            authTime: Self.seconds(family.authTime), acr: family.acr, amr: family.amr,
            authorizationDetails: family.authorizationDetails?.json)
    }

    private init(active: Bool, scope: String? = nil, clientID: String? = nil, sub: String? = nil, iss: String? = nil,
                 aud: String? = nil, exp: Int64? = nil, iat: Int64? = nil, jti: String? = nil, tokenType: String? = nil,
                 authTime: Int64? = nil, acr: String? = nil, amr: [String]? = nil,
                 authorizationDetails: JSONValue? = nil) {
        self.active = active
        self.scope = scope
        self.clientID = clientID
        self.sub = sub
        self.iss = iss
        self.aud = aud
        self.exp = exp
        self.iat = iat
        self.jti = jti
        self.tokenType = tokenType
        self.authTime = authTime
        self.acr = acr
        self.amr = amr
        self.authorizationDetails = authorizationDetails
    }

    private static func seconds(_ date: Date) -> Int64 {
        Int64(date.timeIntervalSince1970.rounded(.down))
    }
}
