import CountersignCore
import Foundation
import Synchronization

/// Answers the FCM emulator's two endpoints: Google's token endpoint and `messages:send`.
final class FCMResponder: Sendable {
    /// Everything that changes as requests arrive. The lock is never held while checking an
    /// RSA signature or running the test's `respond`.
    struct Ledger: Sendable {
        var messages: [FCMEmulator.Message] = []
        var assertions: [String] = []
        var tokenRequests = 0
        /// Issued access tokens and when each expires.
        var accessTokens: [String: Date] = [:]
        /// The emulator's own token URL, known once it listens.
        var tokenURL = ""
    }

    static let tokenPath = "/token"
    private static let sendPathPrefix = "/v1/projects/"
    private static let sendPathSuffix = "/messages:send"

    let ledger = Mutex(Ledger())
    private let account: FCMEmulator.ServiceAccount
    private let now: @Sendable () -> Date
    private let accessTokenLifetime: Int
    private let respond: @Sendable (FCMEmulator.Message) -> FCMEmulator.Verdict?

    init(account: FCMEmulator.ServiceAccount, now: @escaping @Sendable () -> Date, accessTokenLifetime: Int,
         respond: @escaping @Sendable (FCMEmulator.Message) -> FCMEmulator.Verdict?) {
        self.account = account
        self.now = now
        self.accessTokenLifetime = accessTokenLifetime
        self.respond = respond
    }

    func answer(_ request: EmulatorRequest) -> EmulatorResponse {
        if request.path == Self.tokenPath {
            guard request.method == "POST" else { return methodNotAllowed }
            return token(request)
        }
        guard request.path.hasPrefix(Self.sendPathPrefix), request.path.hasSuffix(Self.sendPathSuffix),
              request.path.utf8.count > Self.sendPathPrefix.utf8.count + Self.sendPathSuffix.utf8.count else {
            return GoogleError(httpStatus: 404, status: "NOT_FOUND", message: "The requested URL was not found.").response
        }
        guard request.method == "POST" else { return methodNotAllowed }
        let project = String(request.path.dropFirst(Self.sendPathPrefix.count).dropLast(Self.sendPathSuffix.count))
        do throws(GoogleError) {
            return try send(request, project: project)
        } catch {
            return error.response
        }
    }

    private var methodNotAllowed: EmulatorResponse {
        GoogleError(httpStatus: 405, status: "METHOD_NOT_ALLOWED", message: "Only POST is supported here.").response
    }

    // MARK: Token endpoint

    private func token(_ request: EmulatorRequest) -> EmulatorResponse {
        let tokenURL = ledger.withLock { ledger in
            ledger.tokenRequests += 1
            return ledger.tokenURL
        }
        let grant = JWTBearerGrant(account: account, audiences: [tokenURL, account.tokenURI])
        let issued = now()
        do throws(JWTBearerGrant.Failure) {
            let assertion = try JWTBearerGrant.assertion(contentType: request.header("content-type"), body: request.body)
            ledger.withLock { $0.assertions.append(assertion) }
            try grant.check(assertion, now: issued)
        } catch {
            return error.response
        }
        let accessToken = "ya29." + Data((0..<48).map { _ in UInt8.random(in: .min ... .max) }).base64URLEncodedString
        let expiry = issued.addingTimeInterval(TimeInterval(accessTokenLifetime))
        ledger.withLock { $0.accessTokens[accessToken] = expiry }
        let body = JSONValue.object([
            "access_token": .string(accessToken),
            "expires_in": .integer(Int64(accessTokenLifetime)),
            "token_type": .string("Bearer"),
        ])
        return .json(status: 200, body.canonicalString, headers: [("cache-control", "no-cache, no-store, max-age=0, must-revalidate")])
    }

    // MARK: messages:send

    private func send(_ request: EmulatorRequest, project: String) throws(GoogleError) -> EmulatorResponse {
        let receivedAt = now()
        guard let accessToken = request.header("authorization").flatMap(BearerCredential.credential(in:)),
              let expiry = ledger.withLock({ $0.accessTokens[accessToken] }), expiry > receivedAt else {
            throw .unauthenticated
        }
        guard project == account.projectID else {
            throw GoogleError(httpStatus: 403, status: "PERMISSION_DENIED", message: "SenderId mismatch",
                              errorCode: "SENDER_ID_MISMATCH")
        }
        let contents = try FCMMessageCheck.contents(of: request.body)
        let message = FCMEmulator.Message(
            projectID: project, body: request.body, token: contents.token, data: contents.data,
            androidPriority: contents.androidPriority, androidTTL: contents.androidTTL,
            accessToken: accessToken, receivedAt: receivedAt)
        let verdict = respond(message) ?? .accept
        ledger.withLock { $0.messages.append(message) }
        switch verdict {
        case .accept:
            let id = UInt64.random(in: 1_000_000_000_000_000...9_999_999_999_999_999)
            let body = JSONValue.object(["name": .string("projects/\(project)/messages/\(id)")])
            return .json(status: 200, body.canonicalString)
        case .reject(let httpStatus, let status, let errorCode, let message):
            throw GoogleError(httpStatus: httpStatus, status: status, message: message, errorCode: errorCode)
        }
    }
}
