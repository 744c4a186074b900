import CountersignCore
import Foundation

/// What the `user_code` check (`UserCodeCheck`) reads and writes, and nothing else: a user's
/// code with its lock, the count of wrong codes, and the audit record of a lock.
protocol UserCodeCheckStore: Sendable {
    /// The user's code as stored, if the user set one.
    func code(userID: String) async throws -> StoredUserCode?
    /// A right code: the count of wrong ones goes back to 0.
    func recordSuccess(userID: String) async throws
    /// Counts a wrong code sent by `clientID`; at `limit` in a row the code is locked until
    /// `lockUntil`, and the lock is recorded in the audit log in the same transaction. True
    /// when this failure locked the code.
    func recordFailure(userID: String, tenantID: String, byClient clientID: String, limit: Int, lockUntil: Date,
                       at date: Date) async throws -> Bool
}

/// The `user_code` check's store on the server's database (SQLite or PostgreSQL).
struct SQLUserCodeCheckStore: UserCodeCheckStore {
    let database: any Database
    let audit: AuditLog
    var repository: any UserCodeRepository = SQLUserCodeRepository()

    func code(userID: String) async throws -> StoredUserCode? {
        try await repository.find(userID: userID, on: database)
    }

    func recordSuccess(userID: String) async throws {
        try await repository.resetFailures(userID: userID, on: database)
    }

    func recordFailure(userID: String, tenantID: String, byClient clientID: String, limit: Int, lockUntil: Date,
                       at date: Date) async throws -> Bool {
        try await database.transaction { executor in
            guard let until = try await repository.recordFailure(
                userID: userID, limit: limit, lockUntil: lockUntil, on: executor) else {
                return false
            }
            try await audit.record(
                "user_code.locked", actor: "client:\(clientID)", tenantID: tenantID, target: ("user", userID),
                details: ["locked_until": Timestamps.format(until)], at: date, on: executor)
            return true
        }
    }
}
