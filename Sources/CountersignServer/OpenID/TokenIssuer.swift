import CountersignCore
import Foundation

/// Mints the tokens of an approval, signed with the tenant's current key of the algorithm the
/// client registered (`id_token_signed_response_alg`: ES256 unless it chose RS256), the ID
/// token and the access token alike, so that the client needs one algorithm only:
///
/// - an access token in the JWT profile of RFC 9068 (`typ` `at+jwt`). Its audience is the
///   client itself (`aud` = `client_id`); resource servers verify it against the issuer's JWKS
///   and read `scope`, or ask the introspection endpoint, which also knows of revocations.
/// - an ID token (OpenID Connect Core §2, `typ` `JWT`) with `auth_time` = when the user decided
///   on the device, and the `acr`/`amr` of `AuthenticationContext`. There is no `nonce` in CIBA;
///   the code flow's is stated in the ID token of the code's redemption.
///   A refresh whose scope leaves out `openid` gets no ID token (OpenID Connect Core §12.2).
/// - a refresh token when the client asked for `offline_access` (`RefreshTokenFamily`).
///
/// Access and ID tokens live ten minutes: long enough for the relying party to act on a
/// decision taken for a transaction, short enough that a leaked token is soon worthless.
struct TokenIssuer: Sendable {
    static let accessTokenLifetime = 600
    static let idTokenLifetime = 600
    static let accessTokenType = "at+jwt"
    static let idTokenType = "JWT"
    /// CIBA §10.3.1: the claims that bind a pushed ID token to its request and refresh token.
    static let authReqIDClaim = "urn:openid:params:jwt:claim:auth_req_id"
    static let refreshTokenHashClaim = "urn:openid:params:jwt:claim:rt_hash"

    let keys: TokenSigningKeys
    /// Keeps the refresh tokens `issue` hands out.
    let records: any IssuedTokenStore

    /// The tokens of an approved request, stored and ready to hand out. `authReqID` is given in
    /// push mode, where the ID token is the client's only proof of which request and which
    /// tokens it answers: it then carries `auth_req_id`, `at_hash` and, with a refresh token,
    /// `rt_hash`.
    func issue(for transaction: ApprovalTransaction, client: Client, issuer: Issuer, at date: Date,
               authReqID: String? = nil) async throws -> TokenResponse {
        let issued = try await mint(for: transaction, client: client, issuer: issuer, at: date, authReqID: authReqID)
        if issued.refresh != nil { try await records.record(issued) }
        return issued.response
    }

    /// The same tokens, not yet stored: for a caller that stores them (`store`) in the
    /// transaction that decides whether they are handed out at all.
    func mint(for transaction: ApprovalTransaction, client: Client, issuer: Issuer, at date: Date,
              authReqID: String? = nil) async throws -> IssuedTokens {
        let grant = TokenGrant(of: transaction, at: date)
        let refresh = RefreshTokenFamily.isOffered(for: grant, to: client)
            ? NewRefreshToken(in: RefreshTokenFamily(starting: grant, tenantID: transaction.tenantID, at: date), startsFamily: true)
            : nil
        return try await sign(grant, with: client.idTokenSignedResponseAlg, issuer: issuer, at: date, refresh: refresh,
                              authReqID: authReqID)
    }

