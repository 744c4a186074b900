import AsyncHTTPClient
import CountersignCore
import Foundation
import JWTKit
import NIOCore
import NIOHTTP1
import Synchronization

/// Sends through FCM HTTP v1: the service account is exchanged for an OAuth 2.0 access token
/// (RFC 7523 JWT-bearer grant, RS256), kept until shortly before it expires and shared by every
/// send; `messages:send` then carries one data message per device.
final class FCMSender: PushSender {
    static let scope = "https://www.googleapis.com/auth/firebase.messaging"
    /// An access token is renewed this long before it expires.
    static let renewalMargin: TimeInterval = 120

    private let client: PushHTTPClient
    private let account: FCMServiceAccount
    private let sendURL: String
    private let tokenURL: String
    private let now: @Sendable () -> Date
    /// The access token and when it expires, or the exchange under way.
    private let accessToken = Mutex<AccessTokenState>(.none)

    enum AccessTokenState: Sendable {
        case none
        case fetching(Task<(String, Date), any Error>)
        case ready(String, Date)
    }

    init(credential: PushCredential, secret: PushSecret, configuration: PushConfiguration,
         now: @escaping @Sendable () -> Date) throws {
        guard case .fcm(let json) = secret else {
            throw PushCredentialUnusable(reason: "an APNs credential cannot send through FCM")
        }
        account = try FCMServiceAccount(json: json)
        sendURL = "\(configuration.fcmURL)/v1/projects/\(account.projectID)/messages:send"
        tokenURL = configuration.fcmTokenURL
        self.now = now
        client = try PushHTTPClient(configuration, certificate: nil)
    }

    func send(_ entry: PushOutboxEntry, deviceToken: String) async -> PushOutcome {
        let first = await attempt(entry, deviceToken: deviceToken)
        // An access token Google no longer takes is replaced and the message sent once more.
        if case .retry(let reason, _) = first.outcome, reason == "UNAUTHENTICATED", let used = first.accessToken {
            forget(used)
            return await attempt(entry, deviceToken: deviceToken).outcome
        }
        return first.outcome
    }

    private func attempt(_ entry: PushOutboxEntry, deviceToken: String) async -> (outcome: PushOutcome, accessToken: String?) {
        let token: String
        do {
            token = try await currentAccessToken()
        } catch let failure as FCMTokenFailure {
            return (failure.outcome, nil)
        } catch {
            return (.retry(reason: "the OAuth token endpoint could not be reached: \(error)", after: nil), nil)
        }
        var request = HTTPClientRequest(url: sendURL)
        request.method = .POST
        request.headers.add(name: "authorization", value: "Bearer \(token)")
        request.headers.add(name: "content-type", value: "application/json")
        request.body = .bytes(ByteBuffer(data: PushContent.fcmBody(for: entry, token: deviceToken, at: now())))
        do {
            let response = try await client.execute(request, timeout: .seconds(30))
            let body = try await response.body.collect(upTo: 64 * 1024)
            return (Self.outcome(status: Int(response.status.code), body: body, headers: response.headers), token)
        } catch {
            return (.retry(reason: "FCM could not be reached: \(error)", after: nil), token)
        }
    }

    /// FCM's answer: 200 delivered; `UNREGISTERED`, `SENDER_ID_MISMATCH` and an invalid
    /// registration token end the token; `UNAUTHENTICATED` renews the access token;
    /// `QUOTA_EXCEEDED` (429), `UNAVAILABLE` and `INTERNAL` (5xx) are tried again, honouring
    /// `Retry-After`; the rest is recorded with FCM's code.
    static func outcome(status: Int, body: ByteBuffer, headers: HTTPHeaders) -> PushOutcome {
        let json = try? JSONValue(parsing: Data(buffer: body))
        if status == 200 { return .delivered(providerMessageID: json?["name"]?.stringValue) }
        let error = json?["error"]
        let googleStatus = error?["status"]?.stringValue
        var fcmCode: String?
        if case .array(let details)? = error?["details"] {
            fcmCode = details.lazy.compactMap { $0["errorCode"]?.stringValue }.first
        }
        let message = error?["message"]?.stringValue ?? ""
        let reason = fcmCode ?? googleStatus ?? "HTTP \(status)"
        let retryAfter = headers.first(name: "retry-after").flatMap(TimeInterval.init)
        switch (status, reason) {
        // A 404 without FCM's UNREGISTERED (a wrong URL or project) says nothing of the token.
        case (_, "UNREGISTERED"), (_, "SENDER_ID_MISMATCH"):
            return .invalidToken(reason: reason, since: nil)
        case (400, "INVALID_ARGUMENT") where message.localizedCaseInsensitiveContains("registration token"):
            return .invalidToken(reason: reason, since: nil)
        case (401, "UNAUTHENTICATED"):
            return .retry(reason: reason, after: nil)
        case (429, _), (500..., _):
            return .retry(reason: reason, after: retryAfter)
        default:
            return .failed(reason: message.isEmpty ? reason : "\(reason): \(message)")
        }
    }

