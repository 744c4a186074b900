import CountersignCore
import CountersignRADIUS
import Foundation
import Logging

/// Where a datagram came from: its address (4 or 16 octets) and its text with the port.
struct RADIUSSource: Sendable, Hashable {
    let address: [UInt8]
    let port: Int
    let text: String
}

/// The RADIUS server's answers (RFC 2865, 3579, 5080, 5997): one datagram in, the octets of the
/// answer out, or nil to send none. What the request gets depends on its RADIUS client's mode:
///
/// - `push`: an approval on the user's phone (the same sealed, device-signed approval as CIBA,
///   with `network_access` authorization details naming the client, NAS and calling station); the
///   answer waits for the decision or the client's wait. Where the tenant's policy requires number
///   matching for the class, the request is answered as in `push-number`: the policy is never
///   weakened because a gateway did not ask for it.
/// - `push-number`: an Access-Challenge whose Reply-Message names the number to pick; the request
///   that answers it (with the State) waits for the decision.
/// - `passcode`: a one-time code from the user's device in User-Password, checked at once.
/// - `auto`: a code in User-Password is checked; an empty password, or `push`, sends a push.
///
/// One push per login: a retransmission gets the same answer from this node's duplicate cache;
/// a retry with a new Identifier, or a failover to another node, joins the login the database
/// holds for the client, user and calling station (`radius_logins`).
struct RADIUSAuthentication: Sendable {
    let directory: RADIUSClientDirectory
    let store: any RADIUSStore
    let approvals: ApprovalService
    let totp: TOTPVerification
    let duplicates: RADIUSDuplicateCache
    let drops: RADIUSDropLog
    let metrics: ServerMetrics
    let events: ApprovalEvents
    let logger: Logger
    let now: @Sendable () -> Date
    /// Checks User-Password against the tenant's directory for a client with `directory_password`;
    /// without it such a client's logins are rejected.
    var passwords: DirectoryPasswords? = nil
    /// Finished logins are swept at most once a minute per node.
    let sweep = PeriodicSchedule(every: 60)

    /// How long after its approval ends a login is kept: a gateway's retries for a login that has
    /// been answered keep finding it.
    static let retransmissionWindow: TimeInterval = 30
    /// How long a login that is being started on another node is waited for before it is taken over.
    static let startingTimeout: TimeInterval = 10
    /// The Access-Request code is Status-Server (RFC 5997 §3).
    static let statusServer = RADIUSPacket.Code.statusServer.rawValue

    /// What becomes of one packet.
    enum Disposal: Sendable, Equatable {
        case send([UInt8])
        /// Dropped unanswered: it did not authenticate, was malformed, or could not be answered.
        case drop
        /// A retransmission of a request still being answered: its answer is on its way.
        case inProgress
    }

    /// The answer to `datagram` from `source`; nil drops it.
    func answer(_ datagram: [UInt8], from source: RADIUSSource) async -> [UInt8]? {
        if case .send(let answer) = await dispose(datagram, from: source) { return answer }
        return nil
    }

    /// What becomes of `datagram` from `source`. `secret` replaces the client's shared secret
    /// where the transport fixes it (RadSec's `radsec`).
    func dispose(_ datagram: [UInt8], from source: RADIUSSource, secret fixedSecret: [UInt8]? = nil) async -> Disposal {
        let packet: RADIUSPacket
        do {
            packet = try RADIUSPacket(parsing: datagram)
        } catch {
            await drop("malformed", source, nil)
            return .drop
        }
        let found: (client: RADIUSClient, secret: [UInt8])?
        do {
            found = try await directory.client(for: source.address)
        } catch {
            logger.error("the RADIUS clients could not be read", metadata: ["error": "\(ErrorMiddleware.describe(error))"])
            metrics.radiusDropped("server_error")
            return .drop
        }
        guard let (client, clientSecret) = found else {
            await drop("unknown_source", source, nil)
            return .drop
        }
        let secret = fixedSecret ?? clientSecret
        if packet.code == Self.statusServer {
            return await statusServer(packet, client, secret, source).map(Disposal.send) ?? .drop
        }
        let key = RADIUSDuplicateCache.Key(source: source.text, identifier: packet.identifier, authenticator: packet.authenticator)
        let keep = Duration.seconds(2 * client.waitSeconds + Int(Self.retransmissionWindow))
        switch duplicates.see(key, keep: keep) {
        case .inProgress:
            metrics.radiusDuplicate("dropped_in_progress")
            return .inProgress
        case .answered(let answer):
            metrics.radiusDuplicate("answered_again")
            return .send(answer)
        case .new:
            break
        }
        let answer = await respond(packet, client: client, secret: secret, source: source)
        duplicates.answered(key, with: answer, keep: keep)
        return answer.map(Disposal.send) ?? .drop
    }

