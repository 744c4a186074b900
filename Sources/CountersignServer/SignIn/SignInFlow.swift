import CountersignCore
import Foundation
import HTTPTypes
import Hummingbird

/// The hosted sign-in at the authorization endpoint: a person names themselves, approves on
/// their phone, and the browser goes back to the application with a code.
///
/// 1. `authorize` (`GET|POST /authorize`): the request is checked (`AuthorizationEndpoint`).
///    A live session that answers it gets a code at once; `prompt=none` without one gets
///    `login_required`; otherwise an attempt begins and the username form is shown.
/// 2. `signIn` (`POST /authorize/sign-in`): the same signed, sealed approval request as CIBA is
///    sent to the user's phones, with the browser's address and User-Agent among the details
///    they show, and the page waits for the answer, showing the number to match where the
///    policy asks for one.
/// 3. `wait` (`POST /authorize/wait`): the page's script asks until the request is decided.
/// 4. `proceed` (`POST /authorize/continue`): approved, a session begins and the code goes back
///    to the client; denied or expired, a page says so.
///
/// An unknown username, a disabled user and a user without a phone get the same page, and
/// repeated tries at one username the same limit (`FailedAuthenticationThrottle`), whether or
/// not the user exists: the pages reveal nothing about which usernames there are.
struct SignInFlow: Sendable {
    let store: any SignInStore
    /// The code flow's side: what a request needs, and the code that resumes it.
    let interaction: AuthorizationInteraction
    let approvals: ApprovalService
    /// Closed when the server stops, which ends the waits in flight.
    let events: ApprovalEvents
    let throttle: FailedAuthenticationThrottle
    /// What sign-ins from browsers the user never signed in with may spend.
    let pushLimits: SignInPushLimits
    let cookies: BrowserCookies
    let now: @Sendable () -> Date
    /// Checks the directory password where a client asks for it first; without it such a
    /// client's sign-ins cannot proceed.
    var passwords: DirectoryPasswords? = nil
    /// Expired attempts, sessions, pushed requests and codes are deleted at most once an hour
    /// per node, from the authorization requests, through the expiry indexes.
    let housekeeping = PeriodicSchedule(every: 3600)

    /// What a step knows of the request it serves.
    struct Visit: Sendable {
        let issuer: Issuer
        let request: Request
        let remoteAddress: String?

        var tenant: Tenant { issuer.tenant }
    }

    // MARK: - 1. The authorization request

    func authorize(_ parameters: FormParameters, _ visit: Visit) async throws -> PageAnswer {
        let started = now()
        if housekeeping.isDue(at: started) {
            // A day back: a session's row outlives its end by that much, for the audit's sake.
            try await store.purgeExpired(before: started.addingTimeInterval(-86_400))
            try await interaction.endpoint.store.purgeExpired(before: started)
        }
        let decision = try await interaction.decide(
            parameters, issuer: visit.issuer,
            // A session opened by recovery answers no client (`AuthenticationContext.isRecovery`).
            liveSession: { try await liveSession(visit, at: now()).flatMap { $0.context.isRecovery ? nil : $0 } },
            user: { try await store.user(id: $0, tenantID: visit.tenant.id) },
            admits: { user, client, context in
                guard try await admits(user, to: client) else { return false }
                return try await meetsGroupFloor(user, client: client, signedInWith: context, policy: visit.tenant.policy)
            })
        switch decision {
        case .redirect(let redirect):
            return .redirect(to: redirect.location)
        case .signIn(let request, let client, let loginHint):
            return try await begin(request, client: client, loginHint: loginHint, visit)
        }
    }

    /// A new attempt for `request`, bound to this browser, and its username form.
    private func begin(_ request: AuthorizationRequest, client: Client, loginHint: String?, _ visit: Visit) async throws -> PageAnswer {
        let date = now()
        let requirement = SignInRequirement(acrValues: request.acrValues, client: client, policy: visit.tenant.policy)
        let (handle, newBrowserCookie) = try await beginAttempt(request, at: date, visit)
        return .page(
            "sign-in",
            SignInPage(tenantName: visit.tenant.displayName, base: base(visit), clientName: client.name, attempt: handle,
                       username: loginHint ?? "", usernameError: nil,
                       passkeys: visit.tenant.policy.passkeys.enabled && requirement.passkey, phone: requirement.phone,
                       password: requirement.password),
            cookies: newBrowserCookie.map { [$0] } ?? [])
    }

    /// Stores a new attempt for `request`, bound to this browser: its handle, and the browser's
    /// cookie to set when it had none.
    func beginAttempt(_ request: AuthorizationRequest, at date: Date, _ visit: Visit) async throws -> (String, Cookie?) {
        let handle = Secrets.randomBytes(32).base64URLEncodedString
        let (browser, newBrowserCookie) = browserMark(visit.request)
        try await store.begin(SignInAttempt(
            handleHash: Secrets.hash(handle), tenantID: visit.tenant.id, clientID: request.clientID, request: request,
            browserHash: Secrets.hash(browser), createdAt: date, expiresAt: date.addingTimeInterval(SignInAttempt.lifetime)))
        return (handle, newBrowserCookie)
    }