    /// Signs the access token and, when the scope holds `openid`, the ID token of `grant`, with
    /// the tenant's current key of `algorithm`.
    func sign(_ grant: TokenGrant, with algorithm: TokenSigningAlgorithm, issuer: Issuer, at date: Date,
              refresh: NewRefreshToken?, authReqID: String? = nil) async throws -> IssuedTokens {
        let keySet = try await keys.keySet(for: issuer.tenant)
        let key = try keySet.current(algorithm)
        let issuedAt = Int64(date.timeIntervalSince1970.rounded(.down))
        let scope = grant.scope.joined(separator: " ")
        let common: [String: JSONValue] = [
            "iss": .string(issuer.identifier), "sub": .string(grant.userID), "aud": .string(grant.clientID),
            "iat": .integer(issuedAt), "auth_time": .integer(Int64(grant.authTime.timeIntervalSince1970.rounded(.down))),
            "acr": .string(grant.context.acr), "amr": .array(grant.context.amr.map(JSONValue.string)),
        ]
        let accessTokenID = Secrets.randomBytes(16).base64URLEncodedString
        let accessExpiry = issuedAt + Int64(Self.accessTokenLifetime)
        var access = common
        access["exp"] = .integer(accessExpiry)
        access["jti"] = .string(accessTokenID)
        access["client_id"] = .string(grant.clientID)
        access["scope"] = .string(scope)
        // RFC 9396 §9.1: a resource server reads what was approved from the token itself.
        if let details = grant.authorizationDetails { access[AuthorizationDetails.claim] = details.json }
        let accessToken = try await keySet.sign(access, type: Self.accessTokenType, with: key)

        var idToken: String?
        if grant.scope.contains(Scope.openID) {
            var identity = common
            identity["exp"] = .integer(issuedAt + Int64(Self.idTokenLifetime))
            if let nonce = grant.nonce { identity["nonce"] = .string(nonce) }
            if let authReqID {
                identity[Self.authReqIDClaim] = .string(authReqID)
                identity["at_hash"] = .string(TokenHash.of(accessToken))
                if let refresh { identity[Self.refreshTokenHashClaim] = .string(TokenHash.of(refresh.value)) }
            }
            idToken = try await keySet.sign(identity, type: Self.idTokenType, with: key)
        }
        let accessExpiresAt = Date(timeIntervalSince1970: TimeInterval(accessExpiry))
        return IssuedTokens(
            response: TokenResponse(accessToken: accessToken, expiresIn: Self.accessTokenLifetime, idToken: idToken,
                                    refreshToken: refresh?.value, scope: scope,
                                    authorizationDetails: grant.authorizationDetails?.json),
            refresh: refresh.map {
                ($0, $0.record(at: date, accessTokenID: accessTokenID, accessTokenExpiresAt: accessExpiresAt))
            },
            accessTokenID: accessTokenID, accessTokenExpiresAt: accessExpiresAt)
    }

    /// Stores what `issued` needs stored: the refresh token, and its family when it starts one.
    func store(_ issued: IssuedTokens, on executor: any SQLExecutor) async throws {
        try await records.record(issued, on: executor)
    }
}

/// Where the refresh tokens of issued tokens are kept: in a transaction of their own, or in
/// the caller's.
protocol IssuedTokenStore: Sendable {
    func record(_ issued: IssuedTokens) async throws
    func record(_ issued: IssuedTokens, on executor: any SQLExecutor) async throws
}

/// Issued tokens' refresh tokens on the server's database (SQLite or PostgreSQL).
struct SQLIssuedTokenStore: IssuedTokenStore {
    let database: any Database
    var refreshTokens: any RefreshTokenRepository = SQLRefreshTokenRepository()

    func record(_ issued: IssuedTokens) async throws {
        try await database.transaction { executor in try await record(issued, on: executor) }
    }

    func record(_ issued: IssuedTokens, on executor: any SQLExecutor) async throws {
        guard let refresh = issued.refresh else { return }
        if refresh.token.startsFamily { try await refreshTokens.insert(refresh.token.family, on: executor) }
        try await refreshTokens.insert(refresh.record, on: executor)
    }
}

/// Tokens signed and ready, with the refresh token's record still to store.
struct IssuedTokens: Sendable {
    let response: TokenResponse
    let refresh: (token: NewRefreshToken, record: RefreshToken)?
    /// The access token's `jti` and expiry, to revoke it by.
    let accessTokenID: String
    let accessTokenExpiresAt: Date
}

/// The token endpoint's success response (RFC 6749 §5.1, OpenID Connect Core §3.1.3.3).
struct TokenResponse: Encodable, Sendable {
    let accessToken: String
    let tokenType = "Bearer"
    let expiresIn: Int
    let idToken: String?
    let refreshToken: String?
    let scope: String
    /// RFC 9396 §7: the details granted, when the request carried some.
    var authorizationDetails: JSONValue? = nil

    enum CodingKeys: String, CodingKey {
        case scope
        case authorizationDetails = "authorization_details"
        case accessToken = "access_token"
        case tokenType = "token_type"
        case expiresIn = "expires_in"
        case idToken = "id_token"
        case refreshToken = "refresh_token"
    }
}
