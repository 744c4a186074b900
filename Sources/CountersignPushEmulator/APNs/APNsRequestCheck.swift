import Foundation

/// APNs's checks of a request's route, headers and payload, each answering with the reason
/// Apple gives. Authentication sits between `route` and `headers` and lives with the emulator,
/// which holds the token registry.
enum APNsRequestCheck {
    static let pathPrefix = "/3/device/"
    static let pushTypes: Set<String> = [
        "alert", "background", "location", "voip", "complication", "fileprovider", "mdm", "liveactivity",
        "pushtotalk", "widgets",
    ]
    static let maximumPayloadBytes = 4096
    static let maximumCollapseIDBytes = 64

    /// `POST /3/device/<hex token>`.
    static func route(_ notification: APNsEmulator.Notification) throws(APNsRejection) {
        guard notification.method == "POST" else { throw .methodNotAllowed }
        guard notification.path.hasPrefix(pathPrefix), !notification.deviceToken.contains("?"),
              notification.path.utf8.count == pathPrefix.utf8.count + notification.deviceToken.utf8.count else {
            throw .badPath
        }
        guard !notification.deviceToken.isEmpty, notification.deviceToken.utf8.allSatisfy(\.isHexadecimal) else {
            throw .badDeviceToken
        }
    }

    /// The `apns-*` headers, in the order Apple reports their faults.
    static func headers(_ notification: APNsEmulator.Notification, requiresTopic: Bool) throws(APNsRejection) {
        let headers = notification.headers
        // A handful of headers per request: pairwise comparison beats building a set.
        for (offset, header) in headers.enumerated() where headers[(offset + 1)...].contains(where: { $0.name == header.name }) {
            throw .duplicateHeaders
        }
        if requiresTopic, notification.header("apns-topic") == nil { throw .missingTopic }
        if let pushType = notification.header("apns-push-type"), !pushTypes.contains(pushType) { throw .invalidPushType }
        if let priority = notification.header("apns-priority"), !["1", "5", "10"].contains(priority) { throw .badPriority }
        if let expiration = notification.header("apns-expiration"),
           expiration.isEmpty || !expiration.utf8.allSatisfy(\.isDecimal) || Int64(expiration) == nil {
            throw .badExpirationDate
        }
        if let collapseID = notification.header("apns-collapse-id"), collapseID.utf8.count > maximumCollapseIDBytes {
            throw .badCollapseID
        }
        if let id = notification.header("apns-id"), messageID(id) == nil { throw .badMessageID }
    }

    /// Present, at most 4 KB, and a JSON object with an `aps` dictionary.
    static func payload(_ body: Data) throws(APNsRejection) {
        guard !body.isEmpty else { throw .payloadEmpty }
        guard body.count <= maximumPayloadBytes else { throw .payloadTooLarge }
        guard APNsPayloadShape.hasAPSObject(body) else { throw .badPayload }
    }

    /// An `apns-id` in the canonical 8-4-4-4-12 form (either case), or nil.
    static func messageID(_ text: String) -> UUID? {
        let utf8 = text.utf8
        guard utf8.count == 36 else { return nil }
        for (offset, byte) in utf8.enumerated() {
            let isHyphenPosition = offset == 8 || offset == 13 || offset == 18 || offset == 23
            guard isHyphenPosition ? byte == UInt8(ascii: "-") : byte.isHexadecimal else { return nil }
        }
        return UUID(uuidString: text)
    }
}

extension UInt8 {
    fileprivate var isDecimal: Bool { self >= UInt8(ascii: "0") && self <= UInt8(ascii: "9") }

    fileprivate var isHexadecimal: Bool {
        isDecimal || (self >= UInt8(ascii: "a") && self <= UInt8(ascii: "f"))
            || (self >= UInt8(ascii: "A") && self <= UInt8(ascii: "F"))
    }
}
