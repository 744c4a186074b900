import Foundation

/// A local peer that speaks FCM HTTP v1 and Google's OAuth 2.0 token endpoint (JWT-bearer
/// grant), over HTTP/2 and TLS: the other end of the server's FCM sender in tests and in
/// `countersign-bench push`.
///
/// A sender signs an assertion with the service account's key, trades it at `tokenURL` for an
/// access token, and sends with that token; the emulator checks each step as Google does and
/// answers with Google's error bodies. Messages that pass are handed to `respond`, which
/// scripts the rest (404 `UNREGISTERED`, 429 `QUOTA_EXCEEDED`, 503…).
///
/// ```swift
/// let account = try FCMEmulator.ServiceAccount.make(projectID: "p", clientEmail: "push@p.iam.gserviceaccount.com",
///                                                   tokenURI: "https://oauth2.googleapis.com/token")
/// let fcm = try await FCMEmulator.start(pki: pki, account: account)
/// defer { Task { try await fcm.stop() } }
/// // give the sender account.withTokenURI(fcm.tokenURL).json, trusting pki.caCertificatePath
/// #expect(fcm.messages().count == 1)
/// ```
public final class FCMEmulator: Sendable {
    private let server: EmulatorServer
    private let responder: FCMResponder

    private init(server: EmulatorServer, responder: FCMResponder) {
        self.server = server
        self.responder = responder
    }

    /// Starts on 127.0.0.1 on a free port, presenting `pki`'s server certificate.
    ///
    /// An assertion's `aud` may be `tokenURL` or the account's `token_uri`: Google's client
    /// libraries use the latter, and the emulator's port is not known when the account is made.
    ///
    /// - Parameters:
    ///   - now: the clock for assertion times and access token expiry.
    ///   - accessTokenLifetime: seconds an access token is valid (`expires_in`), Google's 3599
    ///     unless a test wants to see a sender refresh.
    ///   - respond: asked after the built-in checks pass; nil or `.accept` answers 200. Pass it
    ///     with its label: a trailing closure would bind to `now`.
    public static func start(pki: EmulatorPKI, account: ServiceAccount, now: @escaping @Sendable () -> Date = { Date() },
                             accessTokenLifetime: Int = 3599,
                             respond: @escaping @Sendable (Message) -> Verdict? = { _ in nil }) async throws -> FCMEmulator {
        let responder = FCMResponder(account: account, now: now, accessTokenLifetime: accessTokenLifetime, respond: respond)
        let server = try await EmulatorServer.start(tls: try pki.serverTLSConfiguration()) { request in
            responder.answer(request)
        }
        let emulator = FCMEmulator(server: server, responder: responder)
        responder.ledger.withLock { $0.tokenURL = emulator.tokenURL }
        return emulator
    }

    /// The port it listens on.
    public var port: Int { server.port }
    /// `https://127.0.0.1:<port>`; the send URL is `baseURL + "/v1/projects/<id>/messages:send"`.
    public var baseURL: String { "https://127.0.0.1:\(server.port)" }
    /// The token endpoint, `baseURL + "/token"`.
    public var tokenURL: String { baseURL + FCMResponder.tokenPath }

    /// Messages that passed authentication and validation, in order, including those
    /// `respond` rejected.
    public func messages() -> [Message] { responder.ledger.withLock { $0.messages } }
    /// Requests made to the token endpoint, granted or not.
    public var tokenRequestCount: Int { responder.ledger.withLock { $0.tokenRequests } }
    /// Every assertion received at the token endpoint, as the raw compact JWT, valid or not.
    public func assertions() -> [String] { responder.ledger.withLock { $0.assertions } }
    /// TLS connections established so far.
    public var connectionCount: Int { server.connectionCount }

    /// Forgets every access token issued, so that the next send gets 401 `UNAUTHENTICATED`:
    /// the way to test a sender's refresh path without waiting an hour.
    public func revokeAccessTokens() {
        responder.ledger.withLock { $0.accessTokens.removeAll() }
    }

    /// Closes the listener and every connection.
    public func stop() async throws {
        try await server.stop()
    }
}
