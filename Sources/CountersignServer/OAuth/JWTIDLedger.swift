import Foundation

/// Accepts each `jti` of a client's JWTs once (RFC 7523 §3 item 7, CIBA §7.1.1): an
/// intercepted client assertion or signed request cannot be sent again. A `jti` is remembered
/// until its JWT has expired, skew included, and forgotten after: expired JWTs are refused by
/// their `exp` anyway. Assertions and signed requests are separate purposes, so one value used
/// in both is not a replay.
///
/// Callers use a `jti` only once everything else about the JWT has been checked, so that nobody
/// but the client can use up its identifiers.
struct JWTIDLedger: Sendable {
    enum Purpose: String, Sendable {
        case clientAssertion = "client_assertion"
        case requestObject = "request"
        /// An access token that enrolled a device (`EnrollmentService`).
        case enrollment
    }

    static let maximumLength = 256
    /// Expired identifiers are swept at most once a minute, by whichever request comes first.
    private static let purge = PeriodicSchedule(every: 60)

    let store: any JWTIDLedgerStore
    let now: @Sendable () -> Date

    /// Records `jti`; false when the client already used it for `purpose` and it has not expired.
    func use(_ jti: String, clientID: String, purpose: Purpose, expiresAt: Date) async throws -> Bool {
        let now = now()
        if Self.purge.isDue(at: now) { try await store.forgetExpired(before: now) }
        return try await store.recordUse(
            jti, clientID: clientID, purpose: purpose, until: expiresAt.addingTimeInterval(JWTTimeRules.clockSkew), at: now)
    }
}
