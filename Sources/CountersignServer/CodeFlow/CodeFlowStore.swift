import CountersignCore
import Foundation

/// What the authorization endpoint and the pushed-request endpoint read and write: clients,
/// pushed requests, and the codes they issue.
protocol AuthorizationStore: Sendable {
    func client(id: String, tenantID: String) async throws -> Client?
    /// Keeps a pushed request under the hash of its `request_uri`.
    func push(_ request: AuthorizationRequest, handleHash: Data, tenantID: String, at date: Date, expiresAt: Date) async throws
    /// The request pushed under `handleHash` by `clientID`, if it is unexpired and unused; it is
    /// used from then on (RFC 9126 §4: a `request_uri` is for one authorization request).
    func takePushed(handleHash: Data, clientID: String, tenantID: String, at date: Date) async throws -> AuthorizationRequest?
    func insert(_ code: AuthorizationCode) async throws
    /// Deletes pushed requests that expired before `date`, and codes that expired before
    /// `date` less `AuthorizationCode.replayRetention`.
    func purgeExpired(before date: Date) async throws
}

/// The code flow's stores on the server's database (SQLite or PostgreSQL).
struct SQLCodeFlowStore: AuthorizationStore, AuthorizationCodeGrantStore {
    let database: any Database
    let clients: any ClientRepository
    let users: any UserRepository
    let audit: AuditLog
    var refreshTokens: any RefreshTokenRepository = SQLRefreshTokenRepository()
    var revokedAccessTokens: any RevokedAccessTokenRepository = SQLRevokedAccessTokenRepository()

    func client(id: String, tenantID: String) async throws -> Client? {
        try await clients.find(id: id, tenantID: tenantID, on: database)
    }

    func push(_ request: AuthorizationRequest, handleHash: Data, tenantID: String, at date: Date, expiresAt: Date) async throws {
        try await database.run(
            """
            INSERT INTO authorization_requests (handle_hash, tenant_id, client_id, parameters, created_at, expires_at)
            VALUES (\(handleHash), \(tenantID), \(request.clientID), \(try Self.json(request)), \(date), \(expiresAt))
            """)
    }

    func takePushed(handleHash: Data, clientID: String, tenantID: String, at date: Date) async throws -> AuthorizationRequest? {
        let text = try await database.first(
            """
            UPDATE authorization_requests SET used_at = \(date)
            WHERE handle_hash = \(handleHash) AND client_id = \(clientID) AND tenant_id = \(tenantID)
                AND used_at IS NULL AND expires_at > \(date)
            RETURNING parameters
            """, column: "parameters", as: String.self)
        return try text.map { try Self.request(fromJSON: $0, column: "authorization_requests.parameters") }
    }

    func insert(_ code: AuthorizationCode) async throws {
        try await database.run(
            """
            INSERT INTO authorization_codes (code_hash, tenant_id, client_id, user_id, redirect_uri, scope, nonce,
                code_challenge, auth_time, acr, amr, session_id, created_at, expires_at)
            VALUES (\(code.codeHash), \(code.tenantID), \(code.clientID), \(code.userID), \(code.redirectURI),
                \(code.scope.joined(separator: " ")), \(code.nonce), \(code.codeChallenge), \(code.authTime),
                \(code.context.acr), \(code.context.amr.joined(separator: " ")), \(code.sessionID), \(code.createdAt),
                \(code.expiresAt))
            """)
    }

    func purgeExpired(before date: Date) async throws {
        try await database.run("DELETE FROM authorization_requests WHERE expires_at < \(date)")
        try await database.run(
            "DELETE FROM authorization_codes WHERE expires_at < \(date.addingTimeInterval(-AuthorizationCode.replayRetention))")
    }

    // MARK: - The code grant

    func code(hash: Data) async throws -> AuthorizationCode? {
        try await database.first(
            "SELECT \(raw: AuthorizationCodeRow.columns) FROM authorization_codes WHERE code_hash = \(hash)",
            as: AuthorizationCodeRow.self)?.code()
    }

    func user(id: String, tenantID: String) async throws -> User? {
        try await users.find(id: id, tenantID: tenantID, on: database)
    }