    // MARK: - The account's own sign-in

    /// The id of Countersign's own pages (`/account`) as the party signed in to. It is no stored
    /// client: a sign-in for it ends in a session and the account page, not in a code.
    static let accountClientID = "countersign-account"

    /// The sign-in that leads to the account page, for a browser without a live session.
    func beginAccountSignIn(_ visit: Visit, loginHint: String? = nil) async throws -> PageAnswer {
        try await begin(accountRequest(visit, loginHint: loginHint), client: accountClient(visit), loginHint: loginHint, visit)
    }

    /// The request of a sign-in to the account page.
    func accountRequest(_ visit: Visit, loginHint: String? = nil) -> AuthorizationRequest {
        AuthorizationRequest(
            clientID: Self.accountClientID, redirectURI: visit.issuer.identifier + "/account", scope: [Scope.openID],
            codeChallenge: "", loginHint: loginHint)
    }

    /// Countersign's own pages as the client of a sign-in.
    func accountClient(_ visit: Visit) -> Client {
        let date = Date(timeIntervalSince1970: 0)
        return Client(id: Self.accountClientID, tenantID: visit.tenant.id, name: "your \(visit.tenant.displayName) account",
                      scopes: [Scope.openID], deliveryMode: .poll, notificationEndpoint: nil, createdAt: date, updatedAt: date)
    }

    /// The client an attempt signs in to.
    func client(of attempt: SignInAttempt, _ visit: Visit) async throws -> Client? {
        attempt.clientID == Self.accountClientID
            ? accountClient(visit) : try await interaction.endpoint.store.client(id: attempt.clientID, tenantID: visit.tenant.id)
    }

    // MARK: - 2. The username, and the request to the phone

    func signIn(_ form: FormParameters, _ visit: Visit) async throws -> PageAnswer {
        let (handle, attempt) = try await openAttempt(form, visit)
        guard let client = try await client(of: attempt, visit) else { throw AuthorizationPageError.unknownClient }
        let username = (form["username"] ?? "").trimmingCharacters(in: .whitespaces)
        let requirement = SignInRequirement(acrValues: attempt.request.acrValues, client: client, policy: visit.tenant.policy)
        // "Try another username": the form again, empty, with nothing to correct.
        let startingOver = form["start_over"] == "yes" && requirement.phone
        func signInForm(username: String, usernameError: String? = nil, passwordError: String? = nil,
                        status: HTTPResponse.Status = .badRequest) -> PageAnswer {
            .page("sign-in", SignInPage(
                tenantName: visit.tenant.displayName, base: base(visit), clientName: client.name, attempt: handle,
                username: username, usernameError: usernameError,
                passkeys: visit.tenant.policy.passkeys.enabled && requirement.passkey, phone: requirement.phone,
                passkeyError: requirement.phone ? nil : "This application asks you to sign in with a passkey.",
                password: requirement.password, passwordError: passwordError),
                status: status)
        }
        guard !startingOver, !username.isEmpty, username.count <= 256, requirement.phone else {
            return signInForm(
                username: startingOver ? "" : username,
                usernameError: !requirement.phone || startingOver ? nil
                    : username.isEmpty ? "Enter your username." : "A username is at most 256 characters.",
                status: startingOver ? .ok : .badRequest)
        }
        // The password is asked for each request sent: "Send a new request" posts the username
        // alone, and gets the form with it filled in. (An empty field is an absent one.)
        let password = form["password"]
        if requirement.password, password == nil {
            guard form["password_asked"] == "yes" else { return signInForm(username: username, status: .ok) }
            return signInForm(username: username, passwordError: "Enter your password.")
        }
        let page = OutcomeContext(visit: visit, base: base(visit), client: client, attempt: attempt, handle: handle,
                                  username: username)
        let throttleKey = "sign-in:\(visit.tenant.id):\(username.lowercased())"
        if let wait = throttle.retryAfter(throttleKey) { return outcome(.rateLimited(retryAfter: wait), page) }
        let found = try await store.user(username: username, tenantID: visit.tenant.id)
        if requirement.password {
            // An unknown username and a wrong password get the same answer (`DirectoryPasswords`).
            switch await passwords?.verify(
                password ?? "", username: username, user: found, tenantID: visit.tenant.id, address: visit.remoteAddress
            ) ?? .unavailable {
            case .verified:
                break
            case .refused:
                return signInForm(username: username, passwordError: "The username or password is not right.")
            case .throttled(let wait):
                return outcome(.rateLimited(retryAfter: wait), page)
            case .unavailable:
                return signInForm(
                    username: username, passwordError: "Your password cannot be checked just now. Try again in a few minutes.",
                    status: .serviceUnavailable)
            }
        }
        guard let user = found, user.status == .active else {
            throttle.recordFailure(throttleKey)
            return outcome(.noDevice, page)
        }
        // A client for some groups only: to anyone who has not given the password, a user
        // outside them looks like an unknown one.
        guard try await admits(user, to: client) else {
            if requirement.password { throw SignInError.notAllowed }
            throttle.recordFailure(throttleKey)
            return outcome(.noDevice, page)
        }
        // A remembered browser that proves it holds its key answers instead of the phone.
        if let offer = try await rememberedOffer(user: user, client: client, requirement: requirement, page: page) {
            return offer
        }
        return try await sendRequest(to: user, client: client, requirement: requirement, page: page, throttleKey: throttleKey)
    }