    /// RFC 5997: Status-Server is answered Access-Accept when it authenticates, with
    /// Message-Authenticator first; it starts nothing.
    private func statusServer(
        _ packet: RADIUSPacket, _ client: RADIUSClient, _ secret: [UInt8], _ source: RADIUSSource
    ) async -> [UInt8]? {
        guard RADIUSAuthenticators.messageAuthenticatorIsValid(packet, secret: secret) else {
            await drop(packet.first(RADIUSAttribute.messageAuthenticator) == nil
                       ? "missing_message_authenticator" : "invalid_message_authenticator", source, client)
            return nil
        }
        metrics.radiusAnswered("accept", path: "status_server")
        return RADIUSAuthenticators.response(
            .accessAccept, to: packet, attributes: Self.proxyStates(of: packet), secret: secret)
    }

    private func respond(
        _ packet: RADIUSPacket, client: RADIUSClient, secret: [UInt8], source: RADIUSSource
    ) async -> [UInt8]? {
        let request: RADIUSAccessRequest
        do {
            request = try RADIUSAccessRequest(packet, secret: secret)
        } catch {
            switch error {
            case .drop(let reason):
                await drop(reason.rawValue, source, client)
                return nil
            case .reject(let reason):
                return reply(.reject(reason.replyMessage), path: "malformed", to: packet, client: client, secret: secret)
            }
        }
        do {
            let (outcome, path) = try await decide(request, client: client)
            try await sweepIfDue()
            return reply(outcome, path: path, to: packet, client: client, secret: secret)
        } catch {
            // The database is down, say: no answer, so that the gateway tries again or another
            // server, rather than a Reject the user could do nothing about.
            logger.error("a RADIUS request could not be answered", metadata: [
                "radius_client": "\(client.id)", "error": "\(ErrorMiddleware.describe(error))"])
            metrics.radiusDropped("server_error")
            return nil
        }
    }

    // MARK: - Deciding

    /// What an Access-Request gets, and the path it took (a metric label).
    enum Outcome: Sendable, Equatable {
        /// Access-Accept with Countersign's Class (unless the client sets its own), the client's
        /// reply attributes, then those of the user's groups (`group_reply_attributes`).
        case accept(class: String, groupAttributes: [RADIUSReplyAttribute] = [])
        case reject(String)
        case challenge(state: [UInt8], message: String)
    }

    private func decide(_ request: RADIUSAccessRequest, client: RADIUSClient) async throws -> (Outcome, String) {
        guard let tenant = try await store.tenant(id: client.tenantID) else { return (.reject(Message.unknownUser), "user") }
        let username = client.username(from: request.userName)
        let found = try await store.user(username: username, tenantID: tenant.id)
        let password = String(decoding: request.password ?? [], as: UTF8.self)
        // The directory password comes first, on the request that starts a login (the one that
        // answers a challenge carries the user's Enter): an unknown user and a wrong password
        // get the same Reject.
        if client.directoryPassword, request.state == nil {
            switch await passwords?.verify(
                password, username: username, user: found, tenantID: tenant.id, address: request.callingStationID
            ) ?? .unavailable {
            case .verified: break
            case .refused: return (.reject(Message.wrongPassword), "password")
            case .throttled(let wait): return (.reject(Message.passwordThrottled(wait)), "password")
            case .unavailable: return (.reject(Message.passwordUnavailable), "password")
            }
        }
        guard let user = found, user.status == .active else {
            return (.reject(Message.unknownUser), "user")
        }
        // The client's groups, and what their members' Access-Accept carries.
        let groups = client.allowedGroups.isEmpty && client.groupReplyAttributes.isEmpty
            ? [] : try await store.groupIDs(userID: user.id)
        guard client.allowedGroups.isEmpty || !groups.isDisjoint(with: client.allowedGroups) else {
            return (.reject(Message.unknownUser), "group")
        }
        let origin = Origin(request: request, client: client, tenant: tenant, user: user)
        let (outcome, path) = try await decide(request, origin: origin)
        guard case .accept(let classValue, _) = outcome else { return (outcome, path) }
        let extra = client.groupReplyAttributes.filter { groups.contains($0.group) }.flatMap(\.attributes)
        return (.accept(class: classValue, groupAttributes: extra), path)
    }

