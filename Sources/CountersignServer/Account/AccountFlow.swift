import CountersignCore
import Foundation
import HTTPTypes

/// The account pages below each tenant's base, for a person signed in through the hosted
/// sign-in (`SignInFlow.beginAccountSignIn`):
///
/// 1. `show` (`GET /account`): their name, their phones, what happened recently, and a form for
///    each change; without a live session, the sign-in that leads back here.
/// 2. `rename` (`POST /account/devices/{id}/rename`): by the device API's rules (`DeviceName`).
/// 3. `remove` (`POST /account/devices/{id}/remove`): the only phone only after `confirm=yes`;
///    only within ten minutes of signing in (`freshSignIn`), or after signing in again.
/// 4. `startEnrollment` (`POST /account/enroll`) and `waitForEnrollment`
///    (`POST /account/enroll/wait`): a fresh ticket's QR code, then the ticket's state; only
///    within ten minutes of signing in (`freshSignIn`), or after signing in again.
/// 5. `reportNotRequested` (`POST /account/approvals/{id}/not-me`): "This wasn't me" on an
///    approval, with the reaction of a device's `not_requested` answer (`NotRequestedReport`).
/// 6. `createRecoveryCodes` (`POST /account/recovery-codes`): a new set of recovery codes,
///    shown once; only within ten minutes of a sign-in with a phone or a passkey.
///
/// A session opened with a recovery code or an access pass (`RecoveryFlow`) sees a page that
/// offers only a new phone or a passkey; every other form refuses it (`AccountError.recoveryOnly`).
///
/// Every form carries the session's CSRF token in `csrf`; a post without the right one changes
/// nothing (`AccountError.forgedForm`). A post without a live session goes back to `/account`,
/// which signs the person in again. Only the user's own devices, requests and tickets in this
/// tenant are found; any other id is not found.
struct AccountFlow: Sendable {
    let signIn: SignInFlow
    let store: any AccountStore
    let passkeys: any PasskeyStore
    let enrollment: EnrollmentService
    let recovery: RecoveryService
    let rememberedBrowsers: RememberedBrowsers
    let now: @Sendable () -> Date

    typealias Visit = SignInFlow.Visit

    /// The live session of a request and its active user.
    struct SignedIn: Sendable {
        let session: BrowserSession
        let user: User
    }

    // MARK: - 1. The page

    func show(_ visit: Visit) async throws -> PageAnswer {
        guard let signedIn = try await signedIn(visit) else { return try await signIn.beginAccountSignIn(visit) }
        if signedIn.session.context.isRecovery { return try await recoveryPage(signedIn, visit) }
        return try await accountPage(signedIn, visit)
    }

    /// The page of a session opened by recovery: a new phone or a passkey, and the way out.
    func recoveryPage(_ signedIn: SignedIn, _ visit: Visit) async throws -> PageAnswer {
        let devices = try await store.devices(userID: signedIn.user.id)
        return .page("account-recovery", RecoveryAccountPage(
            tenantName: visit.tenant.displayName, base: signIn.base(visit), csrf: signedIn.session.csrfToken,
            username: signedIn.user.username,
            how: signedIn.session.context.acr == AuthenticationContext.recoveryCodeClass
                ? "a recovery code" : "a temporary access pass",
            phones: devices.count, passkeys: visit.tenant.policy.passkeys.enabled,
            endsAt: AccountTime.text(signedIn.session.expiresAt)))
    }