    /// Sends the sign-in's request to the user's phones, and the page that waits for it.
    private func sendRequest(
        to user: User, client: Client, requirement: SignInRequirement, page: OutcomeContext, throttleKey: String,
        notice: String? = nil
    ) async throws -> PageAnswer {
        let visit = page.visit
        let attempt = page.attempt
        // A browser the user never signed in with may be anyone's: its pushes are limited on
        // their own and leave the user's requests per minute to the user and their clients.
        let known = try await store.knowsBrowser(
            attempt.browserHash, userID: user.id, tenantID: visit.tenant.id,
            since: now().addingTimeInterval(-SignInPushLimits.browserMemory))
        if !known, let wait = pushLimits.admit(
            tenantID: visit.tenant.id, userID: user.id, address: visit.remoteAddress, browserHash: attempt.browserHash) {
            return outcome(.rateLimited(retryAfter: wait), page)
        }
        var approval = try newApproval(for: attempt.request, client: client, user: user, required: requirement.required, visit: visit)
        approval.countsForUser = known
        let started: StartedApproval
        do {
            started = try await approvals.start(approval, tenant: visit.tenant)
        } catch ApprovalStartError.noActiveDevice, ApprovalStartError.userDisabled {
            throttle.recordFailure(throttleKey)
            return outcome(.noDevice, page)
        } catch ApprovalStartError.rateLimited(_, let retryAfter), ApprovalStartError.suppressed(let retryAfter) {
            return outcome(.rateLimited(retryAfter: retryAfter), page)
        } catch ApprovalStartError.riskDenied {
            return outcome(.refused, page)
        } catch ApprovalStartError.riskRequiresPasskey {
            return outcome(.passkeyRequired, page)
        }
        try await store.sent(
            started.transaction.id, to: user.id, passwordVerified: requirement.password, forAttempt: attempt.handleHash)
        return waitingPage(started.transaction, page, notice: notice)
    }

    // MARK: - Remembered browsers

    /// The page on which a remembered browser signs a fresh challenge, when this browser holds
    /// a remembered browser's cookie that may answer this sign-in: the user's, not expired, for
    /// a client that remembers browsers that long, asked for nothing the phone's approval did
    /// not give (`SignInRequirement.accepts`), and no step-up (`isStepUp`). A cookie whose token
    /// was replaced since (it was copied, and used in the other browser) forgets the browser.
    private func rememberedOffer(
        user: User, client: Client, requirement: SignInRequirement, page: OutcomeContext
    ) async throws -> PageAnswer? {
        let visit = page.visit
        let days = visit.tenant.policy.rememberedBrowserDays(for: client)
        guard days > 0, let token = visit.request.cookies[cookies.rememberedName(for: visit.tenant)]?.value,
              !token.isEmpty,
              let browser = try await store.rememberedBrowser(tokenHash: Secrets.hash(token), tenantID: visit.tenant.id)
        else { return nil }
        let date = now()
        guard Secrets.constantTimeEqual(browser.tokenHash, Secrets.hash(token)) else {
            try await store.forgetRemembered(browser, reason: "a replaced cookie was shown again (copied)", at: date)
            return nil
        }
        guard browser.userID == user.id, browser.answers(forDays: days, at: date), requirement.accepts(browser.context),
              try await !isStepUp(page.attempt.request, rememberedAuthTime: browser.authTime, user: user, at: date, visit)
        else { return nil }
        let challenge = Secrets.randomBytes(32).base64URLEncodedString
        try await store.offerRemembered(
            browser.id, challengeHash: Secrets.hash(challenge), to: user.id, passwordVerified: requirement.password,
            forAttempt: page.attempt.handleHash)
        return .page("remembered", RememberedPage(
            tenantName: visit.tenant.displayName, base: page.base, clientName: client.name, attempt: page.handle,
            username: page.username, challenge: challenge, keyName: Self.keyName(visit) + ":" + browser.publicKey.x))
    }

    /// Whether a sign-in asks for more than a remembered browser may give: a fresh
    /// authentication (`prompt=login`), one more recent than the phone's approval that
    /// remembered the browser (`max_age`), or a sign-in of the user while their session in this
    /// browser lives (a session that did not answer the request: it asked for more).
    private func isStepUp(_ request: AuthorizationRequest, rememberedAuthTime: Date, user: User, at date: Date,
                          _ visit: Visit) async throws -> Bool {
        if request.prompt.contains(.login) { return true }
        if let maxAge = request.maxAge, date.timeIntervalSince(rememberedAuthTime) > TimeInterval(maxAge) { return true }
        if let session = try await session(visit), session.userID == user.id,
           session.isLive(at: date, policy: visit.tenant.policy) { return true }
        return false
    }

