import CountersignCore
import Foundation
import Synchronization

/// Answers each APNs request: the built-in checks in Apple's order, then the test's script,
/// then the bookkeeping the emulator's accessors read.
final class APNsResponder: Sendable {
    /// Everything that changes as requests arrive, behind one lock: a request takes it twice
    /// for a few dictionary operations, never while running the test's `respond`.
    struct Ledger: Sendable {
        var notifications: [APNsEmulator.Notification] = []
        var accepted = 0
        var rejected = 0
        var duplicates = 0
        var acceptedIDs: Set<UUID> = []
        var tokens: ProviderTokenRegistry
    }

    let ledger: Mutex<Ledger>
    /// Whether clients authenticate with provider tokens (rather than certificates).
    private let usesTokens: Bool
    private let now: @Sendable () -> Date
    private let recording: Bool
    private let respond: @Sendable (APNsEmulator.Notification) -> APNsEmulator.Verdict?

    init(keys: [String: APNsEmulator.APNsProviderKey]?, now: @escaping @Sendable () -> Date, recording: Bool,
         respond: @escaping @Sendable (APNsEmulator.Notification) -> APNsEmulator.Verdict?) {
        ledger = Mutex(Ledger(tokens: ProviderTokenRegistry(keys: keys ?? [:])))
        usesTokens = keys != nil
        self.now = now
        self.recording = recording
        self.respond = respond
    }

    func answer(_ request: EmulatorRequest) -> EmulatorResponse {
        let fields = APNsHeaderFields(request.headers)
        let notification = APNsEmulator.Notification(request, fields: fields, receivedAt: now())
        let verdict = verdict(for: notification, fields: fields)
        // Apple echoes a well-formed apns-id and makes one up otherwise.
        let messageID = fields.id.flatMap(APNsRequestCheck.messageID)
        let responseID = messageID.flatMap { _ in fields.id } ?? UUID().uuidString.lowercased()
        ledger.withLock { ledger in
            if recording { ledger.notifications.append(notification) }
            switch verdict {
            case .accept:
                ledger.accepted += 1
                if let messageID, !ledger.acceptedIDs.insert(messageID).inserted { ledger.duplicates += 1 }
            case .reject:
                ledger.rejected += 1
            }
        }
        switch verdict {
        case .accept:
            return EmulatorResponse(status: 200, headers: [("apns-id", responseID)])
        case .reject(let status, let reason, let timestamp):
            var body: [String: JSONValue] = ["reason": .string(reason)]
            if let timestamp { body["timestamp"] = .integer(timestamp) }
            return .json(status: status, JSONValue.object(body).canonicalString, headers: [("apns-id", responseID)])
        }
    }

    private func verdict(for notification: APNsEmulator.Notification, fields: APNsHeaderFields) -> APNsEmulator.Verdict {
        do throws(APNsRejection) {
            try APNsRequestCheck.route(notification)
            if usesTokens { try authenticate(notification, fields: fields) }
            try APNsRequestCheck.headers(fields, requiresTopic: usesTokens)
            try APNsRequestCheck.payload(notification.body)
        } catch {
            return .reject(status: error.status, reason: error.rawValue)
        }
        return respond(notification) ?? .accept
    }

    /// Token authentication: the registry verifies each distinct token once.
    private func authenticate(_ notification: APNsEmulator.Notification, fields: APNsHeaderFields) throws(APNsRejection) {
        guard fields.authorization != nil else { throw .missingProviderToken }
        guard let token = notification.providerToken else { throw .invalidProviderToken }
        if let rejection = ledger.withLock({ $0.tokens.admit(token, now: notification.receivedAt) }) { throw rejection }
    }
}