    /// The account page; with `refusal`, the rename it refused shown beside its field.
    func accountPage(_ signedIn: SignedIn, _ visit: Visit, refusal: RenameRefusal? = nil,
                             status: HTTPResponse.Status = .ok) async throws -> PageAnswer {
        let user = signedIn.user
        let devices = try await store.devices(userID: user.id)
        let cards = devices.map { device in
            let refused = refusal?.deviceID == device.id ? refusal : nil
            return DeviceCard(device, typed: refused?.typed, nameError: refused?.message)
        }
        let activity = try await AccountActivity(store: store).entries(
            userID: user.id, tenantID: visit.tenant.id, accountClient: signIn.accountClient(visit))
        let paused = user.requestsSuppressedUntil.flatMap { $0 > now() ? AccountTime.text($0) : nil }
        let passkeySection: PasskeySection? = if visit.tenant.policy.passkeys.enabled {
            PasskeySection(items: try await passkeys.passkeys(userID: user.id, tenantID: visit.tenant.id).map { passkey in
                let refused = refusal?.deviceID == passkey.id ? refusal : nil
                return PasskeyCard(passkey, typed: refused?.typed, nameError: refused?.message)
            })
        } else {
            nil
        }
        let codes = try await recovery.store.codeSet(userID: user.id, tenantID: visit.tenant.id)
        let thisBrowser = (visit.request.cookies[signIn.cookies.rememberedName(for: visit.tenant)]?.value).map { Secrets.hash($0) }
        let remembered = try await rememberedBrowsers.list(userID: user.id, tenantID: visit.tenant.id).map {
            RememberedBrowserCard($0, isThisBrowser: thisBrowser == $0.tokenHash)
        }
        var page = AccountPage(
            tenantName: visit.tenant.displayName, base: signIn.base(visit), csrf: signedIn.session.csrfToken,
            username: user.username, displayName: user.displayName, devices: cards, activity: activity,
            requestsPausedUntil: paused, passkeys: passkeySection, recoveryCodes: RecoveryCodesSection(codes))
        page.rememberedBrowsers = remembered.isEmpty ? nil : RememberedBrowserSection(items: remembered)
        return .page("account", page, status: status)
    }

    // MARK: - Forgetting a remembered browser

    /// Forgets one of the user's remembered browsers; this browser's cookie goes when it is the
    /// one forgotten. A recovery session may do it too: it takes nothing away from the user.
    func forgetBrowser(id: String, _ form: FormParameters, _ visit: Visit) async throws -> PageAnswer {
        guard let signedIn = try await authorized(form, visit) else { return backToAccount(visit) }
        guard try await rememberedBrowsers.forget(
            id: id, userID: signedIn.user.id, tenantID: visit.tenant.id, actor: "user:\(signedIn.user.id)") else {
            throw AccountError.unknownRememberedBrowser
        }
        let token = visit.request.cookies[signIn.cookies.rememberedName(for: visit.tenant)]?.value
        let forgotten = try await signIn.store.rememberedBrowser(
            tokenHash: Secrets.hash(token ?? ""), tenantID: visit.tenant.id) == nil && token?.isEmpty == false
        return .redirect(to: signIn.base(visit) + "/account",
                         cookies: forgotten ? [signIn.cookies.forgetRemembered(for: visit.tenant)] : [])
    }

    // MARK: - 2. Renaming a phone

    func rename(deviceID: String, _ form: FormParameters, _ visit: Visit) async throws -> PageAnswer {
        guard let signedIn = try await fullyAuthorized(form, visit) else { return backToAccount(visit) }
        let device = try await ownDevice(deviceID, of: signedIn, visit)
        let typed = form["name"] ?? ""
        guard let name = DeviceName.validate(typed) else {
            return try await accountPage(
                signedIn, visit, refusal: RenameRefusal(deviceID: device.id, typed: typed), status: .badRequest)
        }
        try await store.rename(deviceID: device.id, to: name, by: signedIn.user.id, tenantID: visit.tenant.id, at: now())
        return backToAccount(visit)
    }

    // MARK: - 3. Removing a phone

    func remove(deviceID: String, _ form: FormParameters, _ visit: Visit) async throws -> PageAnswer {
        guard let signedIn = try await fullyAuthorized(form, visit) else { return backToAccount(visit) }
        let device = try await ownDevice(deviceID, of: signedIn, visit)
        guard isFresh(signedIn) else { return try await signIn.beginAccountSignIn(visit, loginHint: signedIn.user.username) }
        let others = try await store.devices(userID: signedIn.user.id).filter { $0.id != device.id }
        if others.isEmpty, form["confirm"] != "yes" {
            return .page("account-remove", RemoveConfirmationPage(
                tenantName: visit.tenant.displayName, base: signIn.base(visit), csrf: signedIn.session.csrfToken,
                deviceID: device.id, deviceName: device.name))
        }
        guard try await store.remove(deviceID: device.id, by: signedIn.user.id, tenantID: visit.tenant.id, at: now()) else {
            throw AccountError.unknownDevice
        }
        return backToAccount(visit)
    }

