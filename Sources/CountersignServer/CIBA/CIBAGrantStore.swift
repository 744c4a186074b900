import Foundation

/// What the CIBA grant (`CIBAGrant`) and its poll-rate rule (`PollingRate`) read and write, and
/// nothing else: the request an `auth_req_id` names, its polls, the device that decided it (for
/// the receipt), and the one exchange of an approval for tokens, while its user is active.
protocol CIBAGrantStore: Sendable {
    /// The request whose `auth_req_id` hashes to `authReqIDHash`.
    func request(authReqIDHash: Data) async throws -> ApprovalTransaction?
    /// Records a poll made at `date` if the previous one is still `previous`; false if another
    /// poll was recorded in between.
    func recordPoll(requestID: String, previous: Date?, at date: Date, interval: Int) async throws -> Bool
    /// The device that decided a request, for its receipt (`ApprovalReceipt`).
    func device(id: String) async throws -> Device?
    /// Keeps `certificate` as the device's newest certificate.
    func setCertificate(deviceID: String, _ certificate: String) async throws
    /// Marks the approved request exchanged, stores the tokens minted for it and records who
    /// collected them, all in one transaction, if it was not exchanged yet and its user is still
    /// active.
    func exchange(_ request: ApprovalTransaction, for tokens: IssuedTokens, byClient clientID: String, at date: Date)
        async throws -> TokenExchange
}

/// What became of exchanging an approval for tokens.
enum TokenExchange: Sendable, Equatable {
    case exchanged
    case alreadyExchanged
    /// The user was disabled or removed since the approval.
    case userUnavailable
}

/// The CIBA grant's store on the server's database (SQLite or PostgreSQL).
struct SQLCIBAGrantStore: CIBAGrantStore {
    let database: any Database
    let approvals: any ApprovalTransactionRepository
    let users: any UserRepository
    let devices: any DeviceRepository
    let tokens: TokenIssuer
    let audit: AuditLog

    func request(authReqIDHash: Data) async throws -> ApprovalTransaction? {
        try await approvals.find(authReqIDHash: authReqIDHash, on: database)
    }

    func recordPoll(requestID: String, previous: Date?, at date: Date, interval: Int) async throws -> Bool {
        try await approvals.recordPoll(id: requestID, previous: previous, at: date, interval: interval, on: database)
    }

    func device(id: String) async throws -> Device? {
        try await devices.find(id: id, on: database)
    }

    func setCertificate(deviceID: String, _ certificate: String) async throws {
        try await devices.setCertificate(id: deviceID, certificate, on: database)
    }

    func exchange(_ request: ApprovalTransaction, for tokens: IssuedTokens, byClient clientID: String, at date: Date)
        async throws -> TokenExchange {
        try await database.transaction { executor in
            // The user's state is checked by the update itself: one statement, and no window in
            // which a user disabled after the check still gets tokens.
            guard try await approvals.markExchanged(id: request.id, ifUserActive: request.userID, at: date, on: executor)
            else {
                let user = try await users.find(id: request.userID, tenantID: request.tenantID, on: executor)
                return user?.status == .active ? .alreadyExchanged : .userUnavailable
            }
            try await self.tokens.store(tokens, on: executor)
            try await audit.record(
                "approval.exchanged", actor: "client:\(clientID)", tenantID: request.tenantID,
                target: ("approval", request.id), details: ["user_id": request.userID], at: date, on: executor)
            return .exchanged
        }
    }
}
