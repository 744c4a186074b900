import Foundation

/// The storage refresh tokens need: families, their tokens, and the conditional updates that
/// let one use of a token succeed and every other count as a replay.
protocol RefreshTokenRepository: Sendable {
    func insert(_ family: RefreshTokenFamily, on executor: any SQLExecutor) async throws
    func insert(_ token: RefreshToken, on executor: any SQLExecutor) async throws
    /// The token whose value hashes to `tokenHash`, with its family.
    func find(tokenHash: Data, on executor: any SQLExecutor) async throws -> (token: RefreshToken, family: RefreshTokenFamily)?
    /// Whether the family is still unrevoked; on PostgreSQL its row stays locked until the
    /// transaction ends, so that a rotation and a revocation of one family take turns.
    func lockLiveFamily(id: String, on executor: any SQLExecutor) async throws -> Bool
    /// Marks the token used if it is neither used nor revoked; false if it was.
    func markUsed(id: String, at date: Date, on executor: any SQLExecutor) async throws -> Bool
    /// Revokes the family, every token of it, and the unexpired access tokens issued with them;
    /// false if the family was revoked already.
    func revokeFamily(id: String, tenantID: String, at date: Date, on executor: any SQLExecutor) async throws -> Bool
    /// Deletes the families that ended before `date`, with their tokens; returns how many.
    func purge(expiredBefore date: Date, on executor: any SQLExecutor) async throws -> Int
}

struct SQLRefreshTokenRepository: RefreshTokenRepository {
    private typealias Row = RefreshTokenRow

    func insert(_ family: RefreshTokenFamily, on executor: any SQLExecutor) async throws {
        try await executor.run(
            """
            INSERT INTO refresh_token_families (id, tenant_id, client_id, user_id, scope, auth_time, acr, amr,
                created_at, expires_at, revoked_at, authorization_details)
            VALUES (\(family.id), \(family.tenantID), \(family.clientID), \(family.userID),
                \(family.scope.joined(separator: " ")), \(family.authTime), \(family.acr),
                \(family.amr.joined(separator: " ")), \(family.createdAt), \(family.expiresAt), \(family.revokedAt),
                \(family.authorizationDetails?.json.canonicalString))
            """)
    }

    func insert(_ token: RefreshToken, on executor: any SQLExecutor) async throws {
        try await executor.run(
            """
            INSERT INTO refresh_tokens (id, family_id, token_hash, issued_at, expires_at, access_token_id,
                access_token_expires_at, used_at, revoked_at)
            VALUES (\(token.id), \(token.familyID), \(token.tokenHash), \(token.issuedAt), \(token.expiresAt),
                \(token.accessTokenID), \(token.accessTokenExpiresAt), \(token.usedAt), \(token.revokedAt))
            """)
    }

    func find(tokenHash: Data, on executor: any SQLExecutor) async throws
        -> (token: RefreshToken, family: RefreshTokenFamily)? {
        try await executor.first(
            """
            SELECT \(raw: Row.columns)
            FROM refresh_tokens t JOIN refresh_token_families f ON f.id = t.family_id WHERE t.token_hash = \(tokenHash)
            """, as: Row.self
        )?.tokenAndFamily()
    }

    func lockLiveFamily(id: String, on executor: any SQLExecutor) async throws -> Bool {
        // SQLite transactions begin IMMEDIATE and so already exclude every other writer.
        let lock = executor.dialect == .postgres ? " FOR UPDATE" : ""
        return !(try await executor.run(
            "SELECT id FROM refresh_token_families WHERE id = \(id) AND revoked_at IS NULL\(raw: lock)")).isEmpty
    }

    func markUsed(id: String, at date: Date, on executor: any SQLExecutor) async throws -> Bool {
        !(try await executor.run(
            """
            UPDATE refresh_tokens SET used_at = \(date)
            WHERE id = \(id) AND used_at IS NULL AND revoked_at IS NULL RETURNING id
            """)).isEmpty
    }

