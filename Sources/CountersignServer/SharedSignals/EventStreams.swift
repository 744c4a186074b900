import CountersignCore
import Foundation

/// The stream management API's work (SSF 1.0 §8.1): create, read, update, replace, delete,
/// status, verification, and poll delivery (RFC 8936). Every call is a receiver's, identified by
/// its admin key: it reaches only the streams that key created. Each change is audited
/// (`ssf_stream.created`, `.updated`, `.status_set`, `.deleted`), naming the push endpoint's host
/// but never its URL or Authorization header.
struct EventStreams: Sendable {
    let database: any Database
    let audit: AuditLog
    let signals: SharedSignals
    let signer: SecurityEventSigner
    let sealer: SecretSealer
    let configuration: SharedSignalsConfiguration
    let metrics: ServerMetrics
    let now: @Sendable () -> Date
    let streams = EventStreamRepository()

    /// The stream configuration as the API answers it (SSF §8.1.1). The push Authorization header
    /// is never answered back: it is the receiver's secret.
    struct Configuration: Encodable, Sendable {
        struct Delivery: Encodable, Sendable {
            let method: String
            let endpointURL: String?

            enum CodingKeys: String, CodingKey {
                case method
                case endpointURL = "endpoint_url"
            }
        }

        let streamID: String
        let iss: String
        let aud: JSONValue
        let eventsSupported: [String]
        let eventsRequested: [String]
        let eventsDelivered: [String]
        let delivery: Delivery
        let minVerificationInterval: Int
        let description: String?
        let format: String

        enum CodingKeys: String, CodingKey {
            case streamID = "stream_id"
            case iss, aud
            case eventsSupported = "events_supported"
            case eventsRequested = "events_requested"
            case eventsDelivered = "events_delivered"
            case delivery
            case minVerificationInterval = "min_verification_interval"
            case description, format
        }
    }

    struct StatusAnswer: Encodable, Sendable {
        let streamID: String
        let status: String
        let reason: String?

        enum CodingKeys: String, CodingKey {
            case streamID = "stream_id"
            case status, reason
        }
    }

    func configuration(of stream: EventStream, issuer: Issuer) -> Configuration {
        let endpoint = stream.deliveryMethod == .push ? stream.endpointURL : Self.pollURL(stream, issuer: issuer)
        return Configuration(
            streamID: stream.id, iss: issuer.identifier,
            aud: stream.audience.count == 1 ? .string(stream.audience[0]) : .array(stream.audience.map(JSONValue.string)),
            eventsSupported: SecurityEventType.supported.map(\.rawValue), eventsRequested: stream.eventsRequested,
            eventsDelivered: stream.eventsDelivered.map(\.rawValue),
            delivery: .init(method: stream.deliveryMethod.rawValue, endpointURL: endpoint),
            minVerificationInterval: configuration.minimumVerificationInterval,
            description: stream.description, format: stream.subjectFormat.rawValue)
    }

    static func pollURL(_ stream: EventStream, issuer: Issuer) -> String {
        "\(issuer.identifier)/ssf/poll/\(stream.id)"
    }

    // MARK: Streams

    func create(_ request: StreamConfigurationRequest, key: AdminKey, issuer: Issuer) async throws -> EventStream {
        for name in request.echoed.keys where name != "aud" {
            throw AdminError.invalidField(name, "is set by the transmitter; leave it out when creating a stream")
        }
        if request.streamID != nil {
            throw AdminError.invalidField("stream_id", "is set by the transmitter; leave it out when creating a stream")
        }
        let date = now()
        var stream = EventStream(
            id: Identifier.make("ssf", at: date), tenantID: issuer.tenant.id, ownerKeyID: key.id,
            audience: request.audience ?? [key.id], deliveryMethod: .poll, endpointURL: nil, authorizationSealed: nil,
            eventsRequested: request.eventsRequested ?? [], subjectFormat: request.format ?? .issSub,
            description: request.description.flatMap { $0.isEmpty ? nil : $0 }, status: .enabled, statusReason: nil,
            verificationRequestedAt: nil, createdAt: date, updatedAt: date)
        // No `delivery`: poll (SSF §8.1.1.1).
        try apply(request.delivery ?? .init(method: .poll), to: &stream, issuer: issuer)
        let (limit, new) = (configuration.maximumStreamsPerKey, stream)
        return try await database.transaction { executor in
            let held = try await streams.list(ownerKeyID: key.id, tenantID: issuer.tenant.id, on: executor)
            guard held.count < limit else {
                throw AdminError.conflict("this receiver holds \(held.count) streams, the most one may; update or delete one")
            }
            try await streams.insert(new, on: executor)
            try await record("ssf_stream.created", new, key: key, on: executor)
            return new
        }
    }