    // MARK: - The access token

    private func currentAccessToken() async throws -> String {
        enum Step { case use(String), wait(Task<(String, Date), any Error>) }
        let date = now()
        let step: Step = accessToken.withLock { state in
            switch state {
            case .ready(let token, let expiry) where expiry.timeIntervalSince(date) > Self.renewalMargin:
                return .use(token)
            case .fetching(let task):
                return .wait(task)
            default:
                let task = Task { try await self.exchange() }
                state = .fetching(task)
                return .wait(task)
            }
        }
        let task: Task<(String, Date), any Error>
        switch step {
        case .use(let token): return token
        case .wait(let fetching): task = fetching
        }
        do {
            let (token, expiry) = try await task.value
            accessToken.withLock { state in
                if case .fetching = state { state = .ready(token, expiry) }
            }
            return token
        } catch {
            accessToken.withLock { state in
                if case .fetching = state { state = .none }
            }
            throw error
        }
    }

    private func forget(_ token: String) {
        accessToken.withLock { state in
            if case .ready(let current, _) = state, current == token { state = .none }
        }
    }

    /// The JWT-bearer grant: an RS256 assertion signed by the service account's key.
    private func exchange() async throws -> (String, Date) {
        let issued = Int64(now().timeIntervalSince1970.rounded(.down))
        let claims = JWTClaims([
            "iss": .string(account.clientEmail), "scope": .string(Self.scope), "aud": .string(tokenURL),
            "iat": .integer(issued), "exp": .integer(issued + 3600),
        ])
        let keyID = account.privateKeyID.map(JWKIdentifier.init(string:))
        let keys = await JWTKeyCollection().add(
            rsa: try JWTKit.Insecure.RSA.PrivateKey(backing: account.key), digestAlgorithm: .sha256, kid: keyID)
        let assertion = try await keys.sign(claims, kid: keyID)

        var request = HTTPClientRequest(url: tokenURL)
        request.method = .POST
        request.headers.add(name: "content-type", value: "application/x-www-form-urlencoded")
        request.body = .bytes(ByteBuffer(string:
            "grant_type=urn%3Aietf%3Aparams%3Aoauth%3Agrant-type%3Ajwt-bearer&assertion=\(assertion)"))
        let response = try await client.execute(request, timeout: .seconds(30))
        let body = try await response.body.collect(upTo: 64 * 1024)
        let json = try? JSONValue(parsing: Data(buffer: body))
        guard response.status.code == 200, let token = json?["access_token"]?.stringValue,
              let lifetime = json?["expires_in"]?.integerValue else {
            let error = json?["error"]?.stringValue ?? "HTTP \(response.status.code)"
            let description = json?["error_description"]?.stringValue.map { ": \($0)" } ?? ""
            throw FCMTokenFailure(status: Int(response.status.code), reason: "OAuth token endpoint: \(error)\(description)")
        }
        return (token, Date(timeIntervalSince1970: TimeInterval(issued + lifetime)))
    }

    func shutdown() async {
        await client.shutdown()
    }
}

/// The token endpoint refused the service account (or failed).
struct FCMTokenFailure: Error {
    let status: Int
    let reason: String

    var outcome: PushOutcome {
        status == 429 || status >= 500 ? .retry(reason: reason, after: nil) : .failed(reason: reason)
    }
}
