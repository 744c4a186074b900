import CountersignCore
import Foundation

/// How Shared Signals are served: how long a poll waits for a SET, when a SET handed out by a
/// poll and not acknowledged is handed out again, and how often a receiver may ask for a
/// verification event.
public struct SharedSignalsConfiguration: Sendable {
    /// The longest a poll without `returnImmediately` waits for a SET (RFC 8936 §2.5).
    public var longPollTimeout: Duration = .seconds(25)
    /// A SET handed out by a poll and not acknowledged is handed out again after this.
    public var redeliveryDelay: TimeInterval = 60
    /// `min_verification_interval`: a second verification request sooner is answered 429.
    public var minimumVerificationInterval = 10
    /// The most streams one receiver (admin key) may hold.
    public var maximumStreamsPerKey = 10
    /// The most SETs one poll hands out, whatever `maxEvents` asks.
    public var maximumEventsPerPoll = 100
    /// How long delivered, acknowledged and failed SETs are kept before they are removed.
    public var retention: TimeInterval = 7 * 86_400

    public init() {}
}

/// What a receiver sends to create, update or replace a stream (SSF 1.0 §8.1.1.1–§8.1.1.4),
/// read member by member so that each mistake is named: the receiver-supplied members
/// (`events_requested`, `delivery`, `description`, and Countersign's `format`), and the
/// transmitter-supplied ones a receiver may echo back, which must then be what they are.
struct StreamConfigurationRequest: Sendable {
    struct Delivery: Sendable, Equatable {
        var method: EventStream.DeliveryMethod
        var endpointURL: String?
        var authorizationHeader: String?
    }

    var streamID: String?
    var eventsRequested: [String]?
    var delivery: Delivery?
    var description: String?
    var format: EventStream.SubjectFormat?
    var audience: [String]?
    /// Transmitter-supplied members echoed back, checked against the stream.
    var echoed: [String: JSONValue] = [:]

    static let descriptionLimit = 256
    static let receiverMembers: Set<String> = ["events_requested", "delivery", "description", "format"]
    static let transmitterMembers: Set<String> = [
        "stream_id", "iss", "aud", "events_supported", "events_delivered", "min_verification_interval",
    ]

    init(_ body: Data) throws(AdminError) {
        let value: JSONValue
        do { value = try JSONValue(parsing: body) } catch { throw .invalidField("body", "must be a JSON object") }
        guard case .object(let members) = value else { throw .invalidField("body", "must be a JSON object") }
        for (name, member) in members {
            switch name {
            case "stream_id":
                guard let id = member.stringValue, !id.isEmpty else { throw .invalidField(name, "must be a string") }
                streamID = id
            case "events_requested":
                guard case .array(let items) = member, items.allSatisfy({ $0.stringValue != nil }) else {
                    throw .invalidField(name, "must be an array of event-type URIs")
                }
                // Unknown event types are ignored (SSF §8.1.1); duplicates are kept once.
                var seen: [String] = []
                for item in items.compactMap(\.stringValue) where !seen.contains(item) { seen.append(item) }
                eventsRequested = seen
            case "delivery":
                delivery = try Self.delivery(member)
            case "description":
                if case .null = member { description = ""; continue }
                guard let text = member.stringValue else { throw .invalidField(name, "must be a string") }
                description = String(text.prefix(Self.descriptionLimit))
            case "format":
                guard let raw = member.stringValue, let format = EventStream.SubjectFormat(rawValue: raw) else {
                    throw .invalidField(name, "must be iss_sub, email or opaque")
                }
                self.format = format
            case "aud":
                switch member {
                case .string(let audience) where !audience.isEmpty: self.audience = [audience]
                case .array(let items) where !items.isEmpty && items.allSatisfy({ !($0.stringValue ?? "").isEmpty }):
                    audience = items.compactMap(\.stringValue)
                default: throw .invalidField(name, "must be a string or an array of strings")
                }
                echoed[name] = member
            default:
                // Other transmitter-supplied members are checked by the caller; members this
                // transmitter does not know are ignored, as SSF asks of both sides.
                if Self.transmitterMembers.contains(name) { echoed[name] = member }
            }
        }
    }

    private static func delivery(_ value: JSONValue) throws(AdminError) -> Delivery {
        guard case .object(let members) = value else { throw .invalidField("delivery", "must be an object") }
        guard let raw = members["method"]?.stringValue else { throw .missingField("delivery.method") }
        guard let method = EventStream.DeliveryMethod(rawValue: raw) else {
            throw .invalidField("delivery.method", "must be urn:ietf:rfc:8935 (push) or urn:ietf:rfc:8936 (poll)")
        }
        var delivery = Delivery(method: method)
        if let url = members["endpoint_url"], url != .null {
            guard let text = url.stringValue else { throw .invalidField("delivery.endpoint_url", "must be a string") }
            delivery.endpointURL = text
        }
        if let header = members["authorization_header"], header != .null {
            guard let text = header.stringValue, !text.isEmpty, text.utf8.count <= 4096,
                  !text.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) else {
                throw .invalidField("delivery.authorization_header", "must be one header value of at most 4096 characters")
            }
            delivery.authorizationHeader = text
        }
        switch method {
        case .push:
            guard let url = delivery.endpointURL else { throw .missingField("delivery.endpoint_url") }
            do {
                _ = try WebhookURL(url)
            } catch AdminError.invalidField(_, let why) {
                throw .invalidField("delivery.endpoint_url", why)
            }
        case .poll:
            // The poll endpoint is the transmitter's; one echoed back is checked by the caller.
            guard delivery.authorizationHeader == nil else {
                throw .invalidField("delivery.authorization_header", "is for push delivery only")
            }
        }
        return delivery
    }
}