    func list(key: AdminKey, issuer: Issuer) async throws -> [EventStream] {
        try await streams.list(ownerKeyID: key.id, tenantID: issuer.tenant.id, on: database)
    }

    /// The key's stream of that id; 404 for another receiver's, as for none.
    func stream(_ id: String, key: AdminKey, issuer: Issuer) async throws -> EventStream {
        guard let stream = try await streams.find(id: id, tenantID: issuer.tenant.id, on: database),
              stream.ownerKeyID == key.id else {
            throw AdminError.notFound("stream \(id)")
        }
        return stream
    }

    /// PATCH (`replace` false) changes the receiver-supplied members given; PUT (`replace` true)
    /// sets all of them, an absent one to its default (no events, poll, no description, iss_sub).
    func update(_ request: StreamConfigurationRequest, replace: Bool, key: AdminKey, issuer: Issuer) async throws
        -> EventStream {
        guard let id = request.streamID else { throw AdminError.missingField("stream_id") }
        return try await database.transaction { executor in
            guard var stream = try await streams.lock(id: id, tenantID: issuer.tenant.id, on: executor),
                  stream.ownerKeyID == key.id else {
                throw AdminError.notFound("stream \(id)")
            }
            try check(request.echoed, against: stream, issuer: issuer)
            let before = stream
            if replace {
                stream.eventsRequested = request.eventsRequested ?? []
                stream.description = request.description.flatMap { $0.isEmpty ? nil : $0 }
                stream.subjectFormat = request.format ?? .issSub
                try apply(request.delivery ?? .init(method: .poll), to: &stream, issuer: issuer)
            } else {
                if let events = request.eventsRequested { stream.eventsRequested = events }
                if let description = request.description { stream.description = description.isEmpty ? nil : description }
                if let format = request.format { stream.subjectFormat = format }
                if let delivery = request.delivery { try apply(delivery, to: &stream, issuer: issuer) }
            }
            stream.updatedAt = now()
            try await streams.update(stream, on: executor)
            try await record("ssf_stream.updated", stream, key: key, on: executor)
            if before.deliveryMethod != stream.deliveryMethod, stream.status == .enabled {
                // SETs not yet delivered (a poll's unacknowledged ones included) move to the new
                // method's queue; held ones wait for the stream to be enabled, as they were.
                try await streams.move(
                    streamID: stream.id, to: stream.deliveryMethod == .push ? .queued : .waiting, at: stream.updatedAt,
                    on: executor)
                signals.announce(on: executor)
            }
            return stream
        }
    }

    func delete(_ id: String, key: AdminKey, issuer: Issuer) async throws {
        try await database.transaction { executor in
            guard let stream = try await streams.lock(id: id, tenantID: issuer.tenant.id, on: executor),
                  stream.ownerKeyID == key.id else {
                throw AdminError.notFound("stream \(id)")
            }
            try await streams.delete(id: stream.id, on: executor)
            try await record("ssf_stream.deleted", stream, key: key, on: executor)
        }
    }

    private func record(_ action: String, _ stream: EventStream, key: AdminKey, on executor: any SQLExecutor) async throws {
        var details = ["delivery_method": stream.deliveryMethod.rawValue, "status": stream.status.rawValue,
                       "events": stream.eventsDelivered.map(\.rawValue).joined(separator: " "),
                       "format": stream.subjectFormat.rawValue]
        if let url = stream.endpointURL, let host = try? WebhookURL(url).host { details["host"] = host }
        if let reason = stream.statusReason { details["reason"] = reason }
        try await audit.record(
            action, actor: "admin-key:\(key.id)", tenantID: stream.tenantID, target: ("ssf_stream", stream.id),
            details: details, at: now(), on: executor)
    }

    /// Transmitter-supplied members a receiver echoed must be what they are (SSF §8.1.1.3).
    private func check(_ echoed: [String: JSONValue], against stream: EventStream, issuer: Issuer) throws {
        let current = configuration(of: stream, issuer: issuer)
        for (name, value) in echoed.sorted(by: { $0.key < $1.key }) {
            let expected: JSONValue = switch name {
            case "iss": .string(current.iss)
            case "aud": current.aud
            case "events_supported": .array(current.eventsSupported.map(JSONValue.string))
            case "events_delivered": .array(current.eventsDelivered.map(JSONValue.string))
            case "min_verification_interval": .integer(Int64(current.minVerificationInterval))
            default: value
            }
            if name == "aud", case .array(let items) = value, items.count == 1, items[0] == expected { continue }
            guard value == expected else {
                throw AdminError.invalidField(name, "is set by the transmitter and cannot be changed; leave it out or send it as read")
            }
        }
    }

