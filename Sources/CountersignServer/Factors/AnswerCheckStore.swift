import CountersignCore
import Foundation

/// What the checks of an answer (`AnswerCheck`) read and write themselves, and nothing else: the
/// user's name for the custom verifier, and the widening of a request to accept the PIN when the
/// verifier asks for it. (The PIN's count of wrong attempts is `PINAttemptStore`'s.)
protocol AnswerCheckStore: Sendable {
    /// The user, if it still exists in the tenant.
    func user(id: String, tenantID: String) async throws -> User?
    /// Lets the pending request be answered with the PIN instead of the factor it requires.
    func allowPINFallback(requestID: String, verification: TransactionDetails.Verification) async throws
}

/// The answer checks' store on the server's database (SQLite or PostgreSQL).
struct SQLAnswerCheckStore: AnswerCheckStore {
    let database: any Database
    let users: any UserRepository
    let approvals: any ApprovalTransactionRepository

    func user(id: String, tenantID: String) async throws -> User? {
        try await users.find(id: id, tenantID: tenantID, on: database)
    }

    func allowPINFallback(requestID: String, verification: TransactionDetails.Verification) async throws {
        try await approvals.allowPINFallback(id: requestID, verification: verification, on: database)
    }
}
