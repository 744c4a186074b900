import Foundation

/// The poll-rate rule of CIBA §11: a client that asks for tokens sooner than `interval` seconds
/// after its previous token request for the same `auth_req_id` gets `slow_down`, and the
/// interval grows by 5 seconds for this and every later request. The very first token request
/// is always on time. Every request counts as the previous one for the next, early or not.
///
/// The poll is recorded with a conditional update on the previous poll time, so of two
/// concurrent polls only one counts as on time; the other is told to slow down.
struct PollingRate: Sendable {
    static let slowDownIncrement = 5

    let store: any CIBAGrantStore

    /// Records this poll of a pending request; throws `slow_down` if it came too early.
    func record(_ transaction: ApprovalTransaction, at date: Date) async throws {
        if let previous = transaction.lastPolledAt,
           Self.milliseconds(date) - Self.milliseconds(previous) < Int64(transaction.pollInterval) * 1000 {
            let interval = transaction.pollInterval + Self.slowDownIncrement
            _ = try await store.recordPoll(requestID: transaction.id, previous: previous, at: date, interval: interval)
            throw TokenRequestError.slowDown(interval: interval)
        }
        guard try await store.recordPoll(
            requestID: transaction.id, previous: transaction.lastPolledAt, at: date, interval: transaction.pollInterval) else {
            throw TokenRequestError.slowDown(interval: transaction.pollInterval)
        }
    }

    /// Times are stored in whole milliseconds; comparing in the same unit keeps a poll made
    /// exactly one interval later on time.
    private static func milliseconds(_ date: Date) -> Int64 {
        Int64((date.timeIntervalSince1970 * 1000).rounded())
    }
}
