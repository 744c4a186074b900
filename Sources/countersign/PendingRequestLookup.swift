import CountersignCommandLine
import CountersignCore
import CountersignKit

/// Finds which enrollment on this terminal answers a request. The server sends a request to
/// every device of its user, so a user enrolled twice here (once without a PIN, once with)
/// finds the request in both inboxes; only one of them may be able to give the factor it asks.
struct PendingRequestLookup {
    let authenticator: CountersignAuthenticator
    /// What this terminal answered, to say so of a request no longer pending.
    let log: AnswerLog

    /// The opened request: from `enrollment`'s inbox when given; otherwise from the inbox of
    /// the first enrollment that holds it and, when `answering` (approving), can give the factor
    /// it requires.
    func details(of requestID: String, enrollment: String?, answering: Bool) async throws -> RequestDetails {
        if let enrollment {
            guard try await authenticator.enrollments().contains(where: { $0.id == enrollment }) else {
                throw TerminalFailure("this device has no enrollment \(enrollment) (`countersign device list` shows them)")
            }
            let inbox = try await authenticator.pendingRequests(enrollment)
            guard let request = inbox.first(where: { $0.id == requestID }) else {
                throw try await notPending(requestID, in: [enrollment])
            }
            return try await authenticator.details(for: request)
        }
        let holding = try await authenticator.pendingRequests().filter { $0.id == requestID }
        guard let first = holding.first else {
            throw try await notPending(requestID, in: try await authenticator.enrollments().map(\.id))
        }
        guard answering, holding.count > 1 else { return try await authenticator.details(for: first) }
        var opened: [RequestDetails] = []
        for request in holding {
            let details = try await authenticator.details(for: request)
            if try await canGive(details) { return details }
            opened.append(details)
        }
        let enrollments = opened.map(\.request.enrollmentID).joined(separator: ", ")
        throw TerminalFailure("\(requestID) asks for \(RequestSummary.verification(of: opened[0])), which none of the "
            + "enrollments holding it (\(enrollments)) can give; nothing was answered")
    }

    /// Why `requestID` is in none of these enrollments' inboxes: answered here (the log says how
    /// and when), answered on another device or expired (the server says which, but of a decided
    /// request neither how nor when), or never sent to them.
    private func notPending(_ requestID: String, in enrollments: [String]) async throws -> TerminalFailure {
        let shown = RequestSummary.shown(requestID)
        if let entry = log.entry(for: requestID) {
            return TerminalFailure("\(shown) was already \(entry.sentence); nothing was sent")
        }
        for enrollment in enrollments {
            do throws(CountersignError) {
                _ = try await authenticator.request(requestID, for: enrollment)
                return TerminalFailure("\(shown) has just arrived; run the command again to answer it")
            } catch .alreadyAnswered {
                return TerminalFailure("\(shown) was already answered (approved or denied) on another device; "
                    + "the server does not tell a device which, nor when; nothing was sent")
            } catch .expired {
                return TerminalFailure("\(shown) expired before it was answered; nothing was sent")
            } catch .requestNotFound {
                continue
            }
        }
        return TerminalFailure("no enrollment on this device was sent a request \(shown), or the server no longer keeps it "
            + "(`countersign device pending` lists those waiting)")
    }

    /// Whether the enrollment the details were opened for holds the factor they require, or
    /// every factor of one of their alternatives.
    private func canGive(_ details: RequestDetails) async throws -> Bool {
        if details.verification.alternatives != nil {
            return try await authenticator.alternatives(of: details).contains(where: \.isAvailable)
        }
        let factors = try await authenticator.localFactors(details.request.enrollmentID)
        switch details.requiredFactor {
        case .confirm, .numberMatch, .custom: return true
        case .pin: return factors.pin
        case .biometric: return factors.biometric || (details.allowsPINFallback && factors.pin)
        }
    }
}
