import CountersignCore
import Foundation
import Logging

/// What the custom verifier is asked: who is approving which request, and the data the
/// authenticator app collected for the tenant's custom factor. Sent as the JSON body of the
/// call.
public struct CustomVerification: Codable, Sendable, Equatable {
    /// The tenant's slug.
    public var tenant: String
    public var requestID: String
    public var clientID: String
    public var userID: String
    public var username: String
    public var deviceID: String
    /// The app's `custom_data`, as the app sent it.
    public var data: String
    public var bindingMessage: String?

    public init(tenant: String, requestID: String, clientID: String, userID: String, username: String, deviceID: String,
                data: String, bindingMessage: String?) {
        self.tenant = tenant
        self.requestID = requestID
        self.clientID = clientID
        self.userID = userID
        self.username = username
        self.deviceID = deviceID
        self.data = data
        self.bindingMessage = bindingMessage
    }

    enum CodingKeys: String, CodingKey {
        case tenant, username, data
        case requestID = "request_id"
        case clientID = "client_id"
        case userID = "user_id"
        case deviceID = "device_id"
        case bindingMessage = "binding_message"
    }
}

/// The verifier's answer.
public enum CustomVerdict: Sendable, Equatable {
    case accept
    /// Refused, with the verifier's reason if it gave one.
    case reject(String?)
    /// The verifier cannot decide and asks for the PIN instead.
    case pinFallback
    /// No usable answer: no verifier is set, it could not be reached, or it answered something
    /// other than a verdict. The approval is refused (fail closed), never let through.
    case unavailable(String)
}

/// Asks a tenant's `custom-verifier` webhook about a custom-factor answer, while the device
/// waits. The call is signed like every webhook call, with the event `factor.custom.verify`,
/// and bounded by `WebhookConfiguration.verifierTimeout` as a whole.
///
/// ```swift
/// let verifier = CustomVerifier(
///     targets: targets, client: client, timeout: configuration.webhooks.verifierTimeout, logger: logger, now: now)
/// switch await verifier.verify(call, tenantID: tenant.id) {
/// case .accept: …
/// case .reject(let reason): …
/// case .pinFallback: …
/// case .unavailable: … // refuse
/// }
/// ```
public struct CustomVerifier: Sendable {
    public static let event = "factor.custom.verify"
    /// A rejection's reason is passed on to be shown; a longer one is cut to this many characters.
    public static let maximumReasonLength = 256
    let targets: any WebhookTargets
    let client: WebhookHTTPClient
    /// The whole call (`WebhookConfiguration.verifierTimeout`).
    let timeout: Duration
    let logger: Logger
    let now: @Sendable () -> Date

    init(targets: any WebhookTargets, client: WebhookHTTPClient, timeout: Duration, logger: Logger,
         now: @escaping @Sendable () -> Date) {
        self.targets = targets
        self.client = client
        self.timeout = timeout
        self.logger = logger
        self.now = now
    }

    /// The answer a verifier sends: `{"result": "accept" | "reject" | "pin_fallback", "reason": …}`.
    private struct Answer: Decodable {
        var result: String
        var reason: String?
    }

    public func verify(_ call: CustomVerification, tenantID: String) async -> CustomVerdict {
        switch await ask(call, tenantID: tenantID) {
        case .success(let verdict):
            return verdict
        case .failure(let failure):
            // The secret and the factor's data stay out of the log; the reason names neither.
            logger.warning(
                "the custom verifier gave no verdict",
                metadata: ["tenant_id": "\(tenantID)", "request_id": "\(call.requestID)", "reason": "\(failure)"])
            return .unavailable(failure.description)
        }
    }

    private func ask(_ call: CustomVerification, tenantID: String) async -> Result<CustomVerdict, CustomVerifierFailure> {
        let target: WebhookTarget
        do {
            guard let found = try await targets.target(tenantID: tenantID, purpose: .customVerifier) else {
                return .failure(.notConfigured)
            }
            target = found
        } catch {
            return .failure(.unreadable(String(describing: error)))
        }
        guard let body = try? JSON.encode(call) else { return .failure(.unencodable) }
        let now = now()
        let answer: WebhookHTTPClient.Answer
        do {
            answer = try await client.post(
                body, to: target, event: Self.event, deliveryID: Identifier.make("whd", at: now), at: now, timeout: timeout)
        } catch {
            return .failure(.call(error))
        }
        guard answer.status == 200 else { return .failure(.status(answer.status)) }
        guard let text = answer.body else { return .failure(.answerTooLarge) }
        guard let parsed = try? JSONDecoder().decode(Answer.self, from: text) else { return .failure(.malformedAnswer) }
        switch parsed.result {
        case "accept": return .success(.accept)
        case "reject": return .success(.reject(parsed.reason.map { String($0.prefix(Self.maximumReasonLength)) }))
        case "pin_fallback": return .success(.pinFallback)
        default: return .failure(.unknownResult(parsed.result))
        }
    }
}

/// Why the custom verifier gave no verdict.
enum CustomVerifierFailure: Error, Sendable, Equatable, CustomStringConvertible {
    case notConfigured
    /// The stored webhook could not be read or its secret opened.
    case unreadable(String)
    case unencodable
    case call(WebhookCallError)
    case status(Int)
    case answerTooLarge
    case malformedAnswer
    case unknownResult(String)

    var description: String {
        switch self {
        case .notConfigured: "the tenant has no custom-verifier webhook"
        case .unreadable(let why): "the custom-verifier webhook could not be read: \(why)"
        case .unencodable: "the call could not be encoded as JSON"
        case .call(let error): "the custom verifier call failed: \(error)"
        case .status(let status): "the custom verifier answered HTTP \(status), not 200"
        case .answerTooLarge:
            "the custom verifier's answer is larger than \(WebhookHTTPClient.maximumAnswerSize) bytes"
        case .malformedAnswer: "the custom verifier's answer is not a JSON object with a string result"
        case .unknownResult(let result):
            "the custom verifier answered the unknown result \"\(result.prefix(64))\"; expected accept, reject or pin_fallback"
        }
    }
}
