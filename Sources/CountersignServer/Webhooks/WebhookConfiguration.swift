import Foundation

/// How webhooks are called. Whether this node delivers queued events follows the push
/// dispatch switch (`PushConfiguration.dispatch`): a node started to serve HTTP only sends
/// neither notifications nor events.
public struct WebhookConfiguration: Sendable {
    /// The whole custom-verifier call, connecting to reading the answer. The user is waiting on
    /// the approval screen, and a verifier that has not answered by then is treated as down.
    public var verifierTimeout: Duration = .seconds(5)
    /// The whole call that delivers one event.
    public var deliveryTimeout: Duration = .seconds(10)
    /// How often an idle dispatcher looks for events queued by other nodes or due for a retry.
    public var pollInterval: Duration = .seconds(1)
    /// Attempts per event before it is recorded as failed.
    public var maximumAttempts = 10
    /// The first retry delay; each later one doubles, up to `maximumRetryDelay`.
    public var retryDelay: TimeInterval = 2
    public var maximumRetryDelay: TimeInterval = 300
    /// Events claimed, and sent concurrently, at once.
    public var batchSize = 16
    /// How long a claimed event is leased: a node that dies mid-send leaves it to others after
    /// this. Longer than a delivery can take.
    public var lease: TimeInterval = 60

    public init() {}

    /// The delay before attempt `attempts + 1`.
    func retryDelay(afterAttempts attempts: Int) -> TimeInterval {
        min(maximumRetryDelay, retryDelay * pow(2, Double(max(0, attempts - 1))))
    }
}