    /// `POST /authorize/remembered`: the remembered browser's signature over the challenge
    /// completes the sign-in without a push, and the browser's cookie gets a new token. Asked
    /// for the phone instead (`push=yes`: the browser has no key, or the person chose so), or
    /// with a signature that is not the browser's key's (the cookie was copied; the browser is
    /// then forgotten), the request goes to the phone as usual.
    func remembered(_ form: FormParameters, _ visit: Visit) async throws -> PageAnswer {
        let (handle, attempt) = try await openAttempt(form, visit)
        guard let client = try await client(of: attempt, visit), let userID = attempt.userID,
              let browserID = attempt.rememberedBrowserID, let challengeHash = attempt.rememberedChallengeHash,
              attempt.transactionID == nil,
              let user = try await store.user(id: userID, tenantID: visit.tenant.id), user.status == .active else {
            throw SignInError.unusable
        }
        let requirement = SignInRequirement(acrValues: attempt.request.acrValues, client: client, policy: visit.tenant.policy)
        let page = OutcomeContext(visit: visit, base: base(visit), client: client, attempt: attempt, handle: handle,
                                  username: user.username)
        let throttleKey = "sign-in:\(visit.tenant.id):\(user.username.lowercased())"
        let date = now()
        let token = visit.request.cookies[cookies.rememberedName(for: visit.tenant)]?.value ?? ""
        guard form["push"] != "yes", let challenge = form["challenge"], let signature = form["signature"],
              Secrets.constantTimeEqual(Secrets.hash(challenge), challengeHash),
              !token.isEmpty,
              let browser = try await store.rememberedBrowser(tokenHash: Secrets.hash(token), tenantID: visit.tenant.id),
              browser.id == browserID, Secrets.constantTimeEqual(browser.tokenHash, Secrets.hash(token))
        else {
            return try await sendRequest(to: user, client: client, requirement: requirement, page: page, throttleKey: throttleKey)
        }
        guard let bytes = Data(base64URLEncoded: signature), browser.verifies(bytes, challenge: challenge) else {
            try await store.forgetRemembered(browser, reason: "its cookie came with a signature not of its key", at: date)
            return try await sendRequest(
                to: user, client: client, requirement: requirement, page: page, throttleKey: throttleKey,
                notice: "This browser could not prove it is the one you remembered, so it is no longer remembered.")
        }
        let next = Secrets.randomBytes(32).base64URLEncodedString
        guard try await store.useRemembered(browser, nextTokenHash: Secrets.hash(next), at: date) else {
            throw SignInError.completed
        }
        guard let done = try await complete(
            attempt, client: client, user: user, authTime: browser.authTime,
            context: attempt.passwordVerified ? browser.context.afterPassword() : browser.context,
            authenticator: .rememberedBrowser(browser.id), visit)
        else {
            throw SignInError.completed
        }
        return .redirect(
            to: done.location,
            cookies: done.cookies + [cookies.remembered(next, for: visit.tenant, until: browser.expiresAt, now: date)])
    }

    /// Remembers this browser after the phone approved its sign-in, when the person ticked the
    /// box and the page's script made the key: the cookie that names it. Nothing when the
    /// client does not remember browsers or the key is not a P-256 point.
    private func rememberIfAsked(
        _ form: FormParameters, user: User, client: Client, context: AuthenticationContext, authTime: Date, _ visit: Visit
    ) async throws -> Cookie? {
        let days = visit.tenant.policy.rememberedBrowserDays(for: client)
        guard days > 0, form["remember"] == "yes", !context.isRecovery,
              let key = form["remember_key"].flatMap(RememberedBrowser.publicKey(fromJWK:)) else { return nil }
        let date = now()
        let token = Secrets.randomBytes(32).base64URLEncodedString
        let earlier = visit.request.cookies[cookies.rememberedName(for: visit.tenant)]?.value
        let browser = RememberedBrowser(
            id: Identifier.make("rbr", at: date), tenantID: visit.tenant.id, userID: user.id, tokenHash: Secrets.hash(token),
            previousTokenHash: nil, publicKey: key, context: context, authTime: authTime, ipAddress: visit.remoteAddress,
            userAgent: visit.request.headers[.userAgent].map { String($0.prefix(TransactionDetails.Context.maximumUserAgentLength)) },
            createdAt: date, lastUsedAt: date, expiresAt: date.addingTimeInterval(TimeInterval(days) * 86_400))
        try await store.remember(browser, replacing: earlier.flatMap { $0.isEmpty ? nil : Secrets.hash($0) })
        return cookies.remembered(token, for: visit.tenant, until: browser.expiresAt, now: date)
    }

