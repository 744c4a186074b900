import CountersignCommandLine
import CountersignCore
import Foundation

/// Polls the token endpoint for one `auth_req_id` until the request is decided, as a poll client
/// should (CIBA Core §7.3, §11, and docs/integrating.md §5.1): a call every `interval` seconds,
/// five seconds more for good after each `slow_down`, and until the request's expiry (plus one
/// interval, in which an approval given at the last moment can still be collected).
///
/// A server that cannot be reached, or answers 5xx, says nothing of the request: a restart, a
/// database failover. The poll says so, tries again with a growing delay while the request can
/// still be answered, and says when the server is back.
struct TokenPoll {
    let client: RelyingPartyClient
    let authReqID: String
    /// Seconds between polls.
    var interval: Int
    /// After this, the request has expired, whatever the server says; an unreachable server is
    /// not tried again.
    let lastChance: Date
    /// Whom the request waits for, as the progress lines name them: "alice", "the user".
    let waitingFor: String

    /// The longest wait between two tries of a server that cannot be reached.
    static let longestRetryDelay = 30

    /// The token response; throws the `Refusal` that ended the poll (`access_denied`,
    /// `expired_token`, …), or a `TerminalFailure` when the server could not be reached before
    /// the request expired.
    mutating func tokens() async throws -> [String: Any] {
        var failures = 0
        var wait = interval
        while true {
            try await Task.sleep(for: .seconds(wait))
            let trouble: String
            do {
                let tokens = try await client.post(
                    "/token", ["grant_type": RelyingPartyClient.cibaGrantType, "auth_req_id": authReqID])
                if failures > 0 { sayBack() }
                return tokens
            } catch let refusal as RelyingPartyClient.Refusal where refusal.code == "authorization_pending" {
                if failures > 0 { sayBack() }
                failures = 0
                wait = interval
                continue
            } catch let refusal as RelyingPartyClient.Refusal where refusal.code == "slow_down" {
                if failures > 0 { sayBack() }
                failures = 0
                // CIBA Core §11: every slow_down adds five seconds to the interval, for good.
                interval += 5
                wait = interval
                say("slow_down: polling every \(interval)s")
                continue
            } catch let refusal as RelyingPartyClient.Refusal where refusal.isServerTrouble {
                trouble = "\(client.base) answered \(refusal.status) \(refusal.code)"
                    + (refusal.text.map { " (\(RequestSummary.shown($0)))" } ?? "")
            } catch let failure as ConnectionFailure {
                trouble = "cannot reach \(failure.server): \(failure.reason)"
            }
            failures += 1
            let left = Int(lastChance.timeIntervalSinceNow.rounded(.down))
            guard left > 0 else {
                throw TerminalFailure("\(trouble); the request \(authReqID) has expired meanwhile "
                    + "(at \(Timestamps.format(lastChance)) at the latest), so polling stops")
            }
            // interval, twice, four times…, at most 30 s (or the interval, when longer), and the
            // last try just before the request can no longer be answered.
            let backoff = min(interval << min(failures - 1, 8), max(interval, Self.longestRetryDelay))
            wait = max(1, min(backoff, left))
            say("\(trouble); trying again in \(wait)s (the request can be answered until \(Timestamps.format(lastChance))).")
        }
    }

    private func sayBack() {
        say("Reached \(client.base) again; still waiting for \(waitingFor) to answer…")
    }

    private func say(_ line: String) {
        print(line)
        StandardOutput.flush()
    }
}