    /// What a request of a known, active user who may use the client gets.
    private func decide(_ request: RADIUSAccessRequest, origin: Origin) async throws -> (Outcome, String) {
        let client = origin.client
        let password = String(decoding: request.password ?? [], as: UTF8.self)
        if let state = request.state { return (try await continueChallenge(state, origin), "challenge") }
        switch client.mode {
        case .passcode:
            return (try await passcode(password, origin), "passcode")
        case .auto:
            if TOTPVerification.isCode(password) { return (try await passcode(password, origin), "passcode") }
            guard password.isEmpty || password.lowercased() == "push" else { return (.reject(Message.autoPassword), "passcode") }
            return (try await push(origin, challenge: false), "push")
        case .push:
            return (try await push(origin, challenge: false), "push")
        case .pushNumber:
            return (try await push(origin, challenge: true), "push")
        }
    }

    /// The request with what it was read against.
    struct Origin: Sendable {
        let request: RADIUSAccessRequest
        let client: RADIUSClient
        let tenant: Tenant
        let user: User

        var callingStation: String { request.callingStationID ?? "" }

        /// The RADIUS client as the approval loop's client: its id and name are what the phone
        /// shows and the receipt names.
        var approvalClient: Client {
            let date = Date(timeIntervalSince1970: 0)
            return Client(id: client.id, tenantID: client.tenantID, name: client.name, scopes: [Scope.openID],
                          deliveryMode: .poll, notificationEndpoint: nil, createdAt: date, updatedAt: date)
        }
    }

    private func passcode(_ password: String, _ origin: Origin) async throws -> Outcome {
        guard TOTPVerification.isCode(password) else { return .reject(Message.passcodeForm) }
        do {
            _ = try await totp.check(password, of: origin.user, clientID: origin.client.id, tenantID: origin.tenant.id)
            return .accept(class: "countersign:passcode")
        } catch TOTPError.noSeed {
            guard try await store.hasActiveDevice(userID: origin.user.id) else { return try await unenrolled(origin) }
            return .reject(Message.noCodes)
        } catch TOTPError.wrongCode {
            return .reject(Message.wrongCode)
        } catch TOTPError.locked(let retryAfter) {
            return .reject(Message.locked(retryAfter))
        } catch ApprovalStartError.userDisabled {
            return .reject(Message.unknownUser)
        }
    }

    private func unenrolled(_ origin: Origin) async throws -> Outcome {
        guard origin.client.unenrolledUsers == .accept else { return .reject(Message.notEnrolled) }
        try await store.recordUnenrolledAccepted(origin.client, user: origin.user, at: now())
        return .accept(class: "countersign:unenrolled")
    }

