import CountersignCore
import Foundation

/// A new request for one device, as the channels that wake the device need it.
public struct RequestNotification: Sendable {
    public let device: Device
    /// What the device's inbox and live stream carry.
    public let envelope: PendingRequestEnvelope
    /// What a push carries: identifiers and expiry only.
    public let push: PushPayload
}

/// A channel that tells a device a request is waiting for it. The live stream is one; push
/// providers (APNs, FCM) are others. Notifying is best effort and never fails the request: the
/// request is already stored, and the device's inbox lists it whatever happens here.
public protocol RequestNotifier: Sendable {
    func notify(_ notification: RequestNotification) async
}

/// Wakes the device's live streams on this node.
struct LiveStreamNotifier: RequestNotifier {
    let events: ApprovalEvents

    func notify(_ notification: RequestNotification) async {
        events.publish(.request(notification.envelope), to: notification.device.id)
    }
}
