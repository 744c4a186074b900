import CountersignCore
import CountersignWebAuthn
import Foundation

/// A passkey sign-in that verified: who, with which passkey, and what it proves.
struct PasskeySignIn: Sendable {
    let userID: String
    let passkey: Passkey
    let context: AuthenticationContext
}

/// The two WebAuthn ceremonies as Countersign runs them: options with a fresh single-use
/// challenge bound to the browser that asked, then verification of the response against what
/// the options promised, then the record. A ceremony that fails stores nothing, and its
/// challenge is spent either way.
struct PasskeyService: Sendable {
    static let challengeLength = 32
    /// Passkeys one user may hold; `excludeCredentials` lists them all.
    static let maximumPerUser = 25
    static let maximumNameLength = 64

    let store: any PasskeyStore
    let origin: PublicOrigin
    /// The FIDO metadata registrations are checked against.
    let metadata: AuthenticatorMetadataService
    let metrics: ServerMetrics
    let now: @Sendable () -> Date
    /// Spent and expired ceremonies are deleted at most once an hour per node, when one is issued.
    let housekeeping = PeriodicSchedule(every: 3600)

    /// The tenant's relying party, or `.disabled` when the tenant switched passkeys off.
    func relyingParty(for tenant: Tenant) throws(WebAuthnError) -> RelyingParty {
        let settings = tenant.policy.passkeys
        guard settings.enabled else { throw .disabled }
        return settings.relyingParty(tenantName: tenant.displayName, publicOrigin: origin.base)
    }

    // MARK: - Registration

    /// The relying party for a registration of `userID`: the tenant's, asking for user
    /// verification and (where the tenant asks for none) direct attestation when the rules of the
    /// user's groups require them.
    func registration(for tenant: Tenant, userID: String) async throws -> (RelyingParty, PasskeyRules) {
        var relyingParty = try relyingParty(for: tenant)
        let settings = tenant.policy.passkeys
        let rules = settings.rules(for: settings.groupRules.isEmpty ? [] : try await store.groupIDs(userID: userID))
        if rules.userVerificationRequired { relyingParty.userVerification = .required }
        if rules.attestationRequired, relyingParty.attestation == .none { relyingParty.attestation = .direct }
        return (relyingParty, rules)
    }

    /// Creation options for `user` (§5.4): a discoverable credential (so that it signs in
    /// without a username), user verification as the tenant and the user's groups say, ES256,
    /// EdDSA and RS256, every passkey the user has in `excludeCredentials`.
    func registrationOptions(for user: User, tenant: Tenant, binding: String, name: String? = nil) async throws
        -> (ceremony: String, options: PublicKeyCredentialCreationOptionsJSON)
    {
        let (relyingParty, _) = try await registration(for: tenant, userID: user.id)
        let date = now()
        let handle = try await store.userHandle(userID: user.id, tenantID: tenant.id, at: date)
        let existing = try await store.passkeys(userID: user.id, tenantID: tenant.id)
        guard existing.count < Self.maximumPerUser else { throw PasskeyError.tooMany }
        let challenge = Secrets.randomBytes(Self.challengeLength)
        let options = PublicKeyCredentialCreationOptionsJSON(
            rp: RelyingPartyEntity(id: relyingParty.id, name: relyingParty.name),
            user: UserEntity(id: Base64URLBytes(handle), name: user.username, displayName: user.displayName ?? user.username),
            challenge: Base64URLBytes(challenge), pubKeyCredParams: relyingParty.algorithms.map(CredentialParameters.init(alg:)),
            timeout: Self.milliseconds(relyingParty.timeout),
            excludeCredentials: existing.map { CredentialDescriptor(id: Array($0.credentialID), transports: $0.transports.nilIfEmpty) },
            authenticatorSelection: AuthenticatorSelection(
                residentKey: "required", requireResidentKey: true, userVerification: relyingParty.userVerification.rawValue),
            attestation: relyingParty.attestation.rawValue)
        let ceremony = try await issue(
            .registration, tenant: tenant, binding: binding, userID: user.id, challenge: challenge, relyingParty: relyingParty,
            expectation: .init(
                userVerification: relyingParty.userVerification, algorithms: relyingParty.algorithms.map(\.rawValue), name: name))
        return (ceremony, options)
    }

