import CountersignCore
import Foundation

/// What a push says, for each provider. It names the device, the request and its expiry, and
/// carries one short text that reveals nothing of the request (who asks, for what, from where
/// travels sealed to the device and is fetched over a signed request). An app that wants its
/// own wording rewrites the alert in its notification service extension (`mutable-content`).
///
/// A security notice's alert says what was done to the account (a device or passkey added, by
/// its name; a recovery code or pass used), since the user must be able to tell at a glance
/// whether it was them; the notice's id travels in the payload.
enum PushContent {
    /// The notification category the app registers, with its Approve and Deny actions.
    static let category = PushPayload.notificationCategory
    static let title = "Approval request"
    static let body = "Open to review the request and answer it."

    static func payload(for entry: PushOutboxEntry) -> PushPayload {
        let expiresAt = Int64(entry.expiresAt.timeIntervalSince1970.rounded(.down))
        if entry.kind == .notice {
            return PushPayload(deviceID: entry.deviceID, noticeID: entry.noticeID ?? "", expiresAt: expiresAt)
        }
        return PushPayload(
            deviceID: entry.deviceID, requestID: entry.transactionID ?? "", expiresAt: expiresAt,
            event: entry.kind == .request ? .request : .closed)
    }

    /// What a notice's alert says: what was done, to what, and the answer it invites. The name
    /// is the one the user (or their device) gave the device or passkey.
    static func alert(for notice: SecurityNotice) -> PushAlert {
        let named = notice.subjectName.map { ", “\($0)”," } ?? ""
        let question = " Not you? Answer “Not me”."
        return switch notice.kind {
        case .deviceAdded:
            PushAlert(title: "New device on your account", body: "A new device\(named) was added to your account." + question)
        case .passkeyAdded:
            PushAlert(title: "New passkey on your account", body: "A new passkey\(named) was added to your account." + question)
        case .recoveryCodeUsed:
            PushAlert(title: "Recovery code used", body: "A recovery code was used to sign in to your account." + question)
        case .accessPassUsed:
            PushAlert(title: "Temporary access pass used",
                      body: "A temporary access pass was used to sign in to your account." + question)
        }
    }

    /// The APNs JSON body: an alert with the category, `mutable-content` (so a notification
    /// service extension may fetch and show the details) and `time-sensitive` delivery; or, to
    /// withdraw, a silent `content-available` push. Always far under APNs' 4 KB.
    ///
    /// It is the canonical JSON of `{"aps": …, "countersign": …}`; `aps` is the same for every
    /// notification of a kind, so its canonical text is made once and only the payload is
    /// encoded per notification ("aps" sorts before "countersign").
    static func apnsBody(for entry: PushOutboxEntry) -> Data {
        if entry.kind == .notice {
            return JSONValue.object(["aps": noticeAPS(entry.alert), PushPayload.key: payload(for: entry).json]).canonicalData
        }
        var body = entry.kind == .request ? requestBodyPrefix : withdrawBodyPrefix
        body += payload(for: entry).json.canonicalString
        body += "}"
        return Data(body.utf8)
    }

    /// A notice's `aps`: an alert in the notice category, at the active interruption level
    /// (no request waits on the user), in a thread of its own.
    static func noticeAPS(_ alert: PushAlert?) -> JSONValue {
        let alert = alert ?? PushAlert(title: "Your account changed", body: "Open to review what changed.")
        return .object([
            "alert": .object(["title": .string(alert.title), "body": .string(alert.body)]),
            "sound": .string("default"),
            "category": .string(PushPayload.noticeCategory),
            "mutable-content": .integer(1),
            "thread-id": .string("countersign-notices"),
        ])
    }

    /// The `aps` dictionary of each kind of notification.
    static func aps(_ kind: PushOutboxEntry.Kind) -> JSONValue {
        switch kind {
        case .notice:
            noticeAPS(nil)
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
        switch entry.kind {
        case .request, .notice: ("alert", "10")
        case .withdraw: ("background", "5")
        }
    }

    /// The FCM HTTP v1 request body: a data message (the app builds the notification), high
    /// priority so that it wakes the device, with a TTL of the time left to answer.
    static func fcmBody(for entry: PushOutboxEntry, token: String, at date: Date) -> Data {
        let ttl = max(0, Int64(entry.expiresAt.timeIntervalSince(date).rounded(.down)))
        var data = payload(for: entry).fcmData
        switch entry.kind {
        case .request:
            data["title"] = title
            data["body"] = body
        case .notice:
            let alert = entry.alert ?? PushAlert(title: "Your account changed", body: "Open to review what changed.")
            data["title"] = alert.title
            data["body"] = alert.body
        case .withdraw:
            break
        }
        let message: JSONValue = .object([
            "token": .string(token),
            "data": .object(data.mapValues(JSONValue.string)),
            "android": .object([
                "priority": .string("HIGH"),
                "ttl": .string("\(ttl)s"),
                "collapse_key": .string(entry.subjectID),
            ]),
        ])
        return JSONValue.object(["message": message]).canonicalData
    }
}