    // MARK: - 4. Enrolling another phone

    /// Adding a phone gives whoever holds it sign-in for good, so it asks for a sign-in of the
    /// last ten minutes: a session left open on a shared computer cannot add one.
    /// Removing one takes away the user's way in (ASVS 3.7.1), so it asks the same.
    static let freshSignIn: TimeInterval = 600

    /// Whether the session's sign-in is recent enough to add or remove a phone or a passkey.
    func isFresh(_ signedIn: SignedIn) -> Bool {
        now().timeIntervalSince(signedIn.session.authTime) <= Self.freshSignIn
    }

    func startEnrollment(_ form: FormParameters, _ visit: Visit) async throws -> PageAnswer {
        guard let signedIn = try await authorized(form, visit) else { return backToAccount(visit) }
        guard isFresh(signedIn) else {
            // A new sign-in, which replaces the session and comes back to the account page.
            return try await signIn.beginAccountSignIn(visit, loginHint: signedIn.user.username)
        }
        let issued = try await enrollment.issueTicket(
            for: signedIn.user, tenant: visit.tenant, lifetime: nil, actor: "user:\(signedIn.user.id)")
        let uri = issued.uri.description
        let png = try QRCode(encoding: uri).png(moduleSize: 6)
        return .page("account-enroll", EnrollPage(
            tenantName: visit.tenant.displayName, base: signIn.base(visit), csrf: signedIn.session.csrfToken,
            ticket: issued.ticket.id, qrImage: "data:image/png;base64," + png.base64EncodedString(), enrollmentURI: uri,
            expiresAt: AccountTime.text(issued.ticket.expiresAt)))
    }

    /// What became of an enrollment ticket the page shows.
    typealias EnrollmentState = EnrollmentService.TicketState

    /// The ticket's state, as soon as it is not pending or after `LongPoll.limit`. Nil without a
    /// live session.
    func waitForEnrollment(_ form: FormParameters, _ visit: Visit) async throws -> EnrollmentState? {
        guard let signedIn = try await authorized(form, visit) else { return nil }
        guard let id = form["ticket"], let ticket = try await store.ticket(id: id), ticket.userID == signedIn.user.id,
              ticket.tenantID == visit.tenant.id else {
            throw AccountError.unknownTicket
        }
        return try await LongPoll(events: signIn.events).wait(while: EnrollmentState.pending) {
            guard let current = try await store.ticket(id: ticket.id) else { return .expired }
            return EnrollmentState(of: current, at: now())
        }
    }

    // MARK: - 5. "This wasn't me"

    func reportNotRequested(approvalID: String, _ form: FormParameters, _ visit: Visit) async throws -> PageAnswer {
        guard let signedIn = try await fullyAuthorized(form, visit) else { return backToAccount(visit) }
        guard let request = try await store.approval(id: approvalID), request.userID == signedIn.user.id,
              request.tenantID == visit.tenant.id else {
            throw AccountError.unknownApproval
        }
        guard request.status == .approved else { throw AccountError.notApproved }
        let date = now()
        let policy = visit.tenant.policy
        let reported = try await store.reportNotRequested(request, policy: policy, at: date)
        let paused = policy.notRequestedSuppressionSeconds > 0
            ? " New requests for you are refused until "
                + AccountTime.text(date.addingTimeInterval(TimeInterval(policy.notRequestedSuppressionSeconds))) + "."
            : ""
        return .page("account-reported", ReportedPage(
            tenantName: visit.tenant.displayName, base: signIn.base(visit),
            heading: reported ? "Thank you for reporting it" : "Already reported",
            message: reported
                ? "We recorded that you did not make this request.\(paused) Someone else may be trying to sign in as you: tell your administrator."
                : "This request was reported as not requested before; nothing more was recorded."))
    }

    // MARK: - 6. Recovery codes

