import CountersignCore
import Crypto
import Foundation
import Logging

/// What a relying party asks a user to approve, once `bc-authorize` has checked it.
struct NewApproval: Sendable {
    let client: Client
    let user: User
    let scope: Scope
    let acrValues: AcrValues?
    let bindingMessage: BindingMessage?
    /// The requesting IP address and User-Agent, shown on the device.
    let context: TransactionDetails.Context
    /// Seconds the request stays open.
    let lifetime: Int
    /// Seconds the client must wait between token requests.
    var interval = NewApproval.pollInterval
    /// The class the request requires (from `acr_values` and the policies).
    var required: RequiredClass
    /// For ping and push clients: the bearer token the server presents when it calls the
    /// client's notification endpoint about this request (CIBA §7.1).
    let clientNotificationToken: ClientNotificationToken?
    /// RFC 9396 details, checked: shown on the device, signed with the rest, granted in the tokens.
    let authorizationDetails: AuthorizationDetails?
    /// Whether the request counts against (and is refused by) the user's requests per minute
    /// (`ApprovalTransaction.countsForUser`).
    var countsForUser = true

    /// The longest a request stays open, and how long it stays unless the client asks for less:
    /// an approval on a phone is a now-or-never decision (decision 5 of the standards checklist).
    static let longestLifetime = 300
    /// Seconds a polling client waits between token requests (CIBA §7.3), until `slow_down`.
    static let pollInterval = 5
}

/// A request stored and sealed to every device; `authReqID` is shown to the client once.
public struct StartedApproval: Sendable {
    public let authReqID: String
    public let transaction: ApprovalTransaction
}

/// Why a request for the user's approval was not started; each case is one error of CIBA §13.
public enum ApprovalStartError: Error, Sendable, Equatable, OAuthFailure {
    case userDisabled
    case noActiveDevice
    /// The user answered "I did not request this"; requests are refused for `retryAfter` seconds.
    case suppressed(retryAfter: Int)
    /// The user was sent the tenant's limit of requests in the last minute.
    case rateLimited(perMinute: Int, retryAfter: Int)
    /// A risk rule whose action is `deny` fired (`RiskEvaluation`).
    case riskDenied(rule: String, reason: String)
    /// A risk rule whose action is `passkey` fired: a push does not answer this request.
    case riskRequiresPasskey(rule: String, reason: String)

    var oauthError: OAuthError {
        switch self {
        case .userDisabled:
            OAuthError(.accessDenied, "the user is disabled")
        case .noActiveDevice:
            OAuthError(.accessDenied, "the user has no active device to approve on")
        case .suppressed(let retryAfter):
            OAuthError(.accessDenied,
                       "the user reported a request they did not make; new requests are refused for \(retryAfter) more seconds",
                       retryAfter: retryAfter)
        case .rateLimited(let limit, let retryAfter):
            OAuthError(.accessDenied, "the user was sent \(limit) requests in the last minute, the most allowed",
                       retryAfter: retryAfter)
        case .riskDenied(let rule, let reason):
            OAuthError(.accessDenied, "refused by the risk rule '\(rule)': \(reason)")
        case .riskRequiresPasskey(let rule, let reason):
            OAuthError(.accessDenied, "the risk rule '\(rule)' asks for a passkey, which this request cannot use: \(reason)")
        }
    }
}

/// The approval loop between relying party and device: creates a request and seals its details
/// to each of the user's devices, serves a device its inbox, and records the device's signed
/// decision in one conditional update.
public struct ApprovalService: Sendable {
    /// The most devices one request is sealed for.
    static let maximumDevicesPerUser = 50
    /// The most requests one inbox lists.
    static let inboxLimit = 50
    /// How long an undecided request is kept after it expired (token requests then get
    /// `expired_token` rather than `invalid_grant`).
    static let expiredRetention: TimeInterval = 3600
    /// How long a decided request (and its receipt) is kept after it expired.
    static let decidedRetention: TimeInterval = 30 * 86400

    let store: any ApprovalStore
    let signals: ApprovalSignals
    let answers: AnswerCheck
    let sealer: SecretSealer
    let metrics: ServerMetrics
    let logger: Logger
    let now: @Sendable () -> Date
    /// Expired approval requests are swept at most once a minute per node.
    let sweep = PeriodicSchedule(every: 60)

    /// The stored form of an `auth_req_id`.
    public static func hash(authReqID: String) -> Data {
        Secrets.hash(authReqID)
    }

