import CountersignKit
import Foundation

/// The pending requests of every account, newest first: what the app lists when a push was
/// missed, kept current by the live stream while the app is open.
///
/// ```swift
/// var inbox = try await Inbox.load(authenticator)
/// for try await event in authenticator.liveRequests(enrollment.id) { inbox.apply(event) }
/// ```
public struct Inbox: Sendable, Equatable {
    public private(set) var requests: [ApprovalRequest]

    public init(_ requests: [ApprovalRequest] = []) {
        self.requests = requests.sorted { $0.createdAt > $1.createdAt }
    }

    public static func load(_ authenticator: CountersignAuthenticator) async -> Result<Inbox, ProblemMessage> {
        do throws(CountersignError) { return .success(Inbox(try await authenticator.pendingRequests())) } catch {
            return .failure(ProblemMessage(error))
        }
    }

    /// A request the stream reports is added once; one it says was answered or expired goes. A
    /// notice changes nothing here.
    public mutating func apply(_ event: LiveRequestEvent) {
        switch event {
        case .request(let request):
            guard !requests.contains(where: { $0.id == request.id }) else { return }
            requests.append(request)
            requests.sort { $0.createdAt > $1.createdAt }
        case .closed(let closed):
            requests.removeAll { $0.id == closed.id }
        case .notice:
            return  // not a request: the screen asks about it (`InboxViewController`)
        }
    }

    /// Drops the requests whose time ran out.
    public mutating func removeExpired(at now: Date) {
        requests.removeAll { $0.expiresAt <= now }
    }

    /// What the tab's badge says: the number of requests, or nothing.
    public var badge: String? { requests.isEmpty ? nil : String(requests.count) }
}