    private func apply(_ delivery: StreamConfigurationRequest.Delivery, to stream: inout EventStream, issuer: Issuer) throws {
        switch delivery.method {
        case .poll:
            if let url = delivery.endpointURL, url != Self.pollURL(stream, issuer: issuer) {
                throw AdminError.invalidField(
                    "delivery.endpoint_url", "is set by the transmitter for poll delivery; leave it out or send it as read")
            }
            stream.deliveryMethod = .poll
            stream.endpointURL = nil
            stream.authorizationSealed = nil
        case .push:
            // A receiver is a third party: plain http, even to the loopback host, is for a
            // server that itself runs on http (development), never one people reach over https.
            if issuer.identifier.hasPrefix("https:"), delivery.endpointURL?.lowercased().hasPrefix("http:") == true {
                throw AdminError.invalidField(
                    "delivery.endpoint_url", "must use https: plain http to the loopback host is only for a server whose own public URL is http")
            }
            stream.deliveryMethod = .push
            stream.endpointURL = delivery.endpointURL
            stream.authorizationSealed = try delivery.authorizationHeader.map {
                try sealer.seal(Data($0.utf8), context: stream.sealingContext)
            }
        }
    }

    // MARK: Status

    func setStatus(_ id: String, to status: EventStream.Status, reason: String?, key: AdminKey, issuer: Issuer) async throws
        -> EventStream {
        try await database.transaction { executor in
            guard var stream = try await streams.lock(id: id, tenantID: issuer.tenant.id, on: executor),
                  stream.ownerKeyID == key.id else {
                throw AdminError.notFound("stream \(id)")
            }
            let date = now()
            let before = stream.status
            stream.status = status
            stream.statusReason = reason.flatMap { $0.isEmpty ? nil : String($0.prefix(StreamConfigurationRequest.descriptionLimit)) }
            stream.updatedAt = date
            try await streams.update(stream, on: executor)
            try await record("ssf_stream.status_set", stream, key: key, on: executor)
            switch (before, status) {
            case (_, .disabled):
                try await streams.drop(streamID: stream.id, on: executor)
            case (.enabled, .paused):
                try await streams.hold(streamID: stream.id, at: date, on: executor)
            case (.paused, .enabled):
                try await streams.release(
                    streamID: stream.id, to: stream.deliveryMethod == .push ? .queued : .waiting, at: date, on: executor)
                signals.announce(on: executor)
            default:
                break
            }
            return stream
        }
    }

    // MARK: Verification

    /// Queues a verification event echoing `state` (SSF §8.1.4.2); 429 when the last request was
    /// less than `min_verification_interval` ago.
    func verify(_ id: String, state: String?, key: AdminKey, issuer: Issuer) async throws {
        let interval = TimeInterval(configuration.minimumVerificationInterval)
        try await database.transaction { executor in
            guard var stream = try await streams.lock(id: id, tenantID: issuer.tenant.id, on: executor),
                  stream.ownerKeyID == key.id else {
                throw AdminError.notFound("stream \(id)")
            }
            guard stream.status != .disabled else {
                throw APIError.badRequest("the stream is disabled: enable it before asking for a verification event")
            }
            // Whole milliseconds, as the database keeps times, so the interval is measured
            // between the times as stored.
            let date = Date(timeIntervalSince1970: (now().timeIntervalSince1970 * 1000).rounded(.down) / 1000)
            if let last = stream.verificationRequestedAt, date.timeIntervalSince(last) < interval {
                let wait = Int((interval - date.timeIntervalSince(last)).rounded(.up))
                throw APIError(
                    .tooManyRequests, DeviceErrorCode(rawValue: "slow_down"),
                    "a verification event was asked for less than \(Int(interval)) seconds ago (min_verification_interval)",
                    headers: [.retryAfter: String(max(1, wait))])
            }
            stream.verificationRequestedAt = date
            try await streams.update(stream, on: executor)
            var payload: [String: JSONValue] = [:]
            if let state { payload["state"] = .string(state) }
            try await signals.enqueue(
                SecurityEventBody(type: .verification, payload: payload), subject: SharedSignals.streamSubject(stream),
                issuer: issuer.identifier, transaction: nil, to: stream, at: date, on: executor)
            signals.announce(on: executor)
        }
    }

    // MARK: Poll