    /// Where the hosted pages' script keeps a tenant's remembered browser keys: each under this
    /// name, `:`, and its public key's `x`.
    static func keyName(_ visit: Visit) -> String {
        "countersign-remembered:" + visit.tenant.id
    }

    /// The approval request of a sign-in: as CIBA's, for the client, with the browser's address
    /// and User-Agent. The client is asked in poll mode whatever it registered: the browser,
    /// not the client, waits for this answer.
    private func newApproval(
        for request: AuthorizationRequest, client: Client, user: User, required: RequiredClass, visit: Visit
    ) throws -> NewApproval {
        var polled = client
        polled.deliveryMode = .poll
        return NewApproval(
            client: polled, user: user, scope: try Scope(request.scope.joined(separator: " "), allowedFor: client),
            acrValues: try request.acrValues.map { try AcrValues($0.joined(separator: " ")) }, bindingMessage: nil,
            context: TransactionDetails.Context.requestedFrom(
                ipAddress: visit.remoteAddress, userAgent: visit.request.headers[.userAgent]),
            lifetime: NewApproval.longestLifetime,
            required: required, clientNotificationToken: nil, authorizationDetails: nil)
    }

    // MARK: - 3. Waiting

    /// The request's state, as soon as it is not pending or after `LongPoll.limit`.
    func wait(_ form: FormParameters, _ visit: Visit) async throws -> PageAnswer {
        let (_, attempt) = try await openAttempt(form, visit)
        let answer = try await LongPoll(events: events).wait(while: AttemptState.pending) { try await state(of: attempt) }
        return try .json(["state": answer.rawValue])
    }

    enum AttemptState: String, Sendable {
        case pending, approved, denied, expired
    }

    private func state(of attempt: SignInAttempt) async throws -> AttemptState {
        guard let id = attempt.transactionID, let transaction = try await store.transaction(id: id) else { return .expired }
        switch transaction.status {
        case .approved: return .approved
        case .denied: return .denied
        case .pending: return transaction.isExpired(at: now()) ? .expired : .pending
        }
    }

    // MARK: - 4. The outcome

    func proceed(_ form: FormParameters, _ visit: Visit) async throws -> PageAnswer {
        let (handle, attempt) = try await openAttempt(form, visit)
        guard let client = try await client(of: attempt, visit),
              let id = attempt.transactionID, let userID = attempt.userID,
              let transaction = try await store.transaction(id: id),
              let user = try await store.user(id: userID, tenantID: visit.tenant.id) else {
            throw SignInError.unusable
        }
        let page = OutcomeContext(visit: visit, base: base(visit), client: client, attempt: attempt, handle: handle,
                                  username: user.username)
        let date = now()
        switch transaction.status {
        case .denied:
            return outcome(.denied, page)
        case .pending:
            return transaction.isExpired(at: date) ? outcome(.expired, page) : waitingPage(transaction, page)
        case .approved:
            guard user.status == .active else { return outcome(.noDevice, page) }
            // A client that began asking for the password after this request was sent.
            guard !client.directoryPassword || attempt.passwordVerified else { throw SignInError.unusable }
            let approved = AuthenticationContext(of: transaction)
            let context = attempt.passwordVerified ? approved.afterPassword() : approved
            let authTime = transaction.decidedAt ?? date
            guard let done = try await complete(
                attempt, client: client, user: user, authTime: authTime, context: context,
                authenticator: transaction.decidedByDevice.map(SessionAuthenticator.device), visit)
            else {
                throw SignInError.completed
            }
            let remembered = try await rememberIfAsked(
                form, user: user, client: client, context: approved, authTime: authTime, visit)
            return .redirect(to: done.location, cookies: done.cookies + (remembered.map { [$0] } ?? []))
        }
    }

