import Foundation

/// FCM HTTP v1's validation of a `messages:send` body, each fault answered with 400
/// `INVALID_ARGUMENT` and a message close to Google's.
///
/// Decoded with `JSONSerialization` rather than the strict protocol parser: FCM takes any
/// JSON (fractions included, in payloads meant for other platforms), and the emulator must
/// not refuse what Google would accept.
enum FCMMessageCheck {
    /// FCM's limit on a message's size.
    static let maximumBodyBytes = 4096
    /// The fields of `Message`, in both spellings Google's JSON mapping accepts.
    static let messageFields: Set<String> = [
        "name", "data", "notification", "android", "webpush", "apns", "fcm_options", "fcmOptions",
        "token", "topic", "condition",
    ]
    static let androidPriorities: Set<String> = ["NORMAL", "HIGH"]

    /// The parts of a message the emulator reports.
    struct Contents: Sendable {
        var token: String?
        var data: [String: String]
        var androidPriority: String?
        var androidTTL: String?
    }

    static func contents(of body: Data) throws(GoogleError) -> Contents {
        guard body.count <= maximumBodyBytes else {
            throw .invalidArgument("Request contains an invalid argument: the message is larger than \(maximumBodyBytes) bytes.")
        }
        guard let request = (try? JSONSerialization.jsonObject(with: body)) as? [String: Any] else {
            throw .invalidArgument("Invalid JSON payload received. Expected an object.")
        }
        if let unknown = request.keys.first(where: { $0 != "message" }) {
            throw .invalidArgument("Invalid JSON payload received. Unknown name \"\(unknown)\": Cannot find field.")
        }
        guard let message = request["message"] as? [String: Any] else {
            throw .invalidArgument("Invalid JSON payload received. \"message\" must be an object.")
        }
        if let unknown = message.keys.first(where: { !messageFields.contains($0) }) {
            throw .invalidArgument("Invalid JSON payload received. Unknown name \"\(unknown)\" at 'message': Cannot find field.")
        }
        let targets = ["token", "topic", "condition"].filter { message[$0] != nil }
        guard targets.count == 1 else {
            throw .invalidArgument(targets.isEmpty
                ? "Recipient of the message is not set."
                : "Exactly one of token, topic or condition must be set; found \(targets.joined(separator: ", ")).")
        }
        guard let target = message[targets[0]] as? String, !target.isEmpty else {
            throw .invalidArgument("Invalid value at 'message.\(targets[0])' (TYPE_STRING).")
        }
        var contents = Contents(token: targets[0] == "token" ? target : nil, data: [:])
        contents.data = try stringMap(message["data"], at: "message.data")
        if let android = message["android"] {
            guard let android = android as? [String: Any] else {
                throw .invalidArgument("Invalid value at 'message.android': must be an object.")
            }
            _ = try stringMap(android["data"], at: "message.android.data")
            if let priority = android["priority"] {
                guard let priority = priority as? String, androidPriorities.contains(priority) else {
                    throw .invalidArgument("Invalid value at 'message.android.priority' (type.googleapis.com/google.firebase.fcm.v1.AndroidMessagePriority).")
                }
                contents.androidPriority = priority
            }
            if let ttl = android["ttl"] {
                guard let ttl = ttl as? String, isDuration(ttl) else {
                    throw .invalidArgument("Invalid value at 'message.android.ttl' (type.googleapis.com/google.protobuf.Duration).")
                }
                contents.androidTTL = ttl
            }
        }
        return contents
    }

    /// A map of strings to strings (FCM's `data`), or empty when absent.
    private static func stringMap(_ value: Any?, at path: String) throws(GoogleError) -> [String: String] {
        guard let value else { return [:] }
        guard let object = value as? [String: Any] else { throw .invalidArgument("Invalid value at '\(path)': must be an object.") }
        var map: [String: String] = [:]
        for (key, member) in object {
            guard let text = member as? String else {
                throw .invalidArgument("Invalid value at '\(path)[\(key)].value' (TYPE_STRING).")
            }
            map[key] = text
        }
        return map
    }

    /// A protobuf `Duration` in JSON: `^\d+(\.\d{1,9})?s$`.
    static func isDuration(_ text: String) -> Bool {
        guard text.hasSuffix("s") else { return false }
        let number = text.dropLast().split(separator: ".", maxSplits: 1, omittingEmptySubsequences: false)
        let isDigits = { (part: Substring) in !part.isEmpty && part.utf8.allSatisfy { $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") } }
        guard let seconds = number.first, isDigits(seconds) else { return false }
        guard number.count == 2 else { return true }
        return isDigits(number[1]) && number[1].count <= 9
    }
}
