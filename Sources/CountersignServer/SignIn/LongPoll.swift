/// How the pages wait for something decided elsewhere (an approval on the phone, a phone's
/// enrollment): the state is read again until it is no longer pending, for at most `limit`, and
/// at once when the server stops. The database is asked every quarter second at first, when an
/// answer is likeliest, then every second.
struct LongPoll: Sendable {
    static let limit: Duration = .seconds(25)

    /// Closed when the server stops, which ends the waits in flight.
    let events: ApprovalEvents

    static func step(_ round: Int) -> Duration { round < 20 ? .milliseconds(250) : .seconds(1) }

    /// The first state `read` gives that is not `pending`, or the last one read.
    func wait<State: Equatable & Sendable>(
        while pending: State, _ read: () async throws -> State
    ) async throws -> State {
        let deadline = ContinuousClock.now + Self.limit
        var round = 0
        while true {
            let state = try await read()
            if state != pending || ContinuousClock.now >= deadline || events.isClosed { return state }
            try await Task.sleep(for: Self.step(round))
            round += 1
        }
    }
}