    // MARK: - Relying-party side

    /// Stores a new request and seals its details to each active device of the user.
    func start(_ request: NewApproval, tenant: Tenant) async throws -> StartedApproval {
        guard request.user.status == .active else { throw ApprovalStartError.userDisabled }
        let now = now()
        if let until = request.user.requestsSuppressedUntil, until > now {
            throw ApprovalStartError.suppressed(retryAfter: max(1, Int(until.timeIntervalSince(now).rounded())))
        }
        let devices = try await store.devices(userID: request.user.id, limit: Self.maximumDevicesPerUser)
        guard !devices.isEmpty else { throw ApprovalStartError.noActiveDevice }
        // The floor of the user's groups, whatever the path that asks (CIBA, sign-in, RADIUS).
        var request = request
        if !tenant.policy.groupMinimums.isEmpty {
            let floor = tenant.policy.groupFloor(for: try await store.groupIDs(userID: request.user.id))
            request.required = request.required.raised(to: floor, client: request.client, policy: tenant.policy)
        }
        // The risk rules, on the same paths: they only add to what the request requires.
        let policy = tenant.policy
        let findings = policy.riskRules.isEmpty ? []
            : try await RiskEvaluation(rules: policy.riskRules, signals: store).findings(for: request, at: now)
        let enforced = policy.riskMode == .enforce
        for finding in findings { metrics.riskRuleFired(action: finding.action.rawValue, mode: policy.riskMode.rawValue) }
        if enforced {
            do {
                request = try request.escalated(by: findings, policy: policy)
            } catch {
                try await store.record(Self.audit(findings, request: request, tenant: tenant, target: nil, mode: policy.riskMode, at: now))
                throw error
            }
        }

        let created = Date(timeIntervalSince1970: (now.timeIntervalSince1970 * 1000).rounded(.down) / 1000)
        let expires = created.addingTimeInterval(TimeInterval(request.lifetime))
        let id = Identifier.make("txn", at: created)
        let authReqID = Self.newAuthReqID()
        let matchNumber = tenant.policy.matchesNumber(request.required.value, client: request.client)
            ? NumberMatching.number() : nil
        let verification = tenant.policy.verification(
            for: request.required.value, client: request.client,
            choices: matchNumber.map(NumberMatching.choices(including:)))
        let details = TransactionDetails(
            requestID: id, tenant: tenant.slug, user: .init(id: request.user.id, name: request.user.username),
            client: .init(id: request.client.id, name: request.client.name), bindingMessage: request.bindingMessage?.text,
            scope: request.scope.values, acrValues: request.acrValues?.values, context: request.context,
            requestedAt: Int64(created.timeIntervalSince1970), expiresAt: Int64(expires.timeIntervalSince1970.rounded(.down)),
            challenge: Secrets.randomBytes(32).base64URLEncodedString, verification: verification,
            authorizationDetails: request.authorizationDetails?.elements,
            risk: enforced && !findings.isEmpty ? findings.map { .init(rule: $0.rule, reason: $0.reason) } : nil)
        let plaintext = try details.canonicalData()
        let deliveries = try devices.map { device in
            ApprovalDelivery(
                deviceID: device.id, transactionID: id,
                sealed: try SealedDetails.seal(
                    plaintext, to: try device.sealingKey(postQuantum: tenant.policy.postQuantumSealing), deviceID: device.id,
                    requestID: id))
        }
        var stored = ApprovalTransaction(
            id: id, authReqIDHash: Self.hash(authReqID: authReqID), tenantID: tenant.id, clientID: request.client.id,
            userID: request.user.id, scope: request.scope.values, acrValues: request.acrValues?.values,
            bindingMessage: request.bindingMessage?.text, details: String(decoding: plaintext, as: UTF8.self),
            detailsDigest: TransactionDetails.digest(of: plaintext), challenge: details.challenge, status: .pending,
            pollInterval: request.interval, lastPolledAt: nil, createdAt: created, expiresAt: expires, decidedAt: nil,
            decidedByDevice: nil, response: nil, factors: nil, exchangedAt: nil, verification: verification,
            matchNumber: matchNumber, deliveryMode: request.client.deliveryMode)
        stored.authorizationDetails = request.authorizationDetails
        stored.countsForUser = request.countsForUser
        stored.requestNetwork = request.context.ipAddress.flatMap(IPNetwork.riskNetwork(of:))?.description
        stored.requestAgent = request.context.userAgent.flatMap(UserAgentFamily.init(userAgent:))?.name
        if request.client.deliveryMode != .poll {
            // Ping and push clients are called back with both, so they are kept, sealed.
            stored.authReqIDSealed = try sealer.seal(
                Data(authReqID.utf8), context: ClientNotificationSecrets.authReqIDContext(id))
            stored.notificationTokenSealed = try request.clientNotificationToken.map {
                try sealer.seal(Data($0.value.utf8), context: ClientNotificationSecrets.tokenContext(id))
            }
        }
        let transaction = stored
        // The pushes are queued with the request: both are stored, or neither.
        let pushes = devices.compactMap { device -> PushOutboxEntry? in
            guard let push = device.push, device.pushTokenValid else { return nil }
            return .queued(.request, transactionID: id, tenantID: tenant.id, deviceID: device.id, provider: push.provider,
                           expiresAt: expires, at: created)
        }
        let limit = tenant.policy.userRequestsPerMinute
        if case .limited(let retryAfter) = try await store.start(
            transaction, deliveries: deliveries, pushes: pushes,
            audit: Self.audit(findings, request: request, tenant: tenant, target: id, mode: policy.riskMode, at: now),
            userID: request.user.id,
            limit: request.countsForUser ? UserRequestLimit(perMinute: limit) : .none, at: now) {
            metrics.bcAuthorizeRateLimited(limit: "user")
            // The request was not stored, nor the rules' findings with it: they are recorded on
            // the user, as for a refused request, so a burst that hits the limit is still seen.
            try await store.record(Self.audit(findings, request: request, tenant: tenant, target: nil, mode: policy.riskMode, at: now))
            throw ApprovalStartError.rateLimited(perMinute: limit, retryAfter: retryAfter)
        }
        let notifications = zip(devices, deliveries).map { device, delivery in
            RequestNotification(
                device: device,
                envelope: PendingRequestEnvelope(id: id, createdAt: created, expiresAt: expires, details: delivery.sealed),
                push: PushPayload(deviceID: device.id, requestID: id, expiresAt: details.expiresAt))
        }
        await signals.started(notifications, pushesQueued: !pushes.isEmpty)
        metrics.approvalStarted(devices: deliveries.count)
        try await sweepIfDue(now: now)
        return StartedApproval(authReqID: authReqID, transaction: transaction)
    }