    private func push(_ origin: Origin, challenge asked: Bool) async throws -> Outcome {
        let client = origin.approvalClient
        // push-number asks for the number-matching class, as a relying party's acr_values would:
        // never below the tenant's floor, and only if the tenant allows the factor.
        let required = RequiredClass(
            requested: asked ? [AuthenticationClass.numberMatch.urn] : nil, client: client, policy: origin.tenant.policy)
        // A policy that asks for number matching is kept whatever the gateway's mode.
        let challenge = asked || origin.tenant.policy.matchesNumber(required.value, client: client)
        let joined: (login: RADIUSLogin, transaction: ApprovalTransaction)
        do {
            joined = try await joinOrStart(origin, required: required, challenge: challenge)
        } catch let error as ApprovalStartError {
            switch error {
            case .noActiveDevice: return try await unenrolled(origin)
            case .userDisabled: return .reject(Message.unknownUser)
            case .suppressed(let retryAfter): return .reject(Message.suppressed(retryAfter))
            case .rateLimited: return .reject(Message.rateLimited)
            case .riskDenied, .riskRequiresPasskey: return .reject(Message.riskDenied)
            }
        }
        if let state = joined.login.state, joined.transaction.status == .pending {
            return .challenge(state: Array(state), message: Message.challenge(number: joined.transaction.matchNumber))
        }
        return try await wait(for: joined.transaction, login: joined.login, origin)
    }

    private func continueChallenge(_ state: [UInt8], _ origin: Origin) async throws -> Outcome {
        guard let login = try await store.login(radiusClientID: origin.client.id, state: Data(state)),
              login.userID == origin.user.id, login.expiresAt > now(),
              let id = login.transactionID, let transaction = try await store.transaction(id: id) else {
            return .reject(Message.unknownChallenge)
        }
        return try await wait(for: transaction, login: login, origin)
    }

    /// The login the database holds for the client, user and calling station if it can still be
    /// joined (its approval pending, or approved and not yet accepted for another request); else
    /// a new one, claimed first so that no other node starts a second approval for it.
    private func joinOrStart(
        _ origin: Origin, required: RequiredClass, challenge: Bool
    ) async throws -> (login: RADIUSLogin, transaction: ApprovalTransaction) {
        let request = Data(origin.request.requestAuthenticator)
        for _ in 0..<40 {
            let date = now()
            let existing = try await store.login(
                radiusClientID: origin.client.id, userID: origin.user.id, callingStation: origin.callingStation)
            if let existing, existing.expiresAt > date {
                if let id = existing.transactionID, let transaction = try await store.transaction(id: id) {
                    switch transaction.status {
                    case .pending where !transaction.isExpired(at: date):
                        return (existing, transaction)
                    case .approved where existing.acceptedRequest == nil || existing.acceptedRequest == request:
                        return (existing, transaction)
                    default:
                        break
                    }
                } else if existing.transactionID == nil, date.timeIntervalSince(existing.createdAt) < Self.startingTimeout {
                    // Another node is starting this login's approval.
                    try await Task.sleep(for: .milliseconds(250))
                    continue
                }
            }
            var login = RADIUSLogin(
                radiusClientID: origin.client.id, userID: origin.user.id, callingStation: origin.callingStation,
                login: Identifier.make("rlg", at: date), transactionID: nil,
                state: challenge ? Data(Secrets.randomBytes(16)) : nil, acceptedRequest: nil, createdAt: date,
                expiresAt: date.addingTimeInterval(Self.startingTimeout))
            guard try await store.claim(login, replacing: existing?.login) else { continue }
            do {
                let started = try await approvals.start(approval(origin, required: required, challenge: challenge),
                                                        tenant: origin.tenant)
                login.transactionID = started.transaction.id
                login.expiresAt = started.transaction.expiresAt.addingTimeInterval(
                    TimeInterval(origin.client.waitSeconds) + Self.retransmissionWindow)
                // A risk rule may have raised the request to number matching: the user must then
                // be shown the number, in a challenge this login did not plan.
                let raised = login.state == nil && started.transaction.matchNumber != nil ? Data(Secrets.randomBytes(16)) : nil
                if let raised { login.state = raised }
                try await store.attach(
                    login: login.login, transactionID: started.transaction.id, expiresAt: login.expiresAt, state: raised)
                return (login, started.transaction)
            } catch {
                try? await store.release(login: login.login)
                throw error
            }
        }
        throw RADIUSBusy()
    }

