import Foundation

/// What became of one attempt to hand a notification to a push provider.
enum PushOutcome: Sendable, Equatable {
    /// The provider accepted it (with its message id, if it gives one of its own).
    case delivered(providerMessageID: String?)
    /// The provider says the device token is dead (`Unregistered`, `BadDeviceToken`,
    /// `UNREGISTERED`, …). APNs says since when; a token registered after that is a new one.
    case invalidToken(reason: String, since: Date?)
    /// A passing failure (429, 5xx, a connection that failed): try again later, not before
    /// `after` if the provider said so.
    case retry(reason: String, after: TimeInterval?)
    /// A failure that trying again will not mend (a bad credential, a refused payload).
    case failed(reason: String)
    /// Not sent, and no longer to be: the request was answered before its alert went out.
    case cancelled(reason: String)
}

/// Sends one notification to one device through one provider credential.
protocol PushSender: AnyObject, Sendable {
    func send(_ entry: PushOutboxEntry, deviceToken: String) async -> PushOutcome
    func shutdown() async
}