    func redeem(_ code: AuthorizationCode, issued: IssuedTokens, at date: Date) async throws -> Bool {
        try await database.transaction { executor in
            let won = !(try await executor.run(
                """
                UPDATE authorization_codes SET redeemed_at = \(date), access_token_id = \(issued.accessTokenID),
                    access_token_expires_at = \(issued.accessTokenExpiresAt),
                    refresh_family_id = \(issued.refresh?.token.family.id)
                WHERE code_hash = \(code.codeHash) AND redeemed_at IS NULL RETURNING code_hash
                """)).isEmpty
            guard won else { return false }
            if let refresh = issued.refresh {
                try await refreshTokens.insert(refresh.token.family, on: executor)
                try await refreshTokens.insert(refresh.record, on: executor)
            }
            return true
        }
    }

    func revokeIssued(by code: AuthorizationCode, at date: Date) async throws {
        try await database.transaction { executor in
            // Read again inside the transaction: a redemption that raced this one has by now
            // recorded what it issued.
            guard let current = try await executor.first(
                "SELECT \(raw: AuthorizationCodeRow.columns) FROM authorization_codes WHERE code_hash = \(code.codeHash)",
                as: AuthorizationCodeRow.self)?.code() else { return }
            if let jti = current.accessTokenID, let expiresAt = current.accessTokenExpiresAt, expiresAt > date {
                _ = try await revokedAccessTokens.revoke(jti: jti, tenantID: current.tenantID, expiresAt: expiresAt,
                                                         at: date, on: executor)
            }
            if let family = current.refreshFamilyID {
                _ = try await refreshTokens.revokeFamily(id: family, tenantID: current.tenantID, at: date, on: executor)
            }
            try await audit.record(
                "authorization_code.reused", actor: "client:\(current.clientID)", tenantID: current.tenantID,
                target: ("user", current.userID), details: ["client_id": current.clientID], at: date, on: executor)
        }
    }

    static func json(_ request: AuthorizationRequest) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return String(decoding: try encoder.encode(request), as: UTF8.self)
    }

    /// Only the server writes the column, from a request it checked: one that does not decode
    /// means the row was altered.
    static func request(fromJSON text: String, column: String) throws -> AuthorizationRequest {
        do { return try JSONDecoder().decode(AuthorizationRequest.self, from: Data(text.utf8)) } catch {
            throw StorageError.corrupt(column)
        }
    }
}

/// A row of `authorization_codes` as stored.
struct AuthorizationCodeRow: Decodable {
    static let columns = CodingKeys.allCases.map(\.rawValue).joined(separator: ", ")

    var codeHash: Data
    var tenantID: String
    var clientID: String
    var userID: String
    var redirectURI: String
    var scope: String
    var nonce: String?
    var codeChallenge: String
    var authTime: Date
    var acr: String
    var amr: String
    var sessionID: String?
    var createdAt: Date
    var expiresAt: Date
    var redeemedAt: Date?
    var accessTokenID: String?
    var accessTokenExpiresAt: Date?
    var refreshFamilyID: String?

    enum CodingKeys: String, CodingKey, CaseIterable {
        case scope, nonce, acr, amr
        case codeHash = "code_hash"
        case tenantID = "tenant_id"
        case clientID = "client_id"
        case userID = "user_id"
        case redirectURI = "redirect_uri"
        case codeChallenge = "code_challenge"
        case authTime = "auth_time"
        case sessionID = "session_id"
        case createdAt = "created_at"
        case expiresAt = "expires_at"
        case redeemedAt = "redeemed_at"
        case accessTokenID = "access_token_id"
        case accessTokenExpiresAt = "access_token_expires_at"
        case refreshFamilyID = "refresh_family_id"
    }

    func code() -> AuthorizationCode {
        func words(_ text: String) -> [String] { text.split(separator: " ").map(String.init) }
        return AuthorizationCode(
            codeHash: codeHash, tenantID: tenantID, clientID: clientID, userID: userID, redirectURI: redirectURI,
            scope: words(scope), nonce: nonce, codeChallenge: codeChallenge, authTime: authTime,
            context: AuthenticationContext(acr: acr, amr: words(amr)), sessionID: sessionID, createdAt: createdAt,
            expiresAt: expiresAt, redeemedAt: redeemedAt, accessTokenID: accessTokenID,
            accessTokenExpiresAt: accessTokenExpiresAt, refreshFamilyID: refreshFamilyID)
    }
}
