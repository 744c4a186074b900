import Foundation

/// A login a RADIUS client waits on (`radius_logins`): what every node reads so that a
/// retransmission, a retry with a new Identifier or a failover joins it instead of sending a
/// second push.
struct RADIUSLogin: Sendable, Equatable {
    var radiusClientID: String
    var userID: String
    /// The Calling-Station-Id, or "" when the request had none.
    var callingStation: String
    /// Names this login: a new one replaces it only if the row still names it.
    var login: String
    /// Its approval; nil while it is being started.
    var transactionID: String?
    /// The State of its Access-Challenge (push-number).
    var state: Data?
    /// The Request Authenticator that was answered Access-Accept.
    var acceptedRequest: Data?
    var createdAt: Date
    var expiresAt: Date
}

/// The storage of `radius_logins`.
protocol RADIUSLoginRepository: Sendable {
    func find(radiusClientID: String, userID: String, callingStation: String, on executor: any SQLExecutor) async throws
        -> RADIUSLogin?
    /// The login whose Access-Challenge carried `state`, of that RADIUS client.
    func find(radiusClientID: String, state: Data, on executor: any SQLExecutor) async throws -> RADIUSLogin?
    /// Stores `login` for its client, user and station: as a new row when `replacing` is nil and
    /// there is none, or over the row that still names the login `replacing`. False when another
    /// node got there first.
    func claim(_ login: RADIUSLogin, replacing: String?, on executor: any SQLExecutor) async throws -> Bool
    /// Names the approval the claimed login started.
    func attach(login: String, transactionID: String, expiresAt: Date, state: Data?, on executor: any SQLExecutor) async throws
    /// Gives up a claimed login whose approval could not be started.
    func release(login: String, on executor: any SQLExecutor) async throws
    /// Records that `request` was answered Access-Accept, unless another request was: true when
    /// this one is (or already was) the accepted one.
    func accept(login: String, request: Data, on executor: any SQLExecutor) async throws -> Bool
    /// Deletes the logins that expired before `date`.
    func sweep(before date: Date, on executor: any SQLExecutor) async throws
}

struct SQLRADIUSLoginRepository: RADIUSLoginRepository {
    private typealias Row = RADIUSLoginRow

    func find(radiusClientID: String, userID: String, callingStation: String, on executor: any SQLExecutor) async throws
        -> RADIUSLogin? {
        try await executor.first(
            """
            SELECT \(raw: Row.columns) FROM radius_logins
            WHERE radius_client_id = \(radiusClientID) AND user_id = \(userID) AND calling_station = \(callingStation)
            """, as: Row.self)?.radiusLogin()
    }

    func find(radiusClientID: String, state: Data, on executor: any SQLExecutor) async throws -> RADIUSLogin? {
        try await executor.first(
            "SELECT \(raw: Row.columns) FROM radius_logins WHERE state = \(state) AND radius_client_id = \(radiusClientID)",
            as: Row.self)?.radiusLogin()
    }

    func claim(_ login: RADIUSLogin, replacing: String?, on executor: any SQLExecutor) async throws -> Bool {
        let claimed: [SQLRow]
        if let replacing {
            claimed = try await executor.run(
                """
                UPDATE radius_logins SET login = \(login.login), transaction_id = NULL, state = \(login.state),
                    accepted_request = NULL, created_at = \(login.createdAt), expires_at = \(login.expiresAt)
                WHERE radius_client_id = \(login.radiusClientID) AND user_id = \(login.userID)
                    AND calling_station = \(login.callingStation) AND login = \(replacing)
                RETURNING login
                """)
        } else {
            claimed = try await executor.run(
                """
                INSERT INTO radius_logins (radius_client_id, user_id, calling_station, login, state, created_at, expires_at)
                VALUES (\(login.radiusClientID), \(login.userID), \(login.callingStation), \(login.login), \(login.state),
                    \(login.createdAt), \(login.expiresAt))
                ON CONFLICT DO NOTHING
                RETURNING login
                """)
        }
        return !claimed.isEmpty
    }

    func attach(login: String, transactionID: String, expiresAt: Date, state: Data?, on executor: any SQLExecutor) async throws {
        try await executor.run(
            """
            UPDATE radius_logins SET transaction_id = \(transactionID), expires_at = \(expiresAt), state = COALESCE(\(state), state)
            WHERE login = \(login)
            """)
    }

    func release(login: String, on executor: any SQLExecutor) async throws {
        try await executor.run("DELETE FROM radius_logins WHERE login = \(login)")
    }

    func accept(login: String, request: Data, on executor: any SQLExecutor) async throws -> Bool {
        let accepted = try await executor.run(
            """
            UPDATE radius_logins SET accepted_request = \(request)
            WHERE login = \(login) AND (accepted_request IS NULL OR accepted_request = \(request))
            RETURNING login
            """)
        return !accepted.isEmpty
    }

    func sweep(before date: Date, on executor: any SQLExecutor) async throws {
        try await executor.run("DELETE FROM radius_logins WHERE expires_at < \(date)")
    }
}

/// A row of `radius_logins` as stored.
struct RADIUSLoginRow: Decodable {
    static let columns = CodingKeys.allCases.map(\.rawValue).joined(separator: ", ")

    var radiusClientID: String
    var userID: String
    var callingStation: String
    var login: String
    var transactionID: String?
    var state: Data?
    var acceptedRequest: Data?
    var createdAt: Date
    var expiresAt: Date

    enum CodingKeys: String, CodingKey, CaseIterable {
        case radiusClientID = "radius_client_id"
        case userID = "user_id"
        case callingStation = "calling_station"
        case login
        case transactionID = "transaction_id"
        case state
        case acceptedRequest = "accepted_request"
        case createdAt = "created_at"
        case expiresAt = "expires_at"
    }

    func radiusLogin() -> RADIUSLogin {
        RADIUSLogin(
            radiusClientID: radiusClientID, userID: userID, callingStation: callingStation, login: login,
            transactionID: transactionID, state: state, acceptedRequest: acceptedRequest, createdAt: createdAt,
            expiresAt: expiresAt)
    }
}