    func revokeFamily(id: String, tenantID: String, at date: Date, on executor: any SQLExecutor) async throws -> Bool {
        // The family's row first: it is the lock a concurrent rotation waits on.
        guard !(try await executor.run(
            """
            UPDATE refresh_token_families SET revoked_at = \(date)
            WHERE id = \(id) AND revoked_at IS NULL RETURNING id
            """)).isEmpty else { return false }
        try await executor.run(
            "UPDATE refresh_tokens SET revoked_at = \(date) WHERE family_id = \(id) AND revoked_at IS NULL")
        // RFC 7009 §2.1: the access tokens of the same grant go too.
        try await executor.run(
            """
            INSERT INTO revoked_access_tokens (jti, tenant_id, expires_at, revoked_at)
            SELECT access_token_id, \(tenantID), access_token_expires_at, \(date) FROM refresh_tokens
            WHERE family_id = \(id) AND access_token_expires_at > \(date)
            ON CONFLICT (jti) DO NOTHING
            """)
        return true
    }

    func purge(expiredBefore date: Date, on executor: any SQLExecutor) async throws -> Int {
        try await executor.run(
            """
            DELETE FROM refresh_tokens
            WHERE family_id IN (SELECT id FROM refresh_token_families WHERE expires_at < \(date))
            """)
        return try await executor.run(
            "DELETE FROM refresh_token_families WHERE expires_at < \(date) RETURNING id").count
    }
}

/// A refresh token and its family as `find` reads them, from `refresh_tokens t` joined with
/// `refresh_token_families f`: decoded by column name, then split into the two (lists of words
/// split, the authorization details parsed).
struct RefreshTokenRow: Decodable {
    /// What `SELECT` reads for `CodingKeys`: the token's columns, then the family's. The token's
    /// `expires_at` and `revoked_at` are renamed, the family having columns of the same names.
    static let columns = CodingKeys.allCases.map(\.selection).joined(separator: ", ")

    var id: String
    var familyID: String
    var tokenHash: Data
    var issuedAt: Date
    var tokenExpiresAt: Date
    var accessTokenID: String
    var accessTokenExpiresAt: Date
    var usedAt: Date?
    var tokenRevokedAt: Date?
    var tenantID: String
    var clientID: String
    var userID: String
    var scope: String
    var authTime: Date
    var acr: String
    var amr: String
    var createdAt: Date
    var expiresAt: Date
    var revokedAt: Date?
    var authorizationDetails: String?

    enum CodingKeys: String, CodingKey, CaseIterable {
        case id
        case familyID = "family_id"
        case tokenHash = "token_hash"
        case issuedAt = "issued_at"
        case tokenExpiresAt = "token_expires_at"
        case accessTokenID = "access_token_id"
        case accessTokenExpiresAt = "access_token_expires_at"
        case usedAt = "used_at"
        case tokenRevokedAt = "token_revoked_at"
        case tenantID = "tenant_id"
        case clientID = "client_id"
        case userID = "user_id"
        case scope
        case authTime = "auth_time"
        case acr, amr
        case createdAt = "created_at"
        case expiresAt = "expires_at"
        case revokedAt = "revoked_at"
        case authorizationDetails = "authorization_details"

        var selection: String {
            switch self {
            case .tokenExpiresAt: "t.expires_at AS token_expires_at"
            case .tokenRevokedAt: "t.revoked_at AS token_revoked_at"
            case .id, .familyID, .tokenHash, .issuedAt, .accessTokenID, .accessTokenExpiresAt, .usedAt: "t.\(rawValue)"
            case .tenantID, .clientID, .userID, .scope, .authTime, .acr, .amr, .createdAt, .expiresAt, .revokedAt,
                 .authorizationDetails: "f.\(rawValue)"
            }
        }
    }

    func tokenAndFamily() throws -> (token: RefreshToken, family: RefreshTokenFamily) {
        func words(_ text: String) -> [String] { text.split(separator: " ").map(String.init) }
        let token = RefreshToken(
            id: id, familyID: familyID, tokenHash: tokenHash, issuedAt: issuedAt, expiresAt: tokenExpiresAt,
            accessTokenID: accessTokenID, accessTokenExpiresAt: accessTokenExpiresAt, usedAt: usedAt,
            revokedAt: tokenRevokedAt)
        let family = RefreshTokenFamily(
            id: familyID, tenantID: tenantID, clientID: clientID, userID: userID, scope: words(scope),
            authTime: authTime, acr: acr, amr: words(amr), createdAt: createdAt, expiresAt: expiresAt,
            revokedAt: revokedAt,
            authorizationDetails: try authorizationDetails.map(AuthorizationDetails.init(stored:)))
        return (token, family)
    }
}
