import Foundation

/// What the `jti` ledger (`JWTIDLedger`) reads and writes, and nothing else: the identifiers
/// clients used in their JWTs, each until it expires.
protocol JWTIDLedgerStore: Sendable {
    /// Records the identifier unless a live one of the client and purpose holds it, in one
    /// conditional statement, so that two requests racing with one `jti` cannot both succeed;
    /// true when recorded. One that expired before `date` is taken over.
    func recordUse(_ jti: String, clientID: String, purpose: JWTIDLedger.Purpose, until: Date, at date: Date)
        async throws -> Bool
    /// Forgets the identifiers that expired before `date`.
    func forgetExpired(before date: Date) async throws
}

/// The `jti` ledger's store on the server's database (SQLite or PostgreSQL).
struct SQLJWTIDLedgerStore: JWTIDLedgerStore {
    let database: any Database
    var repository: any ClientJWTIDRepository = SQLClientJWTIDRepository()

    func recordUse(_ jti: String, clientID: String, purpose: JWTIDLedger.Purpose, until: Date, at date: Date)
        async throws -> Bool {
        try await repository.record(jti, clientID: clientID, purpose: purpose.rawValue, until: until, at: date, on: database)
    }

    func forgetExpired(before date: Date) async throws {
        try await repository.purge(before: date, on: database)
    }
}