    /// Ends a successful sign-in: the attempt is closed (nil when it already was), the
    /// browser's session begins, bound to the `authenticator` that approved it, and the
    /// browser goes on to the client with a code, or to the account page.
    func complete(
        _ attempt: SignInAttempt, client: Client, user: User, authTime: Date, context: AuthenticationContext,
        authenticator: SessionAuthenticator?, _ visit: Visit
    ) async throws -> (location: String, cookies: [Cookie])? {
        let date = now()
        // A recovery sign-in goes to the account page alone, for a short while, and is not the
        // user's own browser for the push limits (`SignInPushLimits`).
        let recovery = context.isRecovery
        guard !recovery || client.id == Self.accountClientID else { throw SignInError.unusable }
        // Whatever the user signed in with, a client for some groups only takes their members,
        // and the floor of the user's groups holds (a passkey that does not reach it, say).
        guard try await admits(user, to: client) else { throw SignInError.notAllowed }
        if !recovery, try await !meetsGroupFloor(user, client: client, signedInWith: context, policy: visit.tenant.policy) {
            throw SignInError.belowGroupFloor
        }
        guard try await store.complete(attemptHash: attempt.handleHash, at: date) else { return nil }
        let token = Secrets.randomBytes(32).base64URLEncodedString
        let policy = visit.tenant.policy
        let maxAge = recovery ? min(policy.sessionMaxAgeSeconds, RecoveryService.sessionLifetime) : policy.sessionMaxAgeSeconds
        let session = BrowserSession(
            id: Identifier.make("ses", at: date), tokenHash: Secrets.hash(token), tenantID: visit.tenant.id,
            userID: user.id, csrfToken: Secrets.randomBytes(24).base64URLEncodedString, authTime: authTime,
            context: context, ipAddress: visit.remoteAddress,
            userAgent: visit.request.headers[.userAgent].map { String($0.prefix(TransactionDetails.Context.maximumUserAgentLength)) },
            createdAt: date, lastSeenAt: date, expiresAt: date.addingTimeInterval(TimeInterval(maxAge)),
            authenticator: authenticator)
        // The browser's earlier session, if any, ends: one browser, one session.
        if let earlier = try await self.session(visit) { try await store.end(earlier, reason: nil, at: date) }
        try await store.create(session, clientID: client.id)
        if !recovery {
            try await store.rememberBrowser(attempt.browserHash, userID: user.id, tenantID: visit.tenant.id, at: date)
        }
        let sessionCookie = cookies.session(token, for: visit.tenant, maxAge: maxAge)
        if client.id == Self.accountClientID {
            return (attempt.request.redirectURI, [sessionCookie])
        }
        let redirect = try await interaction.resume(
            attempt.request, issuer: visit.issuer, userID: user.id, authTime: authTime, context: context, sessionID: session.id)
        return (redirect.location, [sessionCookie])
    }

    // MARK: - Sign-out

    /// `GET|POST /logout` (OpenID Connect RP-Initiated Logout 1.0): ends the browser's session,
    /// then goes to `post_logout_redirect_uri` with `state` when the client (`client_id`, or the
    /// audience of `id_token_hint`) registered it, and otherwise shows that the user is signed
    /// out.
    ///
    /// A live session ends only when the person asked for it (§2: the OP asks the End-User
    /// whether to log out): a form post carrying the session's CSRF token (the account page's
    /// button, or the confirmation page this shows), or an `id_token_hint` this tenant signed
    /// for the session's user, which proves the relying party knew who was signed in. Any
    /// other request, a link on another site or a cross-site post among them, gets the
    /// confirmation page and ends nothing. The hint's expiry does not matter (§2: an expired ID
    /// token is a valid hint).
    func logout(_ parameters: FormParameters, posted: Bool, _ visit: Visit) async throws -> PageAnswer {
        let date = now()
        if let session = try await session(visit), session.revokedAt == nil {
            if session.isLive(at: date, policy: visit.tenant.policy) {
                let confirmed = posted && parameters["csrf"].map {
                    Secrets.constantTimeEqual(Data($0.utf8), Data(session.csrfToken.utf8))
                } == true
                let hinted = confirmed ? false : try await hintNames(session, parameters, visit)
                guard confirmed || hinted else {
                    let user = try await store.user(id: session.userID, tenantID: visit.tenant.id)
                    return .page("sign-out", SignOutPage(
                        tenantName: visit.tenant.displayName, base: base(visit), csrf: session.csrfToken,
                        username: user?.username,
                        fields: Self.logoutParameters.compactMap { name in
                            parameters[name].map { SignOutPage.Field(name: name, value: $0) }
                        }))
                }
            }
            try await store.end(session, reason: nil, at: date)
        }
        let clearing = [cookies.endSession(for: visit.tenant)]
        if let target = parameters["post_logout_redirect_uri"] {
            let clientID = parameters["client_id"] ?? parameters["id_token_hint"].flatMap(Self.audience(ofIDToken:))
            guard let clientID, let client = try await interaction.endpoint.store.client(id: clientID, tenantID: visit.tenant.id),
                  client.postLogoutRedirectURIs.contains(target) else {
                throw WireError(
                    .badRequest, code: OAuthError.Code.invalidRequest.rawValue,
                    description: "You are signed out, but the application asked to return to an address it did not register.",
                    headers: PageAnswer.setCookie(clearing), heading: "Signed out")
            }
            let query = parameters["state"].map { "state=" + AuthorizationRedirect.encoded($0) }
            return .redirect(to: target + (query.map { (target.contains("?") ? "&" : "?") + $0 } ?? ""), cookies: clearing)
        }
        return .page(
            "signed-out",
            SignedOutPage(tenantName: visit.tenant.displayName, base: base(visit), message: "You can close this window."),
            cookies: clearing)
    }

    /// The parameters of a logout request that its confirmation carries on.
    static let logoutParameters = ["id_token_hint", "client_id", "post_logout_redirect_uri", "state"]