    struct PollRequest: Sendable {
        var maxEvents: Int?
        var returnImmediately = false
        var ack: [String] = []
        var errors: [String: String] = [:]

        init(_ body: Data) throws(AdminError) {
            guard !body.isEmpty else { return }
            let value: JSONValue
            do { value = try JSONValue(parsing: body) } catch { throw .invalidField("body", "must be a JSON object") }
            guard case .object(let members) = value else { throw .invalidField("body", "must be a JSON object") }
            if let max = members["maxEvents"] {
                guard case .integer(let count) = max, count >= 0 else {
                    throw .invalidField("maxEvents", "must be a whole number, 0 or more")
                }
                maxEvents = Int(clamping: count)
            }
            if let immediately = members["returnImmediately"] {
                guard case .bool(let flag) = immediately else { throw .invalidField("returnImmediately", "must be true or false") }
                returnImmediately = flag
            }
            if let ack = members["ack"] {
                guard case .array(let items) = ack, items.allSatisfy({ $0.stringValue != nil }) else {
                    throw .invalidField("ack", "must be an array of jti strings")
                }
                self.ack = items.compactMap(\.stringValue)
            }
            if let setErrs = members["setErrs"] {
                guard case .object(let entries) = setErrs else { throw .invalidField("setErrs", "must be an object") }
                for (jti, entry) in entries {
                    guard let err = entry["err"]?.stringValue else {
                        throw .invalidField("setErrs.\(jti)", "must be an object with err and description")
                    }
                    errors[jti] = [err, entry["description"]?.stringValue].compactMap { $0 }.joined(separator: ": ")
                }
            }
        }
    }

    struct PollAnswer: Encodable, Sendable {
        let sets: [String: String]
        let moreAvailable: Bool
    }

    /// RFC 8936 §2: records the acknowledgements and errors, then hands out the stream's due SETs;
    /// with none and without `returnImmediately`, waits for one up to the long-poll timeout.
    func poll(_ id: String, request: PollRequest, key: AdminKey, issuer: Issuer) async throws -> PollAnswer {
        var stream = try await stream(id, key: key, issuer: issuer)
        let streamID = stream.id
        guard stream.deliveryMethod == .poll else {
            throw APIError.badRequest("the stream delivers by push (urn:ietf:rfc:8935); it has nothing to poll")
        }
        if !request.ack.isEmpty || !request.errors.isEmpty {
            let date = now()
            try await database.transaction { executor in
                let acknowledged = try await streams.acknowledge(
                    streamID: streamID, ids: request.ack, error: nil, at: date, on: executor)
                for _ in 0..<acknowledged { metrics.securityEventDelivered(method: "poll", outcome: "acknowledged") }
                for (jti, error) in request.errors.sorted(by: { $0.key < $1.key }) {
                    if try await streams.acknowledge(
                        streamID: streamID, ids: [jti], error: "the receiver answered \(error)", at: date, on: executor) > 0 {
                        metrics.securityEventDelivered(method: "poll", outcome: "error")
                    }
                }
            }
        }
        let limit = min(request.maxEvents ?? configuration.maximumEventsPerPoll, configuration.maximumEventsPerPoll)
        guard limit > 0 else { return PollAnswer(sets: [:], moreAvailable: false) }
        let deadline = ContinuousClock.now + configuration.longPollTimeout
        while true {
            let seen = signals.polls.generation
            if stream.status == .enabled {
                let date = now()
                let handed = try await database.transaction { executor in
                    try await streams.poll(
                        streamID: streamID, limit: limit, at: date,
                        redeliverAt: date.addingTimeInterval(configuration.redeliveryDelay), on: executor)
                }
                if !handed.isEmpty {
                    var sets: [String: String] = [:]
                    for event in handed { sets[event.id] = try await signer.sign(event) }
                    for _ in handed { metrics.securityEventDelivered(method: "poll", outcome: "delivered") }
                    let more = try await streams.hasDue(streamID: stream.id, at: date, on: database)
                    return PollAnswer(sets: sets, moreAvailable: more)
                }
            }
            if request.returnImmediately || ContinuousClock.now >= deadline || Task.isCancelled || signals.polls.isClosed {
                return PollAnswer(sets: [:], moreAvailable: false)
            }
            // This node's SETs wake the poll at once; other nodes' are found within a second.
            await signals.polls.wait(after: seen, upTo: min(.seconds(1), deadline - ContinuousClock.now))
            guard let current = try await streams.find(id: stream.id, tenantID: stream.tenantID, on: database) else {
                throw AdminError.notFound("stream \(id)")
            }
            stream = current
        }
    }
}
