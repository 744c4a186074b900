import CountersignCore
import Foundation

/// A receiver's event stream (SSF 1.0 §8.1.1): which events it wants, how they reach it, and
/// whether they flow. A stream belongs to the admin key that created it; the receiver reaches
/// only its own streams.
struct EventStream: Sendable, Equatable {
    enum DeliveryMethod: String, Sendable, Codable {
        /// RFC 8935: the transmitter posts each SET to the receiver's `endpoint_url`.
        case push = "urn:ietf:rfc:8935"
        /// RFC 8936: the receiver polls the transmitter's `endpoint_url` for SETs.
        case poll = "urn:ietf:rfc:8936"
    }

    /// SSF §8.1.2.1: enabled streams transmit; paused streams hold their events until enabled;
    /// disabled streams neither transmit nor hold.
    enum Status: String, Sendable, Codable, CaseIterable {
        case enabled, paused, disabled
    }

    /// How a user is named in `sub_id` (RFC 9493 §3.2): by email address, by issuer and `sub`
    /// (the `sub` of the tenant's ID tokens), or by an opaque id (the same value, without
    /// naming the issuer).
    enum SubjectFormat: String, Sendable, Codable, CaseIterable {
        case issSub = "iss_sub"
        case email
        case opaque
    }

    var id: String
    var tenantID: String
    var ownerKeyID: String
    /// `aud`: the receiver's audience, one string or several (`audience.count > 1` is an array).
    var audience: [String]
    var deliveryMethod: DeliveryMethod
    /// The receiver's push endpoint; nil for poll, whose endpoint is the transmitter's.
    var endpointURL: String?
    /// The push endpoint's `Authorization` header, sealed, when the receiver gave one.
    var authorizationSealed: Data?
    var eventsRequested: [String]
    var subjectFormat: SubjectFormat
    var description: String?
    var status: Status
    var statusReason: String?
    var verificationRequestedAt: Date?
    var createdAt: Date
    var updatedAt: Date

    /// `events_delivered`: the requested events Countersign sends, in the order it lists them.
    var eventsDelivered: [SecurityEventType] {
        SecurityEventType.supported.filter { eventsRequested.contains($0.rawValue) }
    }

    func delivers(_ type: SecurityEventType) -> Bool {
        type == .verification || type == .streamUpdated || eventsDelivered.contains(type)
    }

    /// The context the push Authorization header is sealed under: this stream's, so a sealed
    /// value cannot be moved to another stream.
    var sealingContext: String { "ssf-stream-authorization:\(tenantID):\(id)" }
}

/// A row of `ssf_streams`, decoded by column name.
struct EventStreamRow: Decodable {
    static let columns = CodingKeys.allCases.map(\.rawValue).joined(separator: ", ")

    var id: String
    var tenantID: String
    var ownerKeyID: String
    var audience: String
    var deliveryMethod: String
    var endpointURL: String?
    var authorizationSealed: Data?
    var eventsRequested: String
    var subjectFormat: String
    var description: String?
    var status: String
    var statusReason: String?
    var verificationRequestedAt: Date?
    var createdAt: Date
    var updatedAt: Date

    enum CodingKeys: String, CodingKey, CaseIterable {
        case id
        case tenantID = "tenant_id"
        case ownerKeyID = "owner_key_id"
        case audience
        case deliveryMethod = "delivery_method"
        case endpointURL = "endpoint_url"
        case authorizationSealed = "authorization_sealed"
        case eventsRequested = "events_requested"
        case subjectFormat = "subject_format"
        case description, status
        case statusReason = "status_reason"
        case verificationRequestedAt = "verification_requested_at"
        case createdAt = "created_at"
        case updatedAt = "updated_at"
    }

    func stream() throws -> EventStream {
        guard let method = EventStream.DeliveryMethod(rawValue: deliveryMethod),
              let format = EventStream.SubjectFormat(rawValue: subjectFormat),
              let status = EventStream.Status(rawValue: status) else {
            throw StorageError.corrupt("ssf_streams row \(id) holds an unknown method, format or status")
        }
        return EventStream(
            id: id, tenantID: tenantID, ownerKeyID: ownerKeyID,
            audience: try JSONDecoder().decode([String].self, from: Data(audience.utf8)), deliveryMethod: method,
            endpointURL: endpointURL, authorizationSealed: authorizationSealed,
            eventsRequested: try JSONDecoder().decode([String].self, from: Data(eventsRequested.utf8)),
            subjectFormat: format, description: description, status: status, statusReason: statusReason,
            verificationRequestedAt: verificationRequestedAt, createdAt: createdAt, updatedAt: updatedAt)
    }
}

/// One SET for one stream, from the moment it is recorded until it is delivered.
struct StreamEvent: Sendable, Equatable {
    enum Status: String, Sendable, Codable {
        /// Push: due for sending, being sent, accepted by the receiver, given up.
        case queued, sending, sent, failed
        /// Poll: waiting for a poll; handed out and not yet acknowledged; acknowledged (or
        /// answered with an error, `last_error`).
        case waiting, delivered, acknowledged
        /// Either: the stream is paused; the event leaves once it is enabled.
        case held
    }

    /// The SET's `jti`, `set_…`.
    var id: String
    var streamID: String
    var tenantID: String
    var eventType: String
    /// The SET's claims as canonical JSON, signed when the SET leaves.
    var claims: String
    var status: Status
    var attempts: Int
    var nextAttemptAt: Date
    var lastError: String?
    var createdAt: Date
    var updatedAt: Date
    var sentAt: Date?
}

extension StreamEvent: OutboxRow {
    static let columns = CodingKeys.allCases.map(\.rawValue).joined(separator: ", ")

    enum CodingKeys: String, CodingKey, CaseIterable {
        case id
        case streamID = "stream_id"
        case tenantID = "tenant_id"
        case eventType = "event_type"
        case claims, status, attempts
        case nextAttemptAt = "next_attempt_at"
        case lastError = "last_error"
        case createdAt = "created_at"
        case updatedAt = "updated_at"
        case sentAt = "sent_at"
    }
}
