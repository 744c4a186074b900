import CountersignCore
import Foundation
import NIOCore
import NIOHPACK
import NIOHTTP2
import NIOSSL

/// Sends through Apple's APNs provider API: HTTP/2 over TLS on connections of its own
/// (`APNsConnectionPool`), authenticated by a provider token or by the credential's client
/// certificate. A batch of notifications goes on the wire at once: its streams are written
/// back to back, flushed once, and awaited together.
final class APNsSender: PushSender {
    enum Authentication: Sendable {
        case token(APNsProviderToken)
        case certificate
    }

    /// How long a batch waits for APNs' answers before its remaining streams are tried again.
    static let responseTimeout: TimeAmount = .seconds(30)

    private let connections: APNsConnectionPool
    private let topic: String
    private let authentication: Authentication
    private let now: @Sendable () -> Date

    init(credential: PushCredential, secret: PushSecret, configuration: PushConfiguration,
         tokens store: any APNsProviderTokenStore, now: @escaping @Sendable () -> Date) throws {
        let environment = credential.environment ?? .production
        let baseURL = environment == .production ? configuration.apnsProductionURL : configuration.apnsSandboxURL
        topic = credential.topic ?? ""
        self.now = now
        switch secret {
        case .apnsCertificate(let pkcs12, let password):
            let file = try APNsCertificateFile.open(pkcs12, password: password, at: now())
            connections = try APNsConnectionPool(baseURL: baseURL, configuration: configuration, certificate: file.bundle)
            authentication = .certificate
        case .apnsToken(let pem):
            let key = try APNsSigningKey(keyID: credential.summary.keyID ?? "", teamID: credential.summary.teamID ?? "", pem: pem)
            connections = try APNsConnectionPool(baseURL: baseURL, configuration: configuration, certificate: nil)
            authentication = .token(APNsProviderToken(key: key, store: store))
        case .fcm:
            throw PushCredentialUnusable(reason: "an FCM credential cannot send through APNs")
        }
    }

    func send(_ entry: PushOutboxEntry, deviceToken: String) async -> PushOutcome {
        await send([PushDelivery(entry: entry, deviceToken: deviceToken)])[0]
    }

    func send(_ batch: [PushDelivery]) async -> [PushOutcome] {
        var outcomes = [PushOutcome?](repeating: nil, count: batch.count)
        // The token becomes part of the URL path: anything but hex digits is no APNs token.
        var sendable: [Int] = []
        sendable.reserveCapacity(batch.count)
        for (index, delivery) in batch.enumerated() {
            if Self.isDeviceToken(delivery.deviceToken) {
                sendable.append(index)
            } else {
                outcomes[index] = .invalidToken(reason: "BadDeviceToken", since: nil)
            }
        }
        let (first, providerToken) = await attempt(sendable.map { batch[$0] })
        var expired: [Int] = []
        for (position, outcome) in zip(sendable, first) {
            outcomes[position] = outcome
            if case .retry("ExpiredProviderToken", _) = outcome { expired.append(position) }
        }
        guard case .token(let tokens) = authentication else { return outcomes.map { $0! } }
        // An expired provider token is renewed (if old enough to be) and its pushes tried once more.
        if !expired.isEmpty, let providerToken {
            do {
                if try await tokens.renew(after: providerToken, at: now()) {
                    let (again, _) = await attempt(expired.map { batch[$0] })
                    for (position, outcome) in zip(expired, again) { outcomes[position] = outcome }
                }
            } catch {
                for position in expired {
                    outcomes[position] = .retry(reason: "cannot renew the provider token: \(error)", after: nil)
                }
            }
        }
        // A token made elsewhere (an older node, another installation with the same key)
        // changed the key's token too recently. Making yet another would only restart APNs'
        // 20 minutes: the push waits, with this token, until it has served them.
        for (index, outcome) in outcomes.enumerated() {
            if case .retry("TooManyProviderTokenUpdates", let after)? = outcome {
                outcomes[index] = .retry(reason: "TooManyProviderTokenUpdates",
                                         after: max(after ?? 0, tokens.timeUntilReplaceable(at: now())))
            }
        }
        return outcomes.map { $0! }
    }

