import CountersignCore
import Foundation

/// What a reader of the audit log narrows it to: the query of `GET …/audit` (`?action=`,
/// `?actor=`, `?user_id=`, `?client_id=`, `?device_id=`, `?since=`, `?until=`), every member
/// optional and all of them together. A user, client or device matches an event that targets it
/// or names it in its details (`user_id`, `client_id`, `device_id`).
public struct AuditFilter: Sendable, Equatable {
    public var action: String?
    public var actor: String?
    public var userID: String?
    public var clientID: String?
    public var deviceID: String?
    /// Events at or after this time.
    public var since: Date?
    /// Events before this time.
    public var until: Date?

    public init(action: String? = nil, actor: String? = nil, userID: String? = nil, clientID: String? = nil,
                deviceID: String? = nil, since: Date? = nil, until: Date? = nil) {
        (self.action, self.actor, self.userID, self.clientID) = (action, actor, userID, clientID)
        (self.deviceID, self.since, self.until) = (deviceID, since, until)
    }

    public static let none = AuditFilter()

    /// The query parameters the filter reads, each at most once.
    static let names = ["action", "actor", "user_id", "client_id", "device_id", "since", "until"]

    /// Reads the filter from a query; a parameter given twice, empty, over 200 characters, with
    /// a control character, or a time that is not RFC 3339 is refused by name.
    init(query: [String: [String]]) throws(APIError) {
        func one(_ name: String) throws(APIError) -> String? {
            guard let values = query[name] else { return nil }
            guard values.count == 1, let value = values.first else {
                throw .badRequest("query parameter \(name) is given more than once")
            }
            guard (1...200).contains(value.count),
                  !value.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) else {
                throw .badRequest("query parameter \(name) must be 1 to 200 characters without control characters")
            }
            return value
        }
        func time(_ name: String) throws(APIError) -> Date? {
            guard let text = try one(name) else { return nil }
            guard let date = Timestamps.parse(text) else {
                throw .badRequest("query parameter \(name) must be an RFC 3339 time, such as 2026-11-25T10:00:00Z")
            }
            return date
        }
        self.init(action: try one("action"), actor: try one("actor"), userID: try one("user_id"),
                  clientID: try one("client_id"), deviceID: try one("device_id"), since: try time("since"),
                  until: try time("until"))
    }

    /// `%"<member>":"<value>"%` for LIKE over the canonical details, its wildcards escaped.
    static func detailsPattern(_ member: String, _ value: String?) -> String {
        guard let value else { return "" }
        let escaped = value.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "%", with: "\\%")
            .replacingOccurrences(of: "_", with: "\\_").replacingOccurrences(of: "\"", with: "\\\\\"")
        return "%\"\(member)\":\"\(escaped)\"%"
    }
}