    /// Whether the request's `id_token_hint` is an ID token of this tenant, for the client it
    /// names (its `aud`, or `client_id`), whose subject is the session's user.
    private func hintNames(_ session: BrowserSession, _ parameters: FormParameters, _ visit: Visit) async throws -> Bool {
        guard let token = parameters["id_token_hint"],
              let clientID = parameters["client_id"] ?? Self.audience(ofIDToken: token) else { return false }
        let keys = try await interaction.signingKeys.keySet(for: visit.tenant)
        guard let hint = try? await IDTokenHint(token, keys: keys, issuer: visit.issuer.identifier, clientID: clientID) else {
            return false
        }
        return hint.subject == session.userID
    }

    /// The `aud` of an ID token, read without checking it (see `logout`).
    static func audience(ofIDToken token: String) -> String? {
        guard let jws = try? CompactJWS(parsing: token), let claims = try? JSONValue(parsing: jws.payload) else { return nil }
        return claims["aud"]?.stringValue
    }

    // MARK: - Parts

    /// Whether `user` may sign in to `client`: every user may, unless the client names groups
    /// (`allowed_groups`), which the user must be in one of.
    func admits(_ user: User, to client: Client) async throws -> Bool {
        guard !client.allowedGroups.isEmpty else { return true }
        return !(try await store.groupIDs(userID: user.id)).isDisjoint(with: client.allowedGroups)
    }

    /// Whether a sign-in of `user` with `context` meets the floor of the user's groups
    /// (`group_minimum_acr`): a passkey's where a passkey reaches the floor's class, a phone's
    /// where its class is as strong. A live session begun before the floor was set may not.
    func meetsGroupFloor(_ user: User, client: Client, signedInWith context: AuthenticationContext,
                         policy: AuthenticationPolicy) async throws -> Bool {
        guard !policy.groupMinimums.isEmpty,
              let floor = policy.groupFloor(for: try await store.groupIDs(userID: user.id)) else { return true }
        if context.acr == PasskeyClass.urn || context.amr.contains("hwk") || context.amr.contains("swk") {
            return policy.passkeyReaches(floor, client: client)
        }
        return AuthenticationClass(urn: context.acr)?.satisfies(floor) ?? false
    }

    /// The browser's session, if it has one in this tenant.
    func session(_ visit: Visit) async throws -> BrowserSession? {
        guard let token = visit.request.cookies[cookies.sessionName(for: visit.tenant)]?.value, !token.isEmpty else {
            return nil
        }
        return try await store.session(tokenHash: Secrets.hash(token), tenantID: visit.tenant.id)
    }

    /// The browser's session in this tenant if it is live, touched as used now. A session
    /// whose user is no longer active, or whose phone or passkey was removed, is ended here,
    /// for good: enabling the user again does not bring it back.
    func liveSession(_ visit: Visit, at date: Date) async throws -> BrowserSession? {
        guard var session = try await session(visit), session.isLive(at: date, policy: visit.tenant.policy) else { return nil }
        guard try await store.stands(session) else {
            try await store.end(session, reason: "the user was disabled or what they signed in with was removed", at: date)
            return nil
        }
        try await store.touch(sessionID: session.id, at: date)
        session.lastSeenAt = date
        return session
    }

    /// The attempt the form's handle names, if it began in this browser and is still open.
    func openAttempt(_ form: FormParameters, _ visit: Visit) async throws -> (String, SignInAttempt) {
        try await openAttempt(handle: form["attempt"], visit)
    }

    /// The attempt `handle` names, if it began in this browser and is still open.
    func openAttempt(handle: String?, _ visit: Visit) async throws -> (String, SignInAttempt) {
        guard let handle,
              let attempt = try await store.attempt(handleHash: Secrets.hash(handle), tenantID: visit.tenant.id) else {
            throw SignInError.unknownAttempt
        }
        guard let browser = visit.request.cookies[cookies.browserName]?.value,
              Secrets.constantTimeEqual(Secrets.hash(browser), attempt.browserHash) else {
            throw SignInError.otherBrowser
        }
        guard attempt.completedAt == nil else { throw SignInError.completed }
        guard now() < attempt.expiresAt else { throw SignInError.expired }
        return (handle, attempt)
    }

    /// The browser's mark, and the cookie to set when it had none.
    private func browserMark(_ request: Request) -> (String, Cookie?) {
        if let value = request.cookies[cookies.browserName]?.value, value.utf8.count == 43 { return (value, nil) }
        let value = Secrets.randomBytes(32).base64URLEncodedString
        return (value, cookies.browser(value))
    }

    /// The tenant's base path: `""` for the default tenant, `/t/<slug>` for the others.
    func base(_ visit: Visit) -> String {
        visit.issuer.basePath
    }