    /// One round trip of a batch, with the provider token it used.
    private func attempt(_ batch: [PushDelivery]) async -> (outcomes: [PushOutcome], providerToken: String?) {
        guard !batch.isEmpty else { return ([], nil) }
        var providerToken: String?
        if case .token(let tokens) = authentication {
            do {
                providerToken = try await tokens.token(at: now())
            } catch let error as StorageError {
                // The shared token could not be read or stored: the database will be back.
                return (Array(repeating: .retry(reason: "the provider token could not be read: \(error)", after: nil),
                              count: batch.count), nil)
            } catch {
                return (Array(repeating: .failed(reason: "cannot sign a provider token: \(error)"), count: batch.count), nil)
            }
        }
        let requests = batch.map { request(for: $0, providerToken: providerToken) }
        let results = await connections.send(requests, timeout: Self.responseTimeout)
        let outcomes = results.map { result -> PushOutcome in
            switch result {
            case .answered(let status, let retryAfter, let body):
                return Self.outcome(status: status, body: body ?? ByteBuffer(), retryAfter: retryAfter)
            case .unanswered(let reason):
                return .retry(reason: reason, after: nil)
            }
        }
        return (outcomes, providerToken)
    }

    private func request(for delivery: PushDelivery, providerToken: String?) -> APNsWireRequest {
        Self.request(for: delivery, authority: connections.authority, topic: topic, providerToken: providerToken)
    }

    /// The request's headers: the pseudo-headers, then Apple's in a fixed order. The headers
    /// every notification repeats (authority, token, topic, content type) stay in HPACK's
    /// table after the first; the ones each notification changes are never indexed, so that
    /// they do not push the repeated ones out.
    static func request(for delivery: PushDelivery, authority: String, topic: String, providerToken: String?) -> APNsWireRequest {
        let entry = delivery.entry
        let (type, priority) = PushContent.apnsPushType(for: entry)
        var headers = HPACKHeaders()
        headers.reserveCapacity(13)
        headers.add(name: ":method", value: "POST")
        headers.add(name: ":scheme", value: "https")
        headers.add(name: ":authority", value: authority)
        headers.add(name: ":path", value: "/3/device/\(delivery.deviceToken)", indexing: .nonIndexable)
        if let providerToken { headers.add(name: "authorization", value: "bearer \(providerToken)") }
        headers.add(name: "apns-push-type", value: type)
        headers.add(name: "apns-topic", value: topic)
        headers.add(name: "apns-priority", value: priority)
        headers.add(name: "apns-expiration", value: String(Int64(entry.expiresAt.timeIntervalSince1970.rounded(.down))),
                    indexing: .nonIndexable)
        headers.add(name: "apns-collapse-id", value: entry.subjectID, indexing: .nonIndexable)
        headers.add(name: "apns-id", value: entry.id, indexing: .nonIndexable)
        headers.add(name: "content-type", value: "application/json")
        return APNsWireRequest(headers: headers, body: ByteBuffer(data: PushContent.apnsBody(for: entry)))
    }

    /// APNs device tokens are hex digits (64 today; Apple says they may grow).
    static func isDeviceToken(_ token: String) -> Bool {
        (1...512).contains(token.utf8.count)
            && token.utf8.allSatisfy { (0x30...0x39).contains($0) || (0x41...0x46).contains($0) || (0x61...0x66).contains($0) }
    }

    /// APNs' answer, as `docs/push.md` lists it: 200 delivered; 410 and `BadDeviceToken` end
    /// the token; `ExpiredProviderToken`, 429 and 5xx are tried again; every other refusal is
    /// recorded with Apple's reason.
    static func outcome(status: Int, body: ByteBuffer, retryAfter: String?) -> PushOutcome {
        if status == 200 { return .delivered(providerMessageID: nil) }
        let json = try? JSONValue(parsing: Data(buffer: body))
        let reason = json?["reason"]?.stringValue ?? "HTTP \(status)"
        let retryAfter = retryAfter.flatMap(TimeInterval.init)
        switch (status, reason) {
        case (410, _):
            let since = json?["timestamp"]?.integerValue.map { Date(timeIntervalSince1970: TimeInterval($0) / 1000) }
            return .invalidToken(reason: reason, since: since)
        case (400, "BadDeviceToken"):
            return .invalidToken(reason: reason, since: nil)
        case (403, "ExpiredProviderToken"), (429, _):
            return .retry(reason: reason, after: retryAfter)
        case (500..., _):
            return .retry(reason: reason, after: retryAfter)
        default:
            return .failed(reason: reason)
        }
    }

    func shutdown() async {
        await connections.shutdown()
    }
}

/// A stored credential that can no longer be used to send (it names its cause).
struct PushCredentialUnusable: Error, CustomStringConvertible {
    let reason: String
    var description: String { reason }
}
