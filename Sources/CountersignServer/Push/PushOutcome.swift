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

/// Sends notifications to devices through one provider credential.
protocol PushSender: AnyObject, Sendable {
    func send(_ entry: PushOutboxEntry, deviceToken: String) async -> PushOutcome
    /// Sends a batch and returns each notification's outcome, in order. A sender that can
    /// put a batch on the wire at once (APNs) does; the others send one by one, concurrently.
    func send(_ batch: [PushDelivery]) async -> [PushOutcome]
    func shutdown() async
}

/// A notification and the device token it goes to.
struct PushDelivery: Sendable {
    let entry: PushOutboxEntry
    let deviceToken: String
}

extension PushSender {
    func send(_ batch: [PushDelivery]) async -> [PushOutcome] {
        await withTaskGroup(of: (Int, PushOutcome).self) { group in
            for (index, delivery) in batch.enumerated() {
                group.addTask { (index, await self.send(delivery.entry, deviceToken: delivery.deviceToken)) }
            }
            var outcomes = [PushOutcome?](repeating: nil, count: batch.count)
            for await (index, outcome) in group { outcomes[index] = outcome }
            return outcomes.map { $0 ?? .retry(reason: "not sent", after: nil) }
        }
    }
}