    /// The audit events of the risk rules that fired for a request: `risk.rule_fired` for each,
    /// on the request (`target`) or, for one that was not started, on the user.
    static func audit(
        _ findings: [RiskFinding], request: NewApproval, tenant: Tenant, target: String?, mode: RiskMode, at date: Date
    ) -> [AuditEvent] {
        findings.map { finding in
            AuditLog.event(
                "risk.rule_fired", actor: "system", tenantID: tenant.id,
                target: target.map { ("approval", $0) } ?? ("user", request.user.id),
                details: ["rule": finding.rule, "action": finding.action.rawValue, "reason": finding.reason,
                          "mode": mode.rawValue, "client_id": request.client.id, "user_id": request.user.id],
                at: date)
        }
    }

    /// A new `auth_req_id`: 32 random bytes in base64url, drawn again while it begins with `-`,
    /// which a command line (`countersign ciba poll <auth_req_id>`) would read as an option. One
    /// draw in 64 is repeated; what is left is 255.98 bits of the 256.
    static func newAuthReqID() -> String {
        while true {
            let candidate = Secrets.randomBytes(32).base64URLEncodedString
            if !candidate.hasPrefix("-") { return candidate }
        }
    }

    // MARK: - Device side

    /// The device's undecided, unexpired requests, newest first.
    public func inbox(for device: Device) async throws -> [PendingRequestEnvelope] {
        try await store.inbox(deviceID: device.id, at: now(), limit: Self.inboxLimit)
    }

    /// One request sealed for this device, if it can still be answered.
    public func request(_ id: String, for device: Device) async throws -> PendingRequestEnvelope {
        let answerable = try await answerable(id, by: device)
        let transaction = answerable.transaction
        return PendingRequestEnvelope(
            id: transaction.id, createdAt: transaction.createdAt, expiresAt: transaction.expiresAt,
            details: answerable.delivery.sealed)
    }

