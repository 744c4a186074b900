import Foundation

/// How calls to ping and push clients are made and retried (CIBA §10.2, §10.3).
public struct ClientNotificationConfiguration: Sendable {
    /// A notification is retried at most this long after its request expired: the decision is
    /// still worth announcing shortly after, not an hour later.
    static let deliveryWindow: TimeInterval = 600

    /// One call, connecting to reading the answer.
    public var timeout: Duration = .seconds(10)
    /// How often an idle dispatcher looks for notifications queued by other nodes, due retries
    /// and push-mode requests that expired.
    public var pollInterval: Duration = .seconds(1)
    public var maximumAttempts = 8
    /// The first retry delay; each later one doubles, up to `maximumRetryDelay`.
    public var retryDelay: TimeInterval = 2
    public var maximumRetryDelay: TimeInterval = 60
    public var batchSize = 16
    /// How long a claimed notification is leased; longer than a call can take.
    public var lease: TimeInterval = 60

    public init() {}

    func retryDelay(afterAttempts attempts: Int) -> TimeInterval {
        min(maximumRetryDelay, retryDelay * pow(2, Double(max(0, attempts - 1))))
    }
}

/// The sealing contexts of what a ping or push request keeps for its callback.
enum ClientNotificationSecrets {
    static func authReqIDContext(_ transactionID: String) -> String { "auth-req-id:\(transactionID)" }
    static func tokenContext(_ transactionID: String) -> String { "client-notification-token:\(transactionID)" }
}
