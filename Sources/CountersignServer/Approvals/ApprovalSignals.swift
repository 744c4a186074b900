import CountersignCore
import Foundation

/// Who is told, once a request is stored or decided: this node's push and client-notification
/// dispatchers (woken to send what was queued with it) and the devices' live streams on this
/// node. The other nodes, which hold the rest of the streams, are told by the transaction that
/// stored the request or its decision (`ClusterRelay`).
struct ApprovalSignals: Sendable {
    let pushWakeup: PushWakeup
    let clientNotificationWakeup: PushWakeup
    let notifiers: [any RequestNotifier]
    let events: ApprovalEvents

    /// A new request, sealed for each device.
    func started(_ notifications: [RequestNotification], pushesQueued: Bool) async {
        if pushesQueued { pushWakeup.signal() }
        for notification in notifications {
            for notifier in notifiers { await notifier.notify(notification) }
        }
    }

    /// A decided request: its alerts come down (when pushes were queued to withdraw them), a
    /// ping or push client is called back, and every device's stream drops it.
    func closed(_ closed: RequestClosed, deviceIDs: [String], withdrawalsQueued: Bool, callsBackClient: Bool) async {
        if withdrawalsQueued { pushWakeup.signal() }
        if callsBackClient { clientNotificationWakeup.signal() }
        for deviceID in deviceIDs { events.publish(.closed(closed), to: deviceID) }
    }
}
