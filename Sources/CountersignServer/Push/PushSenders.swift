import CountersignCore
import Foundation
import Synchronization

/// The senders of every tenant's active credentials, each with its own connection pool, made
/// on first use and replaced when the credential changes. A credential is looked up again at
/// most every few seconds, so a new one is picked up without a restart.
final class PushSenders: Sendable {
    private struct Key: Hashable {
        let tenantID: String
        let provider: PushRegistration.Provider
    }

    private struct Entry {
        /// The credential's id and version the sender was made from; nil when there is none.
        let version: (id: String, updatedAt: Date)?
        let sender: (any PushSender)?
        /// Why there is no sender.
        let unusable: String?
        let checkedAt: ContinuousClock.Instant
    }

    static let recheckInterval: Duration = .seconds(5)

    private let services: ServerServices
    private let entries = Mutex<[Key: Entry]>([:])
    /// Senders replaced while their requests may still be in flight, shut down at the end.
    private let retired = Mutex<[any PushSender]>([])

    init(services: ServerServices) {
        self.services = services
    }

    /// The sender for a tenant and provider, or why there is none.
    func sender(tenantID: String, provider: PushRegistration.Provider) async -> Result<any PushSender, PushCredentialUnusable> {
        let key = Key(tenantID: tenantID, provider: provider)
        let now = ContinuousClock.now
        if let entry = entries.withLock({ $0[key] }), now - entry.checkedAt < Self.recheckInterval {
            return Self.result(entry)
        }
        let stored: (PushCredential, Data)?
        do {
            stored = try await services.repositories.pushCredentials.active(
                tenantID: tenantID, provider: provider, on: services.database)
        } catch {
            return .failure(PushCredentialUnusable(reason: "the push credentials could not be read: \(error)"))
        }
        let previous = entries.withLock { $0[key] }
        if let previous, let version = previous.version, let (credential, _) = stored,
           version.id == credential.id, version.updatedAt == credential.updatedAt {
            let refreshed = Entry(version: version, sender: previous.sender, unusable: previous.unusable, checkedAt: now)
            entries.withLock { $0[key] = refreshed }
            return Self.result(refreshed)
        }
        let entry = make(stored, provider: provider, at: now)
        // Whatever sender this replaces (also one made meanwhile by a concurrent call) is kept
        // to be shut down: an HTTP client must be shut down before it is released.
        let replaced: (any PushSender)? = entries.withLock { entries in
            let old = entries[key]?.sender
            entries[key] = entry
            return old === entry.sender ? nil : old
        }
        if let replaced { retired.withLock { $0.append(replaced) } }
        return Self.result(entry)
    }

    private func make(_ stored: (PushCredential, Data)?, provider: PushRegistration.Provider,
                      at now: ContinuousClock.Instant) -> Entry {
        guard let (credential, sealed) = stored else {
            let name = provider == .apns ? "APNs" : "FCM"
            return Entry(version: nil, sender: nil, unusable: "the tenant has no \(name) credentials", checkedAt: now)
        }
        let version = (credential.id, credential.updatedAt)
        do {
            let plaintext = try services.sealer.open(sealed, context: credential.sealingContext)
            let secret = try JSONDecoder().decode(PushSecret.self, from: plaintext)
            let configuration = services.configuration.push
            let sender: any PushSender = switch provider {
            case .apns: try APNsSender(credential: credential, secret: secret, configuration: configuration,
                                       now: services.configuration.now)
            case .fcm: try FCMSender(credential: credential, secret: secret, configuration: configuration,
                                     now: services.configuration.now)
            }
            return Entry(version: version, sender: sender, unusable: nil, checkedAt: now)
        } catch {
            let reason = (error as? AdminError)?.apiError.message ?? "\(error)"
            services.logger.error("a push credential cannot be used", metadata: [
                "credential": "\(credential.id)", "reason": "\(reason)"])
            return Entry(version: version, sender: nil,
                         unusable: "the \(credential.kind.rawValue) credential cannot be used: \(reason)", checkedAt: now)
        }
    }

    private static func result(_ entry: Entry) -> Result<any PushSender, PushCredentialUnusable> {
        if let sender = entry.sender { return .success(sender) }
        return .failure(PushCredentialUnusable(reason: entry.unusable ?? "no credentials"))
    }

    /// Closes every connection pool.
    func shutdown() async {
        let senders = entries.withLock { entries in
            defer { entries.removeAll() }
            return entries.values.compactMap(\.sender)
        } + retired.withLock { retired in
            defer { retired.removeAll() }
            return retired
        }
        for sender in senders { await sender.shutdown() }
    }
}