    /// The approval a RADIUS login asks for: shown on the phone with the client, the NAS and the
    /// user's address as `network_access` details, which the device's signature covers.
    private func approval(_ origin: Origin, required: RequiredClass, challenge: Bool) -> NewApproval {
        let request = origin.request
        var detail: [String: JSONValue] = [
            "type": .string(RADIUSAuthentication.detailType),
            "radius_client": .string(origin.client.name),
        ]
        if let nas = request.nasIdentifier { detail["nas_identifier"] = .string(nas) }
        if let address = request.nasIPAddress, address.count == 4 {
            detail["nas_ip_address"] = .string(address.map(String.init).joined(separator: "."))
        }
        if let station = request.callingStationID { detail["calling_station_id"] = .string(station) }
        if let called = request.calledStationID { detail["called_station_id"] = .string(called) }
        if let service = request.serviceType { detail["service"] = .string(service) }
        // The user has to read the number, pick it and press Enter before the wait begins.
        let lifetime = challenge ? min(NewApproval.longestLifetime, origin.client.waitSeconds + 90) : origin.client.waitSeconds
        return NewApproval(
            client: origin.approvalClient, user: origin.user, scope: Self.scope, acrValues: nil, bindingMessage: nil,
            context: TransactionDetails.Context.requestedFrom(
                ipAddress: request.callingStationID.flatMap { IPNetwork.address($0) == nil ? nil : $0 }, userAgent: nil),
            lifetime: lifetime, required: required, clientNotificationToken: nil,
            authorizationDetails: AuthorizationDetails(elements: [.object(detail)]))
    }

    /// The authorization detail type of a RADIUS login (docs/radius.md).
    static let detailType = "network_access"
    private static let scope = Scope.openIDOnly

    /// The decision on `transaction`, waited for until the client's wait runs out. Every request
    /// that joined the login while its approval was pending is accepted with it (the gateway's
    /// retries and failovers of one login); one that comes after the approval is accepted only if
    /// no other request was: an approval lets in one login, not whoever asks next.
    private func wait(for transaction: ApprovalTransaction, login: RADIUSLogin, _ origin: Origin) async throws -> Outcome {
        let deadline = ContinuousClock.now + .seconds(origin.client.waitSeconds)
        let joinedPending = transaction.status == .pending
        var current = transaction
        var round = 0
        while true {
            switch current.status {
            case .approved:
                let recorded = try await store.accept(login: login.login, request: Data(origin.request.requestAuthenticator))
                guard recorded || joinedPending else { return .reject(Message.alreadyAnswered) }
                return .accept(class: "countersign:\(current.id)")
            case .denied:
                return .reject(current.denyReason == .wrongNumber ? Message.wrongNumber : Message.denied)
            case .pending:
                if current.isExpired(at: now()) { return .reject(Message.expired) }
            }
            if ContinuousClock.now >= deadline || events.isClosed { return .reject(Message.noAnswer) }
            try await Task.sleep(for: LongPoll.step(round))
            round += 1
            guard let read = try await store.transaction(id: current.id) else { return .reject(Message.expired) }
            current = read
        }
    }

    // MARK: - Answering

    private func reply(
        _ outcome: Outcome, path: String, to packet: RADIUSPacket, client: RADIUSClient, secret: [UInt8]
    ) -> [UInt8] {
        var attributes: [RADIUSAttribute] = []
        let code: RADIUSPacket.Code
        switch outcome {
        case .accept(let classValue, let groupAttributes):
            code = .accessAccept
            let own = (client.replyAttributes + groupAttributes).compactMap(\.attribute)
            if !own.contains(where: { $0.type == RADIUSAttribute.class }) {
                attributes.append(RADIUSAttribute(type: RADIUSAttribute.class, text: classValue))
            }
            attributes += own
        case .reject(let message):
            code = .accessReject
            attributes += Self.replyMessages(message)
        case .challenge(let state, let message):
            code = .accessChallenge
            attributes += Self.replyMessages(message)
            attributes.append(RADIUSAttribute(type: RADIUSAttribute.state, value: state))
        }
        metrics.radiusAnswered(
            code == .accessAccept ? "accept" : code == .accessReject ? "reject" : "challenge", path: path)
        return RADIUSAuthenticators.response(
            code, to: packet, attributes: attributes + Self.proxyStates(of: packet), secret: secret)
    }