    /// Verifies a registration response for the ceremony `ceremony`, holds it to the FIDO
    /// metadata and the user's passkey rules, and stores the passkey.
    func register(
        ceremony handle: String, response: RegistrationResponseJSON, tenant: Tenant, binding: String, actor: String
    ) async throws -> Passkey {
        _ = try relyingParty(for: tenant)
        let date = now()
        guard let ceremony = try await store.takeCeremony(
            handleHash: Secrets.hash(handle), tenantID: tenant.id, binding: binding, at: date),
            ceremony.purpose == .registration, let userID = ceremony.userID
        else { throw WebAuthnError.challengeNotFound }
        let (relyingParty, rules) = try await registration(for: tenant, userID: userID)
        let expectation = RegistrationCeremony.Expectation(
            challenge: Array(ceremony.challenge),
            algorithms: (ceremony.expectation.algorithms ?? []).compactMap(COSEAlgorithm.init(rawValue:)),
            userVerification: ceremony.expectation.userVerification)
        let snapshot = try await metadata.snapshot()
        let registered: RegisteredCredential
        do {
            registered = try await RegistrationCeremony(relyingParty: relyingParty, metadata: snapshot)
                .verify(response, expecting: expectation, at: date)
        } catch {
            if case .authenticatorStatusRefused = error { metrics.passkeyRegistrationRefused("metadata_status") }
            throw error
        }
        let findings = rules.findings(
            aaguid: MetadataDate.aaguidString(registered.aaguid), backupEligible: registered.backupEligible,
            attestationTrusted: registered.attestationTrusted, userVerified: registered.userVerified,
            metadata: registered.metadata, at: date)
        if let finding = findings.first {
            metrics.passkeyRegistrationRefused("passkey_rules")
            throw WebAuthnError.authenticatorNotAllowed(finding)
        }
        guard try await store.passkeys(userID: userID, tenantID: tenant.id).count < Self.maximumPerUser else {
            throw PasskeyError.tooMany
        }
        let passkey = Passkey(
            id: Identifier.make("pk", at: date), tenantID: tenant.id, userID: userID,
            credentialID: Data(registered.credentialID), publicKey: Data(registered.publicKeyBytes),
            algorithm: registered.publicKey.algorithm.rawValue, signCount: Int64(registered.signCount),
            uvInitialized: registered.userVerified, backupEligible: registered.backupEligible,
            backupState: registered.backupState, transports: registered.transports, aaguid: Data(registered.aaguid),
            attestationFormat: registered.attestation.format, attestationKind: registered.attestation.kind.rawValue,
            attestationTrusted: registered.attestationTrusted, attestationObject: Data(registered.attestationObject),
            clientDataJSON: Data(registered.clientDataJSON),
            name: ceremony.expectation.name ?? Self.defaultName(at: date), createdAt: date)
        // §7.1 step 28: the unique index refuses a credential ID registered anywhere.
        guard try await store.insert(passkey, actor: actor) else { throw WebAuthnError.credentialAlreadyRegistered }
        return passkey
    }

    // MARK: - Authentication

    /// Request options (§5.5): for a user identified beforehand, their passkeys in
    /// `allowCredentials`; otherwise none, so that the browser offers discoverable ones.
    func authenticationOptions(
        tenant: Tenant, binding: String, user: User? = nil, attempt: String? = nil,
        userVerification: UserVerificationRequirement? = nil
    ) async throws -> (ceremony: String, options: PublicKeyCredentialRequestOptionsJSON) {
        var relyingParty = try relyingParty(for: tenant)
        if let userVerification { relyingParty.userVerification = userVerification }
        let allowed = if let user { try await store.passkeys(userID: user.id, tenantID: tenant.id) } else { [Passkey]() }
        let challenge = Secrets.randomBytes(Self.challengeLength)
        let options = PublicKeyCredentialRequestOptionsJSON(
            challenge: Base64URLBytes(challenge), timeout: Self.milliseconds(relyingParty.timeout), rpId: relyingParty.id,
            allowCredentials: allowed.map { CredentialDescriptor(id: Array($0.credentialID), transports: $0.transports.nilIfEmpty) },
            userVerification: relyingParty.userVerification.rawValue)
        let ceremony = try await issue(
            .authentication, tenant: tenant, binding: binding, userID: user?.id, challenge: challenge,
            relyingParty: relyingParty,
            expectation: .init(
                userVerification: relyingParty.userVerification,
                allowCredentials: allowed.map { $0.credentialID.base64URLEncodedString }, attempt: attempt))
        return (ceremony, options)
    }