    /// Records the device's signed decision: the answer's checks (`AnswerCeremony`), then the
    /// factors (`AnswerCheck`), then the one conditional update that also checks state and
    /// expiry, so the first valid answer wins and every later one gets `already_decided`. The
    /// call's nonce is recorded as `AnswerNonce` says, whatever the outcome.
    func answer(
        _ id: String, by device: Device, tenant: Tenant, submission: ApprovalSubmission, nonce: AnswerNonce
    ) async throws -> ApprovalAcknowledgement {
        var nonce = nonce
        let transaction: ApprovalTransaction
        let decision: ApprovalDecision
        let recorded: RecordedDecision?
        do {
            let answerable = try await answerable(id, by: device)
            transaction = answerable.transaction
            let response = try AnswerCeremony.verify(submission, of: transaction, by: device, at: now())
            try await nonce.beforeFactors(response.factors)
            let outcome = try await answers.evaluate(
                response, submission: submission, transaction: transaction, device: device, tenant: tenant)
            let now = now()
            let (status, factors, reason, detail): (ApprovalTransaction.Status, [String], DenyReason?, String?) = switch outcome {
            case .approve(let factors): (.approved, factors, nil, nil)
            case .deny(let reason, let detail): (.denied, response.factors, reason, detail)
            }
            decision = ApprovalDecision(
                transaction: transaction, status: status, device: device, response: submission.response, factors: factors,
                reason: reason, nonce: nonce.forCommit, at: now,
                effects: .of(transaction, status: status, by: device, factors: factors, reason: reason, verifierReason: detail,
                             deviceIDs: answerable.deviceIDs, policy: tenant.policy, at: now))
            recorded = try await store.decide(decision)
        } catch {
            try await nonce.afterRefusal()
            throw error
        }
        guard let recorded else {
            // Lost the race, or expired meanwhile: say which.
            let current = try await store.request(id: transaction.id)
            if let current, current.status != .pending { throw ApprovalError.alreadyDecided(current.status) }
            throw ApprovalError.expired
        }
        metrics.approvalDecided(decision.status.rawValue)
        await signals.closed(decision.effects.closed, deviceIDs: decision.effects.deviceIDs,
                             withdrawalsQueued: recorded.withdrawalsQueued, callsBackClient: transaction.deliveryMode != .poll)
        return ApprovalAcknowledgement(
            requestID: transaction.id, status: decision.status.rawValue, decidedAt: decision.at, reason: decision.reason)
    }

    /// The delivery of `id` to this device, if the request is still pending and unexpired.
    private func answerable(_ id: String, by device: Device) async throws -> AnswerableDelivery {
        guard let answerable = try await store.delivery(requestID: id, deviceID: device.id) else {
            throw ApprovalError.unknownRequest
        }
        let transaction = answerable.transaction
        guard transaction.status == .pending else { throw ApprovalError.alreadyDecided(transaction.status) }
        guard !transaction.isExpired(at: now()) else { throw ApprovalError.expired }
        return answerable
    }

    // MARK: - Clean-up

    /// Deletes expired requests and the clients' request counts of past minutes, at most once a
    /// minute, by whichever request comes first; the deletes go through the expiry and window
    /// indexes, so their cost follows what expired, not what is stored.
    private func sweepIfDue(now: Date) async throws {
        guard sweep.isDue(at: now) else { return }
        // Only the current and the previous minute count towards a client's rate limit.
        let deleted = try await store.sweep(
            undecidedBefore: now.addingTimeInterval(-Self.expiredRetention),
            decidedBefore: now.addingTimeInterval(-Self.decidedRetention), windowsBefore: now.addingTimeInterval(-2 * 60))
        if deleted > 0 { logger.debug("removed expired approval requests", metadata: ["count": "\(deleted)"]) }
    }
}

/// Why a device's call about a request was refused.
public enum ApprovalError: Error, Sendable, Equatable, APIFailure {
    case unknownRequest
    case alreadyDecided(ApprovalTransaction.Status)
    case expired
    case invalidResponse(String)
    case detailsMismatch
    case challengeMismatch(String)

    var apiError: APIError {
        switch self {
        case .unknownRequest:
            APIError(.notFound, .unknownRequest, "no such request was sent to this device")
        case .alreadyDecided(let status):
            APIError(.conflict, .alreadyDecided, "the request was already \(status.rawValue)")
        case .expired:
            APIError(.gone, .approvalExpired, "the request has expired")
        case .invalidResponse(let why):
            APIError(.badRequest, .invalidResponse, why)
        case .detailsMismatch:
            APIError(.badRequest, .detailsMismatch, "the response signs other details than were sent to this device")
        case .challengeMismatch(let why):
            APIError(.badRequest, .challengeMismatch, why)
        }
    }
}
