import Foundation

/// The token endpoint with the CIBA grant (`urn:openid:params:grant-type:ciba`, CIBA §10.1,
/// §11): the client that started a request polls with its `auth_req_id` until the user has
/// decided, then exchanges it once for tokens.
///
/// - undecided: `authorization_pending` (or `slow_down`, see `PollingRate`); after expiry
///   `expired_token`.
/// - denied: `access_denied`.
/// - approved: tokens, exactly once (a second exchange is `invalid_grant`), with a refresh
///   token when the scope holds `offline_access` (`RefreshTokenFamily`). The user decided
///   before expiry, so the client may still collect the tokens one poll interval after it:
///   a client polling on time never misses an approval given in the last seconds.
/// - unknown, or started by another client: `invalid_grant`.
struct CIBAGrant: Sendable {
    let store: any CIBAGrantStore
    let tokens: TokenIssuer
    let pollingRate: PollingRate
    let now: @Sendable () -> Date

    init(store: any CIBAGrantStore, tokens: TokenIssuer, now: @escaping @Sendable () -> Date) {
        self.store = store
        self.tokens = tokens
        self.pollingRate = PollingRate(store: store)
        self.now = now
    }

    func exchange(_ form: FormParameters, client: Client, issuer: Issuer) async throws -> TokenResponse {
        guard client.deliveryMode != .push else { throw TokenRequestError.pushClient }
        let transaction = try await Self.transaction(form, client: client, store: store)
        let now = now()
        switch transaction.status {
        case .denied:
            throw TokenRequestError.denied
        case .pending:
            guard !transaction.isExpired(at: now) else { throw TokenRequestError.expired }
            try await pollingRate.record(transaction, at: now)
            throw TokenRequestError.pending
        case .approved:
            guard transaction.exchangedAt == nil else { throw TokenRequestError.alreadyExchanged }
            let collectBy = transaction.expiresAt.addingTimeInterval(TimeInterval(transaction.pollInterval))
            guard now < collectBy else { throw TokenRequestError.expired }
            let issued = try await tokens.mint(for: transaction, client: client, issuer: issuer, at: now)
            switch try await store.exchange(transaction, for: issued, byClient: client.id, at: now) {
            case .exchanged: return issued.response
            case .alreadyExchanged: throw TokenRequestError.alreadyExchanged
            case .userUnavailable: throw TokenRequestError.userUnavailable
            }
        }
    }

    /// The request `auth_req_id` names, if this client started it in this tenant.
    static func transaction(_ form: FormParameters, client: Client, store: any CIBAGrantStore) async throws -> ApprovalTransaction {
        guard let authReqID = form["auth_req_id"] else { throw TokenRequestError.missingAuthReqID }
        guard let transaction = try await store.request(authReqIDHash: ApprovalService.hash(authReqID: authReqID)),
              transaction.clientID == client.id, transaction.tenantID == client.tenantID else {
            throw TokenRequestError.unknownAuthReqID
        }
        return transaction
    }
}
