import Foundation

/// The count of `bc-authorize` requests each client was let through, per minute, for
/// `ClientRateLimit`. Every statement stands alone (no transaction, no lock on the client), so
/// nodes on one PostgreSQL database share the count and a client's requests never wait for
/// each other beyond one row update.
public protocol ClientRequestWindowRepository: Sendable {
    /// The requests counted in the minutes that start at `previous` and at `current`.
    func counts(clientID: String, previous: Date, current: Date, on executor: any SQLExecutor) async throws
        -> (previous: Int64, current: Int64)
    /// Counts one more request in the minute that starts at `window`, unless it holds
    /// `capacity` already: one conditional upsert, so that of two nodes racing for the last
    /// place one wins. True if the request was counted.
    func count(clientID: String, window: Date, capacity: Int64, on executor: any SQLExecutor) async throws -> Bool
    /// Forgets the minutes that started before `date`.
    func purge(startedBefore date: Date, on executor: any SQLExecutor) async throws
}

public struct SQLClientRequestWindowRepository: ClientRequestWindowRepository {
    public init() {}

    /// The count of one minute, as stored.
    private struct Window: Decodable {
        var start: Date
        var requests: Int64

        enum CodingKeys: String, CodingKey {
            case start = "window_start"
            case requests
        }
    }

    public func counts(clientID: String, previous: Date, current: Date, on executor: any SQLExecutor) async throws
        -> (previous: Int64, current: Int64) {
        let windows = try await executor.all(
            """
            SELECT window_start, requests FROM client_request_windows
            WHERE client_id = \(clientID) AND window_start IN (\(previous), \(current))
            """, as: Window.self)
        var counts: (previous: Int64, current: Int64) = (0, 0)
        for window in windows {
            // Compared as stored, in whole milliseconds, as the statement matched it.
            if window.start.sqlValue == current.sqlValue {
                counts.current = window.requests
            } else {
                counts.previous = window.requests
            }
        }
        return counts
    }

    public func count(clientID: String, window: Date, capacity: Int64, on executor: any SQLExecutor) async throws -> Bool {
        guard capacity > 0 else { return false }
        return !(try await executor.run(
            """
            INSERT INTO client_request_windows (client_id, window_start, requests) VALUES (\(clientID), \(window), 1)
            ON CONFLICT (client_id, window_start) DO UPDATE SET requests = client_request_windows.requests + 1
            WHERE client_request_windows.requests < \(capacity)
            RETURNING requests
            """)).isEmpty
    }

    public func purge(startedBefore date: Date, on executor: any SQLExecutor) async throws {
        try await executor.run("DELETE FROM client_request_windows WHERE window_start < \(date)")
    }
}
