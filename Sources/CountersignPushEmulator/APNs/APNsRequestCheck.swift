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
        // The device token is the path's last component, so the path is the prefix and the
        // token exactly when their lengths add up.
        guard notification.path.utf8.starts(with: pathPrefix.utf8),
              notification.path.utf8.count == pathPrefix.utf8.count + notification.deviceToken.utf8.count else {
            throw .badPath
        }
        guard !notification.deviceToken.isEmpty, notification.deviceToken.utf8.allSatisfy(\.isHexadecimal) else {
            throw .badDeviceToken
        }
    }

    /// The `apns-*` headers, in the order Apple reports their faults.
    static func headers(_ fields: APNsHeaderFields, requiresTopic: Bool) throws(APNsRejection) {
        if fields.hasDuplicates { throw .duplicateHeaders }
        if requiresTopic, fields.topic == nil { throw .missingTopic }
        if let pushType = fields.pushType, !pushTypes.contains(pushType) { throw .invalidPushType }
        if let priority = fields.priority, priority != "10", priority != "5", priority != "1" { throw .badPriority }
        if let expiration = fields.expiration,
           expiration.isEmpty || !expiration.utf8.allSatisfy(\.isDecimal) || Int64(expiration) == nil {
            throw .badExpirationDate
        }
        if let collapseID = fields.collapseID, collapseID.utf8.count > maximumCollapseIDBytes { throw .badCollapseID }
        if let id = fields.id, messageID(id) == nil { throw .badMessageID }
    }

    /// Present, at most 4 KB, and a JSON object with an `aps` dictionary.
    static func payload(_ body: Data) throws(APNsRejection) {
        guard !body.isEmpty else { throw .payloadEmpty }
        guard body.count <= maximumPayloadBytes else { throw .payloadTooLarge }
        guard APNsPayloadShape.hasAPSObject(body) else { throw .badPayload }
    }

    /// An `apns-id` in the canonical 8-4-4-4-12 form (either case), or nil.
    ///
    /// Parsed here rather than by `UUID(uuidString:)`, which on Linux goes through `sscanf`
    /// and was the costliest single step of an accepted push.
    static func messageID(_ text: String) -> UUID? {
        var bytes = [UInt8](repeating: 0, count: 16)
        var count = 0
        var high: UInt8?
        var offset = -1
        for character in text.utf8 {
            offset += 1
            if offset == 8 || offset == 13 || offset == 18 || offset == 23 {
                guard character == UInt8(ascii: "-") else { return nil }
                continue
            }
            guard count < 16, let nibble = character.hexadecimalValue else { return nil }
            if let first = high {
                bytes[count] = first << 4 | nibble
                count += 1
                high = nil
            } else {
                high = nibble
            }
        }
        guard count == 16, high == nil, text.utf8.count == 36 else { return nil }
        return UUID(uuid: (bytes[0], bytes[1], bytes[2], bytes[3], bytes[4], bytes[5], bytes[6], bytes[7],
                           bytes[8], bytes[9], bytes[10], bytes[11], bytes[12], bytes[13], bytes[14], bytes[15]))
    }
}

extension UInt8 {
    fileprivate var isDecimal: Bool { self >= UInt8(ascii: "0") && self <= UInt8(ascii: "9") }

    fileprivate var isHexadecimal: Bool { hexadecimalValue != nil }

    fileprivate var hexadecimalValue: UInt8? {
        switch self {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): self - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): self - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): self - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}
