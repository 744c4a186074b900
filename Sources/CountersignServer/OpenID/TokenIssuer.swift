import CountersignCore
import Foundation

/// Mints the tokens of an approved request, signed with the tenant's current ES256 key:
///
/// - an access token in the JWT profile of RFC 9068 (`typ` `at+jwt`). Countersign registers no
///   resource servers, so its audience is the client itself (`aud` = `client_id`); resource
///   servers verify it against the issuer's JWKS and read `scope`.
/// - an ID token (OpenID Connect Core §2, `typ` `JWT`) with `auth_time` = when the user decided
///   on the device, and the `acr`/`amr` of `AuthenticationContext`. There is no `nonce` in CIBA.
///
/// Both live ten minutes: long enough for the relying party to act on a decision taken for a
/// transaction, short enough that a leaked token is soon worthless. No refresh token is issued:
/// every new transaction is a new approval.
struct TokenIssuer: Sendable {
    static let accessTokenLifetime = 600
    static let idTokenLifetime = 600
    static let accessTokenType = "at+jwt"
    static let idTokenType = "JWT"

    let keys: TokenSigningKeys

    func issue(for transaction: ApprovalTransaction, client: Client, issuer: Issuer, at date: Date) async throws -> TokenResponse {
        let key = try await keys.keySet(for: issuer.tenant).current
        let issuedAt = Int64(date.timeIntervalSince1970.rounded(.down))
        let authTime = Int64((transaction.decidedAt ?? date).timeIntervalSince1970.rounded(.down))
        let context = AuthenticationContext(of: transaction)
        let scope = transaction.scope.joined(separator: " ")
        let common: [String: JSONValue] = [
            "iss": .string(issuer.identifier), "sub": .string(transaction.userID), "aud": .string(client.id),
            "iat": .integer(issuedAt), "auth_time": .integer(authTime), "acr": .string(context.acr),
            "amr": .array(context.amr.map(JSONValue.string)),
        ]
        var access = common
        access["exp"] = .integer(issuedAt + Int64(Self.accessTokenLifetime))
        access["jti"] = .string(Secrets.randomBytes(16).base64URLEncodedString)
        access["client_id"] = .string(client.id)
        access["scope"] = .string(scope)
        var identity = common
        identity["exp"] = .integer(issuedAt + Int64(Self.idTokenLifetime))
        return TokenResponse(
            accessToken: try Self.sign(access, type: Self.accessTokenType, key: key),
            expiresIn: Self.accessTokenLifetime,
            idToken: try Self.sign(identity, type: Self.idTokenType, key: key),
            scope: scope)
    }

    private static func sign(_ claims: [String: JSONValue], type: String, key: TokenSigningKey) throws -> String {
        try CompactJWS.sign(
            header: ["typ": .string(type), "kid": .string(key.id)], payload: JSONValue.object(claims).canonicalData,
            signer: key.privateKey
        ).serialized
    }
}

/// The token endpoint's success response (RFC 6749 §5.1, OpenID Connect Core §3.1.3.3).
struct TokenResponse: Encodable, Sendable {
    let accessToken: String
    let tokenType = "Bearer"
    let expiresIn: Int
    let idToken: String
    let scope: String

    enum CodingKeys: String, CodingKey {
        case scope
        case accessToken = "access_token"
        case tokenType = "token_type"
        case expiresIn = "expires_in"
        case idToken = "id_token"
    }
}
