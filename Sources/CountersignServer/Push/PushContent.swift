import CountersignCore
import Foundation

/// What a push says, for each provider. It names the device, the request and its expiry, and
/// carries one short text that reveals nothing of the request (who asks, for what, from where
/// travels sealed to the device and is fetched over a signed request). An app that wants its
/// own wording rewrites the alert in its notification service extension (`mutable-content`).
enum PushContent {
    /// The notification category the app registers, with its Approve and Deny actions.
    static let category = PushPayload.notificationCategory
    static let title = "Approval request"
    static let body = "Open to review the request and answer it."

    static func payload(for entry: PushOutboxEntry) -> PushPayload {
        PushPayload(
            deviceID: entry.deviceID, requestID: entry.transactionID,
            expiresAt: Int64(entry.expiresAt.timeIntervalSince1970.rounded(.down)),
            event: entry.kind == .request ? .request : .closed)
    }

    /// The APNs JSON body: an alert with the category, `mutable-content` (so a notification
    /// service extension may fetch and show the details) and `time-sensitive` delivery; or, to
    /// withdraw, a silent `content-available` push. Always far under APNs' 4 KB.
    ///
    /// It is the canonical JSON of `{"aps": …, "countersign": …}`; `aps` is the same for every
    /// notification of a kind, so its canonical text is made once and only the payload is
    /// encoded per notification ("aps" sorts before "countersign").
    static func apnsBody(for entry: PushOutboxEntry) -> Data {
        var body = entry.kind == .request ? requestBodyPrefix : withdrawBodyPrefix
        body += payload(for: entry).json.canonicalString
        body += "}"
        return Data(body.utf8)
    }

    /// The `aps` dictionary of each kind of notification.
    static func aps(_ kind: PushOutboxEntry.Kind) -> JSONValue {
        switch kind {
        case .request:
            .object([
                "alert": .object(["title": .string(title), "body": .string(body)]),
                "sound": .string("default"),
                "category": .string(category),
                "mutable-content": .integer(1),
                "interruption-level": .string("time-sensitive"),
                "thread-id": .string("countersign"),
            ])
        case .withdraw:
            .object(["content-available": .integer(1)])
        }
    }

    private static let requestBodyPrefix = #"{"aps":"# + aps(.request).canonicalString + #","\#(PushPayload.key)":"#
    private static let withdrawBodyPrefix = #"{"aps":"# + aps(.withdraw).canonicalString + #","\#(PushPayload.key)":"#

    /// `apns-push-type` and `apns-priority`: an alert now, or a background push that iOS may
    /// deliver when it suits the battery (Apple requires priority 5 for those).
    static func apnsPushType(for entry: PushOutboxEntry) -> (type: String, priority: String) {
        entry.kind == .request ? ("alert", "10") : ("background", "5")
    }

    /// The FCM HTTP v1 request body: a data message (the app builds the notification), high
    /// priority so that it wakes the device, with a TTL of the time left to answer.
    static func fcmBody(for entry: PushOutboxEntry, token: String, at date: Date) -> Data {
        let ttl = max(0, Int64(entry.expiresAt.timeIntervalSince(date).rounded(.down)))
        var data = payload(for: entry).fcmData
        if entry.kind == .request {
            data["title"] = title
            data["body"] = body
        }
        let message: JSONValue = .object([
            "token": .string(token),
            "data": .object(data.mapValues(JSONValue.string)),
            "android": .object([
                "priority": .string("HIGH"),
                "ttl": .string("\(ttl)s"),
                "collapse_key": .string(entry.transactionID),
            ]),
        ])
        return JSONValue.object(["message": message]).canonicalData
    }
}
