import Foundation
import NIOSSL

/// A local peer that speaks Apple's APNs provider API (HTTP/2 over TLS): the other end of the
/// server's APNs sender in tests, and of `countersign-bench push`.
///
/// It runs Apple's checks in Apple's order and answers with Apple's statuses and reasons, so a
/// sender that passes here is wrong only where Apple's undocumented behaviour differs.
/// Requests that pass are handed to `respond`, which scripts the rest (410 `Unregistered`,
/// 429, 500…).
///
/// ```swift
/// let apns = try await APNsEmulator.start(pki: pki, authentication: .token([providerKey]), respond: { notification in
///     notification.deviceToken == revokedToken
///         ? .reject(status: 410, reason: "Unregistered", timestamp: 1_700_000_000_000) : nil
/// })
/// defer { Task { try await apns.stop() } }
/// // point the sender at apns.baseURL, trusting pki.caCertificatePath
/// #expect(apns.acceptedCount == 1)
/// ```
public final class APNsEmulator: Sendable {
    private let server: EmulatorServer
    private let responder: APNsResponder

    private init(server: EmulatorServer, responder: APNsResponder) {
        self.server = server
        self.responder = responder
    }

    /// Starts on 127.0.0.1 on a free port, presenting `pki`'s server certificate.
    ///
    /// - Parameters:
    ///   - now: the clock for provider token ages and `receivedAt`; pass a test clock to make
    ///     a token expire without waiting an hour.
    ///   - recording: false keeps only the counters, not each `Notification` (for a benchmark).
    ///   - respond: asked after the built-in checks pass; nil or `.accept` answers 200. Pass it
    ///     with its label: a trailing closure would bind to `now`.
    public static func start(pki: EmulatorPKI, authentication: ClientAuthentication,
                             now: @escaping @Sendable () -> Date = { Date() },
                             recording: Bool = true,
                             respond: @escaping @Sendable (Notification) -> Verdict? = { _ in nil }) async throws -> APNsEmulator {
        let tls: TLSConfiguration
        let keys: [String: APNsProviderKey]?
        switch authentication {
        case .token(let providerKeys):
            tls = try pki.serverTLSConfiguration()
            keys = Dictionary(providerKeys.map { ($0.keyID, $0) }) { _, last in last }
        case .certificate(let trustedCAPath):
            tls = try pki.serverTLSConfiguration(requiringClientCertificatesFrom: trustedCAPath)
            keys = nil
        }
        let responder = APNsResponder(keys: keys, now: now, recording: recording, respond: respond)
        let server = try await EmulatorServer.start(tls: tls) { request in responder.answer(request) }
        return APNsEmulator(server: server, responder: responder)
    }

    /// The port it listens on.
    public var port: Int { server.port }
    /// `https://127.0.0.1:<port>`, the base a sender puts `/3/device/<token>` after.
    public var baseURL: String { "https://127.0.0.1:\(server.port)" }

    /// Every request received, accepted and rejected, in order (empty when not recording).
    public func notifications() -> [Notification] { responder.ledger.withLock { $0.notifications } }
    /// Requests answered 200.
    public var acceptedCount: Int { responder.ledger.withLock { $0.accepted } }
    /// Requests answered with an error, by a built-in check or by `respond`.
    public var rejectedCount: Int { responder.ledger.withLock { $0.rejected } }
    /// Accepted notifications whose `apns-id` had already been accepted once: a sender that
    /// retries a push APNs already took shows here.
    public var duplicateCount: Int { responder.ledger.withLock { $0.duplicates } }
    /// TLS connections established so far; a sender that reuses its connection keeps this at 1.
    public var connectionCount: Int { server.connectionCount }
    /// Distinct provider tokens (the bearer values) seen, in first-seen order.
    public func providerTokens() -> [String] { responder.ledger.withLock { $0.tokens.seen } }

    /// CPU time the emulator's thread has used so far: what the endpoint, and not the sender,
    /// cost in a benchmark that runs both in one process.
    public func cpuTime() async throws -> Duration { try await server.eventLoopCPUTime() }

    /// Closes the listener and every connection.
    public func stop() async throws {
        try await server.stop()
    }
}
