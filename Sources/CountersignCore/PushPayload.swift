import Foundation

/// What a push notification carries: identifiers and an expiry, never the details (those are
/// fetched over a device-signed request and opened with the device's key). It travels under the
/// key `countersign`: as a JSON object beside `aps` in an APNs payload, and as a JSON string in
/// an FCM data message (whose values must be strings).
///
/// ```swift
/// // Server: the custom part of an APNs payload, or the FCM data map.
/// let apns = payload.apnsMember          // ["countersign": {...}]
/// let fcm = payload.fcmData              // ["countersign": "{\"device_id\":…}"]
/// // Device: from a notification's userInfo.
/// if let payload = PushPayload(userInfo: notification.request.content.userInfo) { … }
/// ```
public struct PushPayload: Codable, Sendable, Equatable {
    /// The key the payload is carried under.
    public static let key = "countersign"
    public static let currentVersion: Int64 = 1
    /// The notification category (`aps.category`) of an APNs alert for a new request: the app
    /// registers it with Approve and Deny actions.
    public static let notificationCategory = "COUNTERSIGN_APPROVAL"
    /// The category of an alert for a security notice (a device or passkey added to the
    /// account, a recovery code used): the app registers it with a "Not me" action.
    public static let noticeCategory = "COUNTERSIGN_NOTICE"

    /// What the push says about the request.
    public enum Event: String, Codable, Sendable {
        /// A new request waits for an answer (an alert).
        case request
        /// The request was answered (on another device) or withdrawn: take its alert down and
        /// drop it from any list shown (a background push).
        case closed
        /// Something was done to the user's account (an alert): `noticeID` names the notice,
        /// which the device fetches (`GET /device/v1/notices`) and may answer with "not me".
        case notice
    }

    public var version: Int64
    public var event: Event
    /// The device the push is for: with several enrollments on one phone, it says which.
    public var deviceID: String
    /// The request announced or closed; empty for a notice.
    public var requestID: String
    /// The security notice announced; nil for a request.
    public var noticeID: String?
    /// Seconds since 1970; a push opened later can be discarded without a network call.
    public var expiresAt: Int64

    public init(deviceID: String, requestID: String, expiresAt: Int64, event: Event = .request) {
        self.version = Self.currentVersion
        self.event = event
        self.deviceID = deviceID
        self.requestID = requestID
        self.expiresAt = expiresAt
    }

    /// A notice's payload.
    public init(deviceID: String, noticeID: String, expiresAt: Int64) {
        self.version = Self.currentVersion
        self.event = .notice
        self.deviceID = deviceID
        self.requestID = ""
        self.noticeID = noticeID
        self.expiresAt = expiresAt
    }

    enum CodingKeys: String, CodingKey {
        case version = "v"
        case event
        case deviceID = "device_id"
        case requestID = "request_id"
        case noticeID = "notice_id"
        case expiresAt = "exp"
    }

    /// The canonical JSON of the payload. `event` is left out for a new request, so that the
    /// payloads of version 1 read the same as before events existed. A notice carries
    /// `notice_id` instead of `request_id`.
    public var json: JSONValue {
        var members: [String: JSONValue] = [
            "v": .integer(version), "device_id": .string(deviceID), "exp": .integer(expiresAt),
        ]
        if event == .notice { members["notice_id"] = .string(noticeID ?? "") } else { members["request_id"] = .string(requestID) }
        if event != .request { members["event"] = .string(event.rawValue) }
        return .object(members)
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        version = try container.decode(Int64.self, forKey: .version)
        event = try container.decodeIfPresent(Event.self, forKey: .event) ?? .request
        deviceID = try container.decode(String.self, forKey: .deviceID)
        requestID = try container.decodeIfPresent(String.self, forKey: .requestID) ?? ""
        noticeID = event == .notice ? try container.decodeIfPresent(String.self, forKey: .noticeID) : nil
        expiresAt = try container.decode(Int64.self, forKey: .expiresAt)
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(version, forKey: .version)
        if event != .request { try container.encode(event, forKey: .event) }
        try container.encode(deviceID, forKey: .deviceID)
        if event == .notice {
            try container.encode(noticeID ?? "", forKey: .noticeID)
        } else {
            try container.encode(requestID, forKey: .requestID)
        }
        try container.encode(expiresAt, forKey: .expiresAt)
    }

    /// The member to merge into an APNs payload, beside `aps`.
    public var apnsMember: [String: JSONValue] { [Self.key: json] }

    /// The FCM data map.
    public var fcmData: [String: String] { [Self.key: json.canonicalString] }

    /// Reads a payload from a notification's `userInfo` (APNs: a dictionary under `countersign`;
    /// FCM: a JSON string under it). Nil for a push that is not Countersign's or not understood.
    public init?(userInfo: [AnyHashable: Any]) {
        guard let member = userInfo[Self.key] else { return nil }
        let data: Data
        if let text = member as? String {
            data = Data(text.utf8)
        } else if JSONSerialization.isValidJSONObject(member),
                  let encoded = try? JSONSerialization.data(withJSONObject: member) {
            data = encoded
        } else {
            return nil
        }
        self.init(jsonData: data)
    }

    /// Reads a payload from the JSON of the `countersign` member.
    public init?(jsonData: Data) {
        guard let value = try? JSONValue(parsing: jsonData),
              let payload = try? value.decode(as: PushPayload.self),
              payload.version == Self.currentVersion,
              !payload.deviceID.isEmpty,
              payload.event == .notice ? payload.noticeID?.isEmpty == false : !payload.requestID.isEmpty
        else { return nil }
        self = payload
    }
}
