import CountersignCore
import Foundation
import Logging
import ServiceLifecycle

/// Signs a recorded SET as it leaves: its claims, with the tenant's current RS256 key (the key
/// the tenant's JWKS publishes; CAEP's interoperability profile asks for RS256), `typ`
/// `secevent+jwt` and the key's `kid`. Every attempt carries the same claims and `jti`. The
/// issuer is written now, not when the SET was recorded: `iss` must be the issuer the
/// transmitter's metadata names when the receiver reads it (SSF §4.1.6), and a server whose
/// public URL changed while SETs waited sends them under the new one.
struct SecurityEventSigner: Sendable {
    let keys: TokenSigningKeys
    let tenants: any TenantRepository
    let origin: PublicOrigin
    let database: any Database

    func sign(_ event: StreamEvent) async throws -> String {
        guard let tenant = try await tenants.find(id: event.tenantID, on: database) else {
            throw StorageError.corrupt("the tenant of SET \(event.id) is gone")
        }
        guard case .object(var claims) = try JSONValue(parsing: Data(event.claims.utf8)) else {
            throw StorageError.corrupt("SET \(event.id) holds claims that are not an object")
        }
        let issuer = Issuer(tenant: tenant, origin: origin).identifier
        claims["iss"] = .string(issuer)
        if case .object(var subject) = claims["sub_id"], subject["format"] == .string("iss_sub") {
            subject["iss"] = .string(issuer)
            claims["sub_id"] = .object(subject)
        }
        let keySet = try await keys.keySet(for: tenant)
        return try await keySet.sign(claims, type: SharedSignals.tokenType, with: try keySet.current(.rs256))
    }
}

/// Works the push streams' SETs (RFC 8935): claims due ones, signs each, posts it to its
/// stream's endpoint with the stream's `Authorization` header, and records the outcome. A 2xx
/// answer delivers; a 400 whose `err` says the SET itself is wrong (`invalid_request`,
/// `invalid_key`, `invalid_issuer`, `invalid_audience`, `invalid_state`) is not retried; anything
/// else (an unreachable receiver, 5xx, 429, 401/403) is retried with a doubling delay until the
/// webhooks' `maximumAttempts`. SETs of a stream paused since they were queued are held again.
struct StreamPushDispatcher: Service, CustomStringConvertible {
    let database: any Database
    let signer: SecurityEventSigner
    let sealer: SecretSealer
    let client: WebhookHTTPClient
    let configuration: WebhookConfiguration
    let wakeup: PushWakeup
    let metrics: ServerMetrics
    let logger: Logger
    let now: @Sendable () -> Date
    /// How long SETs whose story is over are kept (`SharedSignalsConfiguration.retention`).
    let retention: TimeInterval
    let streams = EventStreamRepository()
    let readFailures = FailureStreak("the Shared Signals outbox could not be read")
    let housekeeping = PeriodicSchedule(every: 3600)

    var description: String { "StreamPushDispatcher" }

    /// The `err` codes of RFC 8935 §2.4 (and SSF's `invalid_state`) that sending the same SET
    /// again cannot change.
    static let permanentErrors: Set<String> = [
        "invalid_request", "invalid_key", "invalid_issuer", "invalid_audience", "invalid_state",
    ]

    func run() async throws {
        await OutboxDispatchLoop(
            wakeup: wakeup, workers: .one, batchSize: configuration.batchSize, pollInterval: configuration.pollInterval
        ).run { await runOnce() }
    }

    @discardableResult
    func runOnce() async -> Int {
        let now = now()
        if housekeeping.isDue(at: now) {
            do {
                try await streams.purge(finishedBefore: now.addingTimeInterval(-retention), on: database)
            } catch {
                logger.error("old Security Event Tokens could not be removed", metadata: ["error": "\(error)"])
            }
        }
        guard let claimed = await readFailures.reading(logger: logger, {
            try await streams.claim(
                limit: configuration.batchSize, at: now, leaseUntil: now.addingTimeInterval(configuration.lease), on: database)
        }), !claimed.isEmpty else { return 0 }
        // Streams in parallel; each stream's SETs one after the other, oldest first, so a
        // receiver gets them in the order they were recorded (SSF §8.1.2.1 asks it of held ones).
        // After a SET that must be retried, the stream's later ones wait with it.
        let byStream = Dictionary(grouping: claimed, by: \.streamID)
        await withTaskGroup(of: Void.self) { group in
            for events in byStream.values {
                group.addTask {
                    let ordered = events.sorted { ($0.createdAt, $0.id) < ($1.createdAt, $1.id) }
                    for (index, event) in ordered.enumerated() {
                        guard let retryAt = await deliver(event) else { continue }
                        await putBack(ordered.dropFirst(index + 1), due: retryAt)
                        break
                    }
                }
            }
        }
        return claimed.count
    }