    /// A Reply-Message in attributes of at most 253 octets, cut between characters.
    static func replyMessages(_ message: String) -> [RADIUSAttribute] {
        var attributes: [RADIUSAttribute] = []
        var chunk: [UInt8] = []
        for character in message {
            let octets = Array(String(character).utf8)
            if chunk.count + octets.count > 253 {
                attributes.append(RADIUSAttribute(type: RADIUSAttribute.replyMessage, value: chunk))
                chunk = []
            }
            chunk += octets
        }
        if !chunk.isEmpty { attributes.append(RADIUSAttribute(type: RADIUSAttribute.replyMessage, value: chunk)) }
        return attributes
    }

    /// RFC 2865 §5.33: every Proxy-State of the request, in order, goes back unmodified.
    static func proxyStates(of packet: RADIUSPacket) -> [RADIUSAttribute] {
        packet.all(RADIUSAttribute.proxyState).map { RADIUSAttribute(type: RADIUSAttribute.proxyState, value: $0) }
    }

    private func drop(_ reason: String, _ source: RADIUSSource, _ client: RADIUSClient?) async {
        metrics.radiusDropped(reason)
        guard let count = drops.count(reason: reason, source: source.address) else { return }
        logger.notice("RADIUS packets dropped", metadata: [
            "reason": "\(reason)", "source": "\(source.text)", "count": "\(count)"])
        do {
            try await store.recordDropped(reason: reason, source: source.text, radiusClient: client, count: count, at: now())
        } catch {
            logger.error("a RADIUS drop could not be recorded", metadata: ["error": "\(ErrorMiddleware.describe(error))"])
        }
    }

    private func sweepIfDue() async throws {
        guard sweep.isDue(at: now()) else { return }
        try await store.sweepLogins(before: now())
    }

    /// What the user is told, in the Reply-Message the gateway shows.
    enum Message {
        static let unknownUser = "Unknown user, or the user may not log in."
        static let notEnrolled = "You have no phone enrolled to approve this login."
        static let autoPassword = "Enter the 6-digit code from your phone, or push to be sent a request to approve."
        static let passcodeForm = "Enter the 6-digit code from your phone."
        static let noCodes = "None of your devices shows codes; ask to be sent a request instead."
        static let wrongCode = "The code is wrong, or was already used."
        static let rateLimited = "Too many requests were sent to your phone; try again in a minute."
        static let riskDenied = "This login was refused by your organisation's risk rules."
        static let unknownChallenge = "This login has expired or is unknown; log in again."
        static let alreadyAnswered = "This approval was already used for another login; log in again."
        static let denied = "Denied on your phone."
        static let wrongNumber = "The number picked on your phone was not the one shown here."
        static let expired = "The request on your phone expired; log in again."
        static let noAnswer = "No answer from your phone in time; log in again."
        static let wrongPassword = "The username or password is not right."
        static let passwordUnavailable = "Your password cannot be checked just now; try again in a few minutes."

        static func passwordThrottled(_ seconds: Int) -> String {
            "Too many wrong passwords; try again in \(max(1, (seconds + 59) / 60)) minutes."
        }

        static func locked(_ seconds: Int) -> String {
            "Too many wrong codes; codes are not checked for \(max(1, (seconds + 59) / 60)) minutes."
        }

        static func suppressed(_ seconds: Int) -> String {
            "You reported a request you did not make; logins are paused for \(max(1, (seconds + 59) / 60)) minutes."
        }

        /// Over SSH and many VPN clients the number must be in the prompt itself.
        static func challenge(number: Int64?) -> String {
            guard let number else { return "Approve on your phone, then press Enter." }
            return "Approve on your phone and choose \(number), then press Enter."
        }
    }
}

/// A login kept changing hands between nodes: no answer, the gateway tries again.
struct RADIUSBusy: Error {}
