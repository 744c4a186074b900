import AsyncHTTPClient
import CountersignCore
import Foundation
import NIOCore
import NIOHTTP1
import NIOSSL

/// Sends through Apple's APNs provider API: HTTP/2 over TLS, one multiplexed connection pool
/// per credential, authenticated by a provider token or by the credential's client certificate.
final class APNsSender: PushSender {
    enum Authentication: Sendable {
        case token(APNsProviderToken)
        case certificate
    }

    private let client: PushHTTPClient
    private let baseURL: String
    private let topic: String
    private let authentication: Authentication
    private let now: @Sendable () -> Date

    init(credential: PushCredential, secret: PushSecret, configuration: PushConfiguration,
         tokens store: any APNsProviderTokenStore, now: @escaping @Sendable () -> Date) throws {
        let environment = credential.environment ?? .production
        baseURL = environment == .production ? configuration.apnsProductionURL : configuration.apnsSandboxURL
        topic = credential.topic ?? ""
        self.now = now
        switch secret {
        case .apnsCertificate(let pkcs12, let password):
            let file = try APNsCertificateFile.open(pkcs12, password: password, at: now())
            client = try PushHTTPClient(configuration, certificate: file.bundle)
            authentication = .certificate
        case .apnsToken(let pem):
            let key = try APNsSigningKey(keyID: credential.summary.keyID ?? "", teamID: credential.summary.teamID ?? "", pem: pem)
            client = try PushHTTPClient(configuration, certificate: nil)
            authentication = .token(APNsProviderToken(key: key, store: store))
        case .fcm:
            throw PushCredentialUnusable(reason: "an FCM credential cannot send through APNs")
        }
    }

    func send(_ entry: PushOutboxEntry, deviceToken: String) async -> PushOutcome {
        // The token becomes part of the URL path: anything but hex digits is no APNs token.
        guard Self.isDeviceToken(deviceToken) else { return .invalidToken(reason: "BadDeviceToken", since: nil) }
        let outcome = await attempt(entry, deviceToken: deviceToken)
        guard case .token(let tokens) = authentication, case .retry(let reason, let after) = outcome.outcome else {
            return outcome.outcome
        }
        switch reason {
        case "ExpiredProviderToken":
            // Renewed (if old enough to be) and the push tried once more.
            guard let rejected = outcome.providerToken else { return outcome.outcome }
            do {
                if try await tokens.renew(after: rejected, at: now()) {
                    return await attempt(entry, deviceToken: deviceToken).outcome
                }
            } catch {
                return .retry(reason: "cannot renew the provider token: \(error)", after: nil)
            }
            return outcome.outcome
        case "TooManyProviderTokenUpdates":
            // A token made elsewhere (an older node, another installation with the same key)
            // changed the key's token too recently. Making yet another would only restart
            // APNs' 20 minutes: the push waits, with this token, until it has served them.
            let wait = tokens.timeUntilReplaceable(at: now())
            return .retry(reason: reason, after: max(after ?? 0, wait))
        default:
            return outcome.outcome
        }
    }

    private func attempt(_ entry: PushOutboxEntry, deviceToken: String) async -> (outcome: PushOutcome, providerToken: String?) {
        var request = HTTPClientRequest(url: "\(baseURL)/3/device/\(deviceToken)")
        request.method = .POST
        let (type, priority) = PushContent.apnsPushType(for: entry)
        var providerToken: String?
        if case .token(let tokens) = authentication {
            do {
                let token = try await tokens.token(at: now())
                request.headers.add(name: "authorization", value: "bearer \(token)")
                providerToken = token
            } catch let error as StorageError {
                // The shared token could not be read or stored: the database will be back.
                return (.retry(reason: "the provider token could not be read: \(error)", after: nil), nil)
            } catch {
                return (.failed(reason: "cannot sign a provider token: \(error)"), nil)
            }
        }
        request.headers.add(name: "apns-push-type", value: type)
        request.headers.add(name: "apns-topic", value: topic)
        request.headers.add(name: "apns-priority", value: priority)
        request.headers.add(name: "apns-expiration", value: String(Int64(entry.expiresAt.timeIntervalSince1970.rounded(.down))))
        request.headers.add(name: "apns-collapse-id", value: entry.transactionID)
        request.headers.add(name: "apns-id", value: entry.id)
        request.headers.add(name: "content-type", value: "application/json")
        request.body = .bytes(ByteBuffer(data: PushContent.apnsBody(for: entry)))
        do {
            let response = try await client.execute(request, timeout: .seconds(30))
            let body = try await response.body.collect(upTo: 64 * 1024)
            return (Self.outcome(status: Int(response.status.code), body: body, headers: response.headers), providerToken)
        } catch {
            return (.retry(reason: "APNs could not be reached: \(error)", after: nil), providerToken)
        }
    }

    /// APNs device tokens are hex digits (64 today; Apple says they may grow).
    static func isDeviceToken(_ token: String) -> Bool {
        (1...512).contains(token.utf8.count)
            && token.utf8.allSatisfy { (0x30...0x39).contains($0) || (0x41...0x46).contains($0) || (0x61...0x66).contains($0) }
    }

    /// APNs' answer, as `docs/push.md` lists it: 200 delivered; 410 and `BadDeviceToken` end
    /// the token; `ExpiredProviderToken`, 429 and 5xx are tried again; every other refusal is
    /// recorded with Apple's reason.
    static func outcome(status: Int, body: ByteBuffer, headers: HTTPHeaders) -> PushOutcome {
        if status == 200 { return .delivered(providerMessageID: nil) }
        let json = try? JSONValue(parsing: Data(buffer: body))
        let reason = json?["reason"]?.stringValue ?? "HTTP \(status)"
        let retryAfter = headers.first(name: "retry-after").flatMap(TimeInterval.init)
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
        await client.shutdown()
    }
}

/// A stored credential that can no longer be used to send (it names its cause).
struct PushCredentialUnusable: Error, CustomStringConvertible {
    let reason: String
    var description: String { reason }
}
