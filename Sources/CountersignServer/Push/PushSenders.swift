import CountersignCore
import Foundation
import Logging
import Synchronization

/// The senders of every tenant's active credentials, each with its own connection pool, made
/// on first use and replaced when the credential changes. A credential is looked up again at
/// most every few seconds, so a new one is picked up without a restart. Lookups of one tenant
/// and provider are single-flight: concurrent workers share one sender (and so one APNs
/// provider token, which APNs refuses to see renewed more often than every 20 minutes).
final class PushSenders: Sendable {
    private struct Key: Hashable {
        let tenantID: String
        let provider: PushRegistration.Provider
    }

    private struct Entry: Sendable {
        /// The credential's id and version the sender was made from; nil when there is none.
        let version: Version?
        let sender: (any PushSender)?
        /// Why there is no sender.
        let unusable: String?
        let checkedAt: ContinuousClock.Instant
    }

    private struct Version: Equatable {
        let id: String
        let updatedAt: Date
    }

    private enum Slot: Sendable {
        case ready(Entry)
        case refreshing(Task<Entry, Never>)
    }

    static let recheckInterval: Duration = .seconds(5)

    private let credentials: any ActivePushCredentials
    /// Opens the credentials' secrets.
    private let sealer: SecretSealer
    private let configuration: PushConfiguration
    /// Shared by the APNs senders of every node (see `APNsProviderTokenStore`).
    private let providerTokens: any APNsProviderTokenStore
    private let now: @Sendable () -> Date
    private let logger: Logger
    private let slots = Mutex<[Key: Slot]>([:])
    /// Senders replaced while their requests may still be in flight: each is shut down once
    /// those requests have had time to finish, or at the end.
    private let retired = Mutex<[ObjectIdentifier: any PushSender]>([:])
    /// How long a replaced sender is kept for the requests still using it (they time out sooner).
    static let retirement: Duration = .seconds(60)

    init(credentials: any ActivePushCredentials, sealer: SecretSealer, configuration: PushConfiguration,
         providerTokens: any APNsProviderTokenStore, now: @escaping @Sendable () -> Date, logger: Logger) {
        self.credentials = credentials
        self.sealer = sealer
        self.configuration = configuration
        self.providerTokens = providerTokens
        self.now = now
        self.logger = logger
    }

    /// The sender for a tenant and provider, or why there is none.
    func sender(tenantID: String, provider: PushRegistration.Provider) async -> Result<any PushSender, PushCredentialUnusable> {
        let key = Key(tenantID: tenantID, provider: provider)
        let now = ContinuousClock.now
        let task: Task<Entry, Never> = slots.withLock { slots in
            switch slots[key] {
            case .ready(let entry) where now - entry.checkedAt < Self.recheckInterval:
                return Task { entry }
            case .refreshing(let task):
                return task
            case .ready(let entry):
                let task = Task { await self.refresh(key, previous: entry) }
                slots[key] = .refreshing(task)
                return task
            case nil:
                let task = Task { await self.refresh(key, previous: nil) }
                slots[key] = .refreshing(task)
                return task
            }
        }
        let entry = await task.value
        return Self.result(entry)
    }

    /// Reads the active credential and keeps the current sender if it is unchanged, or makes a
    /// new one (retiring the old one).
    private func refresh(_ key: Key, previous: Entry?) async -> Entry {
        let now = ContinuousClock.now
        let entry: Entry
        do {
            let stored = try await credentials.active(tenantID: key.tenantID, provider: key.provider)
            if let previous, let (credential, _) = stored,
               previous.version == Version(id: credential.id, updatedAt: credential.updatedAt) {
                entry = Entry(version: previous.version, sender: previous.sender, unusable: previous.unusable, checkedAt: now)
            } else {
                entry = make(stored, provider: key.provider, at: now)
                if let old = previous?.sender { retire(old) }
            }
        } catch {
            // The database could not be read: keep what there was, and try again next time.
            entry = previous.map { Entry(version: $0.version, sender: $0.sender, unusable: $0.unusable, checkedAt: now) }
                ?? Entry(version: nil, sender: nil, unusable: "the push credentials could not be read: \(error)", checkedAt: now)
        }
        slots.withLock { $0[key] = .ready(entry) }
        return entry
    }

    private func retire(_ sender: any PushSender) {
        let id = ObjectIdentifier(sender)
        retired.withLock { $0[id] = sender }
        Task {
            try? await Task.sleep(for: Self.retirement)
            if let sender = retired.withLock({ $0.removeValue(forKey: id) }) { await sender.shutdown() }
        }
    }

    private func make(_ stored: (PushCredential, Data)?, provider: PushRegistration.Provider,
                      at now: ContinuousClock.Instant) -> Entry {
        guard let (credential, sealed) = stored else {
            let name = provider == .apns ? "APNs" : "FCM"
            return Entry(version: nil, sender: nil, unusable: "the tenant has no \(name) credentials", checkedAt: now)
        }
        let version = Version(id: credential.id, updatedAt: credential.updatedAt)
        do {
            let plaintext = try sealer.open(sealed, context: credential.sealingContext)
            let secret = try JSONDecoder().decode(PushSecret.self, from: plaintext)
            let sender: any PushSender = switch provider {
            case .apns: try APNsSender(credential: credential, secret: secret, configuration: configuration,
                                       tokens: providerTokens, now: self.now)
            case .fcm: try FCMSender(credential: credential, secret: secret, configuration: configuration, now: self.now)
            }
            return Entry(version: version, sender: sender, unusable: nil, checkedAt: now)
        } catch {
            let reason = (error as? AdminError)?.apiError.message ?? "\(error)"
            logger.error("a push credential cannot be used", metadata: [
                "credential": "\(credential.id)", "reason": "\(reason)"])
            return Entry(version: version, sender: nil,
                         unusable: "the \(credential.kind.rawValue) credential cannot be used: \(reason)", checkedAt: now)
        }
    }

    private static func result(_ entry: Entry) -> Result<any PushSender, PushCredentialUnusable> {
        if let sender = entry.sender { return .success(sender) }
        return .failure(PushCredentialUnusable(reason: entry.unusable ?? "no credentials"))
    }

    /// Closes every connection pool (after any lookup under way has finished).
    func shutdown() async {
        let pending = slots.withLock { slots in
            slots.values.compactMap { slot -> Task<Entry, Never>? in
                if case .refreshing(let task) = slot { return task }
                return nil
            }
        }
        for task in pending { _ = await task.value }
        let senders = slots.withLock { slots in
            defer { slots.removeAll() }
            return slots.values.compactMap { slot -> (any PushSender)? in
                if case .ready(let entry) = slot { return entry.sender }
                return nil
            }
        } + retired.withLock { retired in
            defer { retired.removeAll() }
            return Array(retired.values)
        }
        for sender in senders { await sender.shutdown() }
    }
}