    /// Verifies an assertion for the ceremony `ceremony`, records the use, and says who signed in.
    /// `attempt` is the sign-in the ceremony must have been issued for; `accepts` decides
    /// whether what the passkey proved (its `acr`) is enough, before anything is recorded.
    func authenticate(
        ceremony handle: String, response: AuthenticationResponseJSON, tenant: Tenant, binding: String,
        attempt: String? = nil, accepts: (String) -> Bool = { _ in true }
    ) async throws -> PasskeySignIn {
        let relyingParty = try relyingParty(for: tenant)
        let date = now()
        guard let ceremony = try await store.takeCeremony(
            handleHash: Secrets.hash(handle), tenantID: tenant.id, binding: binding, at: date),
            ceremony.purpose == .authentication, ceremony.expectation.attempt == attempt
        else { throw WebAuthnError.challengeNotFound }
        let passkey = try await store.passkey(credentialID: Data(response.rawId.bytes), tenantID: tenant.id)
        let identifiedHandle: Data? = if let userID = ceremony.userID {
            try await store.userHandle(userID: userID, tenantID: tenant.id, at: date)
        } else {
            nil
        }
        let record: CredentialRecord? = if let passkey {
            try passkey.credentialRecord(userHandle: try await store.userHandle(userID: passkey.userID, tenantID: tenant.id, at: date))
        } else {
            nil
        }
        let expectation = AuthenticationCeremony.Expectation(
            challenge: Array(ceremony.challenge), userVerification: ceremony.expectation.userVerification,
            allowCredentials: (ceremony.expectation.allowCredentials ?? []).compactMap { Base64URLBytes(base64URL: $0)?.bytes },
            identifiedUserHandle: identifiedHandle.map(Array.init))
        let verified = Result { () throws(WebAuthnError) -> VerifiedAssertion in
            try AuthenticationCeremony(relyingParty: relyingParty).verify(response, expecting: expectation, credential: record)
        }
        if case .failure(.signCountRegression) = verified, let passkey {
            try await store.flagCloneWarning(of: passkey, at: date)
        }
        let assertion = try verified.get()
        guard let passkey, let user = try await store.user(id: passkey.userID, tenantID: tenant.id), user.status == .active else {
            throw PasskeyError.accountDisabled
        }
        let context = Self.context(of: passkey, assertion: assertion)
        // The one refusal a verified passkey can still meet: the sign-in asked for more.
        guard accepts(context.acr) else { throw WebAuthnError.userNotVerified }
        try await store.recordUse(
            of: passkey, signCount: Int64(assertion.signCount), backupState: assertion.backupState,
            cloneWarning: assertion.signCountRegressed, at: date)
        return PasskeySignIn(userID: user.id, passkey: passkey, context: context)
    }

    /// `acr` and `amr` (RFC 8176) of a passkey sign-in: `hwk` or `swk` for where the key
    /// lives, `user` for the presence test, and `mfa` when the authenticator also verified the
    /// user.
    static func context(of passkey: Passkey, assertion: VerifiedAssertion) -> AuthenticationContext {
        var methods = [passkey.keyMethod, "user"]
        if assertion.userVerified { methods.append("mfa") }
        return AuthenticationContext(
            acr: assertion.userVerified ? PasskeyClass.urn : AuthenticationClass.confirm.urn, amr: methods)
    }

    // MARK: - Parts

    private func issue(
        _ purpose: PasskeyCeremony.Purpose, tenant: Tenant, binding: String, userID: String?, challenge: Data,
        relyingParty: RelyingParty, expectation: PasskeyCeremony.Expectation
    ) async throws -> String {
        let date = now()
        if housekeeping.isDue(at: date) { try await store.purgeExpired(before: date) }
        let handle = Secrets.randomBytes(32).base64URLEncodedString
        try await store.insert(
            PasskeyCeremony(
                tenantID: tenant.id, purpose: purpose, binding: binding, userID: userID, challenge: challenge,
                expectation: expectation, createdAt: date,
                expiresAt: date.addingTimeInterval(TimeInterval(relyingParty.timeout.components.seconds))),
            handleHash: Secrets.hash(handle))
        return handle
    }

    static func milliseconds(_ duration: Duration) -> UInt32 {
        UInt32(duration.components.seconds * 1000)
    }

    /// "Passkey added 2026-11-25", until the user names it.
    static func defaultName(at date: Date) -> String {
        "Passkey added " + date.formatted(.iso8601.year().month().day())
    }
}

/// Passkey failures outside the ceremonies' verification steps.
enum PasskeyError: Error, Sendable, Equatable {
    /// The user has `PasskeyService.maximumPerUser` passkeys already.
    case tooMany
    /// The passkey verified but its user is disabled or deleted.
    case accountDisabled
    /// The sign-in needs a class that the policy lets no passkey reach
    /// (`AuthenticationPolicy.passkeyReaches`).
    case notAccepted
}

extension Array {
    var nilIfEmpty: Self? { isEmpty ? nil : self }
}

extension PasskeyError: WireFailure {
    var wireError: WireError {
        switch self {
        case .tooMany:
            WireError(.conflict, code: "too_many_passkeys",
                      description: "This account has \(PasskeyService.maximumPerUser) passkeys already. Remove one first.")
        case .accountDisabled:
            WireError(.forbidden, code: "access_denied", description: "This account cannot sign in.")
        case .notAccepted:
            WireError(.forbidden, code: "access_denied",
                      description: "This application asks you to approve on your phone: a passkey is not accepted here.")
        }
    }
}