    private func waitingPage(_ transaction: ApprovalTransaction, _ page: OutcomeContext, notice: String? = nil) -> PageAnswer {
        let days = page.visit.tenant.policy.rememberedBrowserDays(for: page.client)
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withFullTime, .withColonSeparatorInTime]
        formatter.timeZone = TimeZone(identifier: "UTC")
        let detail = try? JSONValue(parsing: Data(transaction.details.utf8))
        let origin = [detail?["context"]?["ip_address"]?.stringValue, detail?["context"]?["user_agent"]?.stringValue]
            .compactMap { $0 }.joined(separator: ", ")
        return .page("waiting", WaitingPage(
            tenantName: page.visit.tenant.displayName, base: page.base, clientName: page.client.name, attempt: page.handle,
            username: page.username, matchNumber: transaction.matchNumber.map(String.init),
            expiresAt: String(formatter.string(from: transaction.expiresAt).prefix(8)),
            origin: origin.isEmpty ? "unknown" : origin, rememberDays: days > 0 ? days : nil, keyName: Self.keyName(page.visit),
            notice: notice))
    }

    /// What the outcome pages need to know of the sign-in.
    struct OutcomeContext {
        let visit: Visit
        let base: String
        let client: Client
        let attempt: SignInAttempt
        let handle: String
        let username: String
    }

    enum Outcome {
        case denied, expired, noDevice
        case rateLimited(retryAfter: Int)
        /// A risk rule refused to send the request. Its reason is not shown: whoever types a
        /// username would learn about that user (their denials, their networks).
        case refused
        /// A risk rule asks for a passkey: the user starts over and chooses one.
        case passkeyRequired
    }

    private func outcome(_ outcome: Outcome, _ page: OutcomeContext) -> PageAnswer {
        let back = AuthorizationRedirect(
            redirectURI: page.attempt.request.redirectURI, state: page.attempt.request.state,
            issuer: page.visit.issuer.identifier, outcome: .error(.init(.accessDenied, "the user did not sign in"))).location
        let (kind, heading, message, retry, status): (OutcomePage.Kind, String, String, Bool, HTTPResponse.Status)
        switch outcome {
        case .denied:
            (kind, heading, message, retry, status) = (.denied, "Sign-in denied",
                "The request was denied on your phone. If that was not you, nothing was signed in.", false, .ok)
        case .expired:
            (kind, heading, message, retry, status) = (.expired, "The request expired",
                "Nobody answered the request on the phone in time.", true, .ok)
        case .noDevice:
            (kind, heading, message, retry, status) = (.noDevice, "No phone to ask",
                "We could not send a request for this username. Check the username, or enroll a phone with the invitation you were sent.",
                false, .ok)
        case .rateLimited(let wait):
            (kind, heading, message, retry, status) = (.rateLimited, "Too many requests",
                "Too many sign-in requests were sent for this username. Try again in \(Self.minutes(wait)).", false,
                .tooManyRequests)
        case .refused:
            (kind, heading, message, retry, status) = (.refused, "Sign-in refused",
                "This sign-in was refused by your organisation's risk rules. Ask your administrator if you need it.",
                false, .forbidden)
        case .passkeyRequired:
            (kind, heading, message, retry, status) = (.passkeyRequired, "Use a passkey",
                "Your organisation asks for a passkey for this sign-in; a request to your phone cannot be used. Start again and choose Sign in with a passkey.",
                false, .forbidden)
        }
        var shown = OutcomePage(
            title: heading, tenantName: page.visit.tenant.displayName, base: page.base, kind: kind.rawValue, heading: heading,
            message: message, clientName: page.client.name, retry: retry, attempt: page.handle, username: page.username,
            returnURL: back)
        shown.anotherUsername = kind == .noDevice
        shown.startOverForPasskey = kind == .passkeyRequired
        return .page("outcome", shown, status: status)
    }

    static func minutes(_ seconds: Int) -> String {
        seconds < 60 ? "\(seconds) seconds" : "\((seconds + 59) / 60) minutes"
    }
}

/// A sign-in page post that names no usable attempt: an error page (`ErrorSurface.page`), or
/// a JSON error to the page's script (`ErrorSurface.script`).
enum SignInError: WireFailure, Sendable, Equatable {
    case unknownAttempt, otherBrowser, completed, expired
    /// The attempt's client, request or user is gone.
    case unusable
    /// The user is in none of the client's `allowed_groups`.
    case notAllowed
    /// What the user signed in with does not reach the floor of their groups (`group_minimum_acr`).
    case belowGroupFloor

    var wireError: WireError {
        self == .notAllowed || self == .belowGroupFloor
            ? WireError(.forbidden, code: OAuthError.Code.accessDenied.rawValue, description: message, heading: "Not allowed")
            : WireError(.badRequest, code: OAuthError.Code.invalidRequest.rawValue, description: message, heading: Self.heading)
    }

    static let heading = "This sign-in cannot continue"

    var message: String {
        switch self {
        case .unknownAttempt: "This sign-in is unknown. Go back to the application and start again."
        case .otherBrowser: "This sign-in began in another browser, or this browser's cookies were cleared. Start again from the application."
        case .completed: "This sign-in was already completed. Go back to the application."
        case .expired: "This sign-in took too long and has expired. Go back to the application and start again."
        case .unusable: "This sign-in cannot continue. Go back to the application and start again."
        case .notAllowed: "Your account may not sign in to this application. Ask your administrator if you need it."
        case .belowGroupFloor: "Your account needs a stronger sign-in than this one. Start again and approve on your phone."
        }
    }
}
