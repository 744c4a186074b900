import Foundation

/// What the per-client limit of `bc-authorize` (`ClientRateLimit`) reads and writes, and
/// nothing else: the requests each client was let through, per minute. Each method is one
/// statement on its own (no transaction, no lock on the client), so nodes on one PostgreSQL
/// database share the count.
protocol ClientRateLimitStore: Sendable {
    /// The requests counted for the client in the minutes that start at `previousMinute` and
    /// at `currentMinute`.
    func requestCounts(clientID: String, previousMinute: Date, currentMinute: Date) async throws
        -> (previous: Int64, current: Int64)
    /// Counts one more request in the minute that starts at `minute`, unless it holds
    /// `capacity` already; of two nodes racing for the last place one wins. True if counted.
    func countRequest(clientID: String, minute: Date, capacity: Int64) async throws -> Bool
}

/// The client rate limit's store on the server's database (SQLite or PostgreSQL).
struct SQLClientRateLimitStore: ClientRateLimitStore {
    let database: any Database
    let windows: any ClientRequestWindowRepository

    func requestCounts(clientID: String, previousMinute: Date, currentMinute: Date) async throws
        -> (previous: Int64, current: Int64) {
        try await windows.counts(clientID: clientID, previous: previousMinute, current: currentMinute, on: database)
    }

    func countRequest(clientID: String, minute: Date, capacity: Int64) async throws -> Bool {
        try await windows.count(clientID: clientID, window: minute, capacity: capacity, on: database)
    }
}