    /// A new set replaces the old one and is shown once. It needs a sign-in of the last ten
    /// minutes with a phone or a passkey: whoever holds the codes can enroll a phone.
    func createRecoveryCodes(_ form: FormParameters, _ visit: Visit) async throws -> PageAnswer {
        guard let signedIn = try await fullyAuthorized(form, visit) else { return backToAccount(visit) }
        guard isFresh(signedIn) else { return try await signIn.beginAccountSignIn(visit, loginHint: signedIn.user.username) }
        switch signedIn.session.authenticator {
        case .device?, .passkey?: break
        default: throw AccountError.codesNeedDevice
        }
        let codes = try await recovery.createCodes(for: signedIn.user, actor: "user:\(signedIn.user.id)").map(\.formatted)
        let text = "Recovery codes for \(signedIn.user.username) at \(visit.tenant.displayName)\n"
            + "Made \(AccountTime.text(now())). Each code works once; a new set replaces these.\n\n"
            + codes.joined(separator: "\n") + "\n"
        return .page("account-recovery-codes", RecoveryCodesPage(
            tenantName: visit.tenant.displayName, base: signIn.base(visit), codes: codes,
            download: "data:text/plain;charset=utf-8," + (text.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? ""),
            fileName: "recovery-codes-\(visit.tenant.slug).txt"))
    }

    // MARK: - Parts

    /// The live session and its active user, if the browser has them in this tenant.
    func signedIn(_ visit: Visit) async throws -> SignedIn? {
        guard let session = try await signIn.liveSession(visit, at: now()),
              let user = try await store.user(id: session.userID, tenantID: visit.tenant.id), user.status == .active else {
            return nil
        }
        return SignedIn(session: session, user: user)
    }

    /// The signed-in user of a form post whose `csrf` is the session's token; nil without a live
    /// session.
    func authorized(_ form: FormParameters, _ visit: Visit) async throws -> SignedIn? {
        try await authorized(csrf: form["csrf"], visit)
    }

    /// The signed-in user of a post whose CSRF token is the session's; nil without a live
    /// session.
    func authorized(csrf token: String?, _ visit: Visit) async throws -> SignedIn? {
        guard let signedIn = try await signedIn(visit) else { return nil }
        guard let token,
              Secrets.constantTimeEqual(Data(token.utf8), Data(signedIn.session.csrfToken.utf8)) else {
            throw AccountError.forgedForm
        }
        return signedIn
    }

    /// As `authorized`, for a change a recovery session may not make.
    func fullyAuthorized(_ form: FormParameters, _ visit: Visit) async throws -> SignedIn? {
        guard let signedIn = try await authorized(form, visit) else { return nil }
        guard !signedIn.session.context.isRecovery else { throw AccountError.recoveryOnly }
        return signedIn
    }

    /// The user's active device in this tenant with this id.
    private func ownDevice(_ id: String, of signedIn: SignedIn, _ visit: Visit) async throws -> Device {
        guard let device = try await store.device(id: id), device.userID == signedIn.user.id,
              device.tenantID == visit.tenant.id, device.status == .active else {
            throw AccountError.unknownDevice
        }
        return device
    }

    func backToAccount(_ visit: Visit) -> PageAnswer {
        .redirect(to: signIn.base(visit) + "/account")
    }
}

/// A name the rename form refused, said as precisely as `DeviceName` decides it.
struct RenameRefusal: Sendable {
    /// The phone or passkey renamed.
    let deviceID: String
    let typed: String
    var thing = "phone"

    var message: String {
        let name = typed.trimmingCharacters(in: .whitespacesAndNewlines)
        if name.isEmpty { return "Enter a name for the \(thing)." }
        let length = name.unicodeScalars.count
        if length > DeviceName.maximumLength {
            return "A name is at most \(DeviceName.maximumLength) characters; this one has \(length)."
        }
        if name.unicodeScalars.contains(where: { NameCharacters.isRefused($0) && $0.properties.generalCategory == .format }) {
            return "A name cannot contain invisible formatting characters, such as those that turn text right to left."
        }
        return "A name cannot contain control characters such as tabs or line breaks."
    }
}