    /// Returns claimed SETs to the queue unsent, due at `date`, their attempt not counted.
    private func putBack(_ events: ArraySlice<StreamEvent>, due date: Date) async {
        for event in events {
            do {
                try await streams.requeueClaimed(id: event.id, due: date, at: now(), on: database)
            } catch {
                logger.error("a Security Event Token could not be put back", metadata: ["error": "\(error)"])
            }
        }
    }

    private enum Outcome {
        case delivered
        case retry(String)
        case refused(String)
        /// The stream was paused (`held`) or changed to poll delivery (`waiting`) since the claim.
        case returned(StreamEvent.Status)
    }

    /// Sends one SET and records the outcome; returns when it is due again if it is to be retried.
    private func deliver(_ event: StreamEvent) async -> Date? {
        let outcome: Outcome
        do {
            outcome = try await send(event)
        } catch {
            outcome = .retry("the SET could not be prepared: \(error)")
        }
        let date = now()
        do {
            switch outcome {
            case .delivered:
                try await streams.markSent(id: event.id, at: date, on: database)
                metrics.securityEventDelivered(method: "push", outcome: "delivered")
            case .returned(let status):
                try await streams.returnClaimed(id: event.id, to: status, at: date, on: database)
            case .refused(let reason):
                try await streams.markFailed(id: event.id, error: reason, at: date, on: database)
                metrics.securityEventDelivered(method: "push", outcome: "refused")
                logger.warning("a Security Event Token was refused by its receiver",
                               metadata: ["stream_id": "\(event.streamID)", "jti": "\(event.id)", "reason": "\(reason)"])
            case .retry(let reason) where event.attempts >= configuration.maximumAttempts:
                try await streams.markFailed(id: event.id, error: reason, at: date, on: database)
                metrics.securityEventDelivered(method: "push", outcome: "given_up")
                logger.warning("a Security Event Token was given up",
                               metadata: ["stream_id": "\(event.streamID)", "jti": "\(event.id)",
                                          "attempts": "\(event.attempts)", "reason": "\(reason)"])
            case .retry(let reason):
                let next = date.addingTimeInterval(configuration.retryDelay(afterAttempts: event.attempts))
                try await streams.reschedule(id: event.id, next: next, error: reason, at: date, on: database)
                metrics.securityEventDelivered(method: "push", outcome: "retry")
                return next
            }
        } catch {
            // The row stays leased and is claimed again when the lease runs out.
            logger.error("a Security Event Token outcome could not be recorded", metadata: ["error": "\(error)"])
            return date.addingTimeInterval(configuration.lease)
        }
        return nil
    }

    private func send(_ event: StreamEvent) async throws -> Outcome {
        guard let stream = try await streams.find(id: event.streamID, tenantID: event.tenantID, on: database) else {
            return .refused("the stream was deleted")
        }
        switch (stream.status, stream.deliveryMethod) {
        case (.paused, _):
            return .returned(.held)
        case (.disabled, _):
            return .refused("the stream is disabled")
        case (.enabled, .poll):
            // Changed to poll delivery since the claim: the next poll takes it.
            return .returned(.waiting)
        case (.enabled, .push):
            break
        }
        guard let url = stream.endpointURL else { return .refused("the stream has no endpoint_url") }
        var headers = [("User-Agent", "Countersign-SSF/1"), ("Accept", "application/json")]
        if let sealed = stream.authorizationSealed {
            headers.append(("Authorization", String(decoding: try sealer.open(sealed, context: stream.sealingContext), as: UTF8.self)))
        }
        let token = try await signer.sign(event)
        let answer: WebhookHTTPClient.Answer
        do {
            answer = try await client.post(
                Data(token.utf8), url: url, headers: headers, contentType: "application/secevent+jwt",
                timeout: configuration.deliveryTimeout)
        } catch {
            return .retry("\(error)")
        }
        if (200..<300).contains(answer.status) { return .delivered }
        let refusal = answer.body.flatMap { try? JSONValue(parsing: $0) }
        let err = refusal?["err"]?.stringValue
        let detail = [err, refusal?["description"]?.stringValue].compactMap { $0 }.joined(separator: ": ")
        let reason = "the receiver answered HTTP \(answer.status)" + (detail.isEmpty ? "" : " (\(detail))")
        if answer.status == 400, let err, Self.permanentErrors.contains(err) { return .refused(reason) }
        return .retry(reason)
    }
}
