import CountersignCore
import Foundation

/// A code of the authorization code flow as stored: only its hash, and everything the token
/// request must match (client, redirect URI, PKCE challenge) or the tokens must state (user,
/// scope, `nonce`, `auth_time`, `acr`, `amr`). A code lives one minute and is redeemed once;
/// after that the row stays until it expires as the record of what the redemption issued, so
/// that a second use revokes it (RFC 6749 §4.1.2, RFC 9700 §4.5), for a day after it expired.
struct AuthorizationCode: Sendable, Equatable {
    static let lifetime: TimeInterval = 60
    /// How long a code's row is kept after it expired, so that a late replay still revokes
    /// what the code issued rather than meet an unknown code.
    static let replayRetention: TimeInterval = 86_400

    let codeHash: Data
    let tenantID: String
    let clientID: String
    let userID: String
    let redirectURI: String
    let scope: [String]
    let nonce: String?
    let codeChallenge: String
    let authTime: Date
    let context: AuthenticationContext
    /// The browser session the sign-in made or used.
    let sessionID: String?
    let createdAt: Date
    let expiresAt: Date
    var redeemedAt: Date? = nil
    /// What the redemption issued: the access token's `jti` and expiry, the refresh family.
    var accessTokenID: String? = nil
    var accessTokenExpiresAt: Date? = nil
    var refreshFamilyID: String? = nil

    /// The stored form of a code.
    static func hash(_ code: String) -> Data { Secrets.hash(code) }

    /// A new code for `request`, answered by a sign-in of `userID` at `authTime`; returns the
    /// code to send and the record to store.
    static func issue(for request: AuthorizationRequest, tenantID: String, userID: String, authTime: Date,
                      context: AuthenticationContext, sessionID: String?, at date: Date) -> (code: String, record: AuthorizationCode) {
        let code = Secrets.randomBytes(32).base64URLEncodedString
        return (code, AuthorizationCode(
            codeHash: hash(code), tenantID: tenantID, clientID: request.clientID, userID: userID,
            redirectURI: request.redirectURI, scope: request.scope, nonce: request.nonce,
            codeChallenge: request.codeChallenge, authTime: authTime, context: context, sessionID: sessionID,
            createdAt: date, expiresAt: date.addingTimeInterval(lifetime)))
    }

    /// The grant its redemption issues.
    var grant: TokenGrant {
        TokenGrant(clientID: clientID, userID: userID, scope: scope, authTime: authTime, context: context, nonce: nonce)
    }
}

/// `grant_type=authorization_code` at the token endpoint (RFC 6749 §4.1.3, RFC 7636 §4.5,
/// OpenID Connect Core §3.1.3.2), its checks in order:
///
/// 1. `code` and `code_verifier` are given (`invalid_request`);
/// 2. the code is known, was issued to this client in this tenant and has not expired;
/// 3. `redirect_uri` is the one of the authorization request, character for character;
/// 4. the verifier meets the code's challenge;
/// 5. the code was not redeemed before: a second use is `invalid_grant`, and it revokes the
///    access token and refresh tokens the first use issued, since one of the two holders is
///    not the client (RFC 6749 §4.1.2);
/// 6. the user is still active.
///
/// Every failure of 2–6 is `invalid_grant` and issues nothing. The tokens state the `nonce`
/// of the request, and the user's `auth_time`, `acr` and `amr` of the sign-in.
struct AuthorizationCodeGrant: Sendable {
    static let grantType = "authorization_code"

    let store: any AuthorizationCodeGrantStore
    let tokens: TokenIssuer
    let now: @Sendable () -> Date

    func exchange(_ form: FormParameters, client: Client, issuer: Issuer) async throws -> TokenResponse {
        guard let code = form["code"] else { throw CodeGrantError.missingCode }
        let verifier = try CodeVerifier(form["code_verifier"])
        let now = now()
        guard let record = try await store.code(hash: AuthorizationCode.hash(code)),
              record.clientID == client.id, record.tenantID == client.tenantID else {
            throw CodeGrantError.unknownCode
        }
        guard record.redeemedAt == nil else {
            try await store.revokeIssued(by: record, at: now)
            throw CodeGrantError.codeReused
        }
        guard now < record.expiresAt else { throw CodeGrantError.expired }
        guard form["redirect_uri"] == record.redirectURI else { throw CodeGrantError.redirectURIMismatch }
        guard (try CodeChallenge(challenge: record.codeChallenge, method: CodeChallenge.method)).isMet(by: verifier) else {
            throw ProofKeyError.mismatch
        }
        guard let user = try await store.user(id: record.userID, tenantID: record.tenantID), user.status == .active else {
            throw TokenRequestError.userUnavailable
        }
        let grant = record.grant
        let refresh = RefreshTokenFamily.isOffered(for: grant, to: client)
            ? NewRefreshToken(in: RefreshTokenFamily(starting: grant, tenantID: record.tenantID, at: now), startsFamily: true)
            : nil
        let issued = try await tokens.sign(grant, with: client.idTokenSignedResponseAlg, issuer: issuer, at: now,
                                           refresh: refresh)
        // Two redemptions at once: the one that loses finds the code redeemed, and revokes.
        guard try await store.redeem(record, issued: issued, at: now) else {
            try await store.revokeIssued(by: record, at: now)
            throw CodeGrantError.codeReused
        }
        return issued.response
    }
}

/// Why the code grant gave no tokens (RFC 6749 §5.2).
enum CodeGrantError: OAuthFailure, Equatable {
    case missingCode
    case unknownCode
    case expired
    case codeReused
    case redirectURIMismatch

    var oauthError: OAuthError {
        switch self {
        case .missingCode: OAuthError(.invalidRequest, "code is required")
        case .unknownCode: OAuthError(.invalidGrant, "code is unknown or was issued to another client")
        case .expired: OAuthError(.invalidGrant, "code has expired")
        case .codeReused:
            OAuthError(.invalidGrant, "code was already used; the tokens issued for it are revoked")
        case .redirectURIMismatch:
            OAuthError(.invalidGrant, "redirect_uri must be the one of the authorization request")
        }
    }
}

/// What the code grant reads and writes.
protocol AuthorizationCodeGrantStore: Sendable {
    func code(hash: Data) async throws -> AuthorizationCode?
    func user(id: String, tenantID: String) async throws -> User?
    /// Marks `code` redeemed with what `issued` holds and stores its refresh token, in one
    /// transaction; false, storing nothing, when the code was redeemed already.
    func redeem(_ code: AuthorizationCode, issued: IssuedTokens, at date: Date) async throws -> Bool
    /// Revokes the access token and refresh family that the first redemption of `code` issued.
    func revokeIssued(by code: AuthorizationCode, at date: Date) async throws
}
