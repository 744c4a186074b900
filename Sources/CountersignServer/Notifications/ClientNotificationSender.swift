import CountersignCore
import Foundation

/// What one call to a client's notification endpoint came to.
enum ClientNotificationOutcome: Sendable, Equatable {
    /// A 2xx answer (CIBA §10.2: 204, and 200 with any body).
    case delivered
    /// 401 or 403: the client does not accept the call; it is not made again, and a ping client
    /// can still collect the result at `/token`.
    case refused(String)
    /// Nothing further to try: a redirect (never followed), another 4xx, or nothing to send.
    case failed(String)
    /// A 5xx, a timeout or no connection: tried again later.
    case retry(String)
}

/// Builds and makes one call to a ping or push client (CIBA §10.2, §10.3, §12): `POST` to the
/// client's notification endpoint with `Authorization: Bearer <client_notification_token>` and
/// a JSON body — `{"auth_req_id"}` for a ping; the token response with `auth_req_id` for an
/// approval in push mode; `{"auth_req_id", "error", "error_description"}` for a denial or an
/// expiry in push mode.
///
/// Push-mode tokens are minted at the first attempt that reaches the point of sending, and the
/// request is marked exchanged then, so the CIBA grant can never hand them out too. A retry
/// after a failed call mints new tokens: the ones of a call that got no 2xx are never known to
/// have arrived.
struct ClientNotificationSender: Sendable {
    let store: any ClientNotificationStore
    /// Opens the `auth_req_id` and notification token the request kept, sealed.
    let sealer: SecretSealer
    /// Mints and stores push-mode tokens.
    let tokens: TokenIssuer
    let http: WebhookHTTPClient
    /// Where the tenants' issuers are.
    let origin: PublicOrigin
    /// One call (`ClientNotificationConfiguration.timeout`).
    let timeout: Duration
    let now: @Sendable () -> Date

    func send(_ notification: ClientNotification) async -> ClientNotificationOutcome {
        do {
            guard let transaction = try await store.request(id: notification.transactionID) else {
                return .failed("the request no longer exists")
            }
            guard let client = try await store.client(id: notification.clientID, tenantID: notification.tenantID),
                let endpoint = client.notificationEndpoint else {
                return .failed("the client no longer has a notification endpoint")
            }
            guard let sealedID = transaction.authReqIDSealed, let sealedToken = transaction.notificationTokenSealed else {
                return .failed("the request kept no auth_req_id or notification token")
            }
            let authReqID = String(decoding: try sealer.open(
                sealedID, context: ClientNotificationSecrets.authReqIDContext(transaction.id)), as: UTF8.self)
            let token = String(decoding: try sealer.open(
                sealedToken, context: ClientNotificationSecrets.tokenContext(transaction.id)), as: UTF8.self)
            let body = try await self.body(notification, transaction: transaction, client: client, authReqID: authReqID)
            let answer = try await http.post(
                body, url: endpoint, headers: [("Authorization", "Bearer \(token)"), ("User-Agent", "Countersign/1")],
                timeout: timeout)
            return Self.outcome(of: answer.status)
        } catch let error as WebhookCallError {
            return .retry(error.description)
        } catch {
            return .retry("the notification could not be prepared: \(error)")
        }
    }

    static func outcome(of status: Int) -> ClientNotificationOutcome {
        switch status {
        case 200..<300: .delivered
        case 401, 403: .refused("the client answered HTTP \(status)")
        case 300..<400: .failed("the client answered HTTP \(status); redirects are not followed")
        case 400..<500: .failed("the client answered HTTP \(status)")
        default: .retry("the client answered HTTP \(status)")
        }
    }

    private func body(_ notification: ClientNotification, transaction: ApprovalTransaction, client: Client,
                      authReqID: String) async throws -> Data {
        switch notification.kind {
        case .ping:
            return JSONValue.object(["auth_req_id": .string(authReqID)]).canonicalData
        case .pushError:
            let error = notification.error ?? "transaction_failed"
            let description = error == "expired_token"
                ? "the request expired before the user answered" : "the user denied the request"
            return JSONValue.object([
                "auth_req_id": .string(authReqID), "error": .string(error), "error_description": .string(description),
            ]).canonicalData
        case .pushTokens:
            let issuer = Issuer(tenant: try await tenant(of: transaction), origin: origin)
            let now = now()
            _ = try await store.markExchanged(requestID: transaction.id, at: now)
            let tokens = try await self.tokens.issue(
                for: transaction, client: client, issuer: issuer, at: now, authReqID: authReqID)
            guard case .object(var members) = try JSONValue(encoding: tokens) else {
                throw StorageError.corrupt("token response")
            }
            members["auth_req_id"] = .string(authReqID)
            return JSONValue.object(members).canonicalData
        }
    }

    private func tenant(of transaction: ApprovalTransaction) async throws -> Tenant {
        guard let tenant = try await store.tenant(id: transaction.tenantID) else {
            throw StorageError.corrupt("the request's tenant is gone")
        }
        return tenant
    }
}
