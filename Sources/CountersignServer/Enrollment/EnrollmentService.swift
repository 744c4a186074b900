import CountersignCore
import Crypto
import Foundation

/// Issues enrollment tickets and redeems them for devices, or enrolls a device for the user of
/// an access token that carries `countersign:enroll` (an app that signed its user in with the
/// code flow): the proof then names the token's hash (`ath`) instead of a ticket, the device is
/// bound to the token's subject, and each token enrolls one device. A token of one of the
/// tenant's trusted issuers (the bank's own identity provider, `TrustedIssuers/`) does the same
/// for the user its username claim names.
public struct EnrollmentService: Sendable {
    /// The scope an access token needs to enroll a device for its user.
    public static let enrollScope = "countersign:enroll"

    let store: any EnrollmentStore
    /// Checks bearer access tokens, and their single use.
    let accessTokens: AccessTokenVerifier
    /// Checks tokens of the tenant's trusted issuers.
    let trustedIssuers: TrustedIssuerTokenVerifier
    let jwtIDs: JWTIDLedger
    let sealer: SecretSealer
    let certificates: DeviceCertificates
    let tenants: TenantService
    let origin: PublicOrigin
    /// How long a ticket is valid when its issuer names no lifetime.
    let ticketLifetime: TimeInterval
    /// How far an enrollment request's `iat` may be from now.
    let signatureWindow: TimeInterval
    let now: @Sendable () -> Date
    /// Closes handovers whose time ran out, at most hourly.
    let handoverHousekeeping = PeriodicSchedule(every: 3600)

    /// A new ticket, the URI that carries it and the secret itself (shown once).
    public struct IssuedTicket: Sendable {
        public let ticket: EnrollmentTicket
        public let uri: EnrollmentURI
        /// The mailed invitation's id (`mail_…`), when it was mailed.
        public var mailID: String?

        /// The invitation link: a page of the tenant that shows this ticket's QR code to the
        /// person it is for (`InvitationFlow`). It carries the secret, so it is shown once.
        public var invitationURL: String { Self.invitationURL(server: uri.server, ticket: uri.ticket) }

        static func invitationURL(server: URL, ticket: String) -> String {
            server.absoluteString + "/invitation?ticket=" + ticket
        }
    }

    /// What became of a ticket, for a page that shows it and waits for the phone.
    public enum TicketState: String, Sendable {
        case pending, enrolled, expired

        /// Enrolled once a phone used the ticket; expired once revoked or past its expiry.
        init(of ticket: EnrollmentTicket, at date: Date) {
            if ticket.usedAt != nil {
                self = .enrolled
            } else {
                self = ticket.revokedAt != nil || ticket.expiresAt <= date ? .expired : .pending
            }
        }
    }

    /// The enrollment URI of an invitation's ticket, if it can still enroll a phone.
    func invitation(_ secret: String, tenant: Tenant) async throws -> (EnrollmentTicket, EnrollmentURI) {
        let ticket = try await findTicket(secret, tenant: tenant, at: now())
        guard let server = URL(string: origin.tenantBase(tenant)) else {
            throw StorageError.corrupt("the public URL is not a URL")
        }
        return (ticket, EnrollmentURI(server: server, ticket: secret, serverKeyThumbprint: tenant.signingKey.thumbprint))
    }

    /// The state of the ticket whose secret is `secret`: enrolled once a phone used it.
    func state(ofTicket secret: String, tenant: Tenant) async throws -> TicketState {
        try await invitee(ofTicket: secret, tenant: tenant).state
    }

    /// The state of the ticket whose secret is `secret`, and the user it enrolls a phone for.
    func invitee(ofTicket secret: String, tenant: Tenant) async throws -> (state: TicketState, userID: String) {
        guard secret.hasPrefix(EnrollmentTicket.secretPrefix), secret.count < 100,
              let ticket = try await store.ticket(secretHash: Secrets.hash(secret)), ticket.tenantID == tenant.id else {
            throw EnrollmentError.invalidTicket
        }
        return (TicketState(of: ticket, at: now()), ticket.userID)
    }

    /// With `mailing`, the invitation link is also mailed to the user, queued in the ticket's
    /// transaction: no ticket is made whose invitation cannot be queued (`IssuedTicket.mailID`).
    public func issueTicket(for user: User, tenant: Tenant, lifetime: TimeInterval?, actor: String,
                            mailing: Bool = false) async throws -> IssuedTicket {
        let date = now()
        let lifetime = lifetime ?? ticketLifetime
        let secret = Secrets.generate(prefix: EnrollmentTicket.secretPrefix)
        let ticket = EnrollmentTicket(
            id: Identifier.make("tkt", at: date), tenantID: tenant.id, userID: user.id, createdBy: actor,
            createdAt: date, expiresAt: date.addingTimeInterval(lifetime))
        guard let server = URL(string: origin.tenantBase(tenant)) else {
            throw StorageError.corrupt("the public URL is not a URL")
        }
        var issued = IssuedTicket(
            ticket: ticket, uri: EnrollmentURI(server: server, ticket: secret, serverKeyThumbprint: tenant.signingKey.thumbprint))
        issued.mailID = try await store.issue(
            ticket, secretHash: Secrets.hash(secret), invitation: mailing ? issued.invitationURL : nil, at: date)
        return issued
    }

    /// Checks an enrollment request completely, then — in one transaction — redeems the ticket,
    /// stores the device and records the enrollment. A refused request changes nothing.
    public func enroll(_ submission: EnrollmentSubmission, tenant: Tenant, accessToken: String? = nil) async throws
        -> EnrollmentResponse {
        let date = now()
        let (request, proof) = try parseProof(submission.enrollmentRequest)
        guard origin.tenantBases(tenant).contains(request.audience) else {
            throw EnrollmentError.invalidRequest("aud must be this server's URL, \(origin.tenantBase(tenant))")
        }
        guard abs(date.timeIntervalSince1970 - TimeInterval(request.issuedAt)) <= signatureWindow else {
            throw EnrollmentError.invalidProof("iat is outside the accepted window; check the device clock")
        }
        let encryptionKey: ECPublicJWK = request.encryptionKey
        do { _ = try encryptionKey.agreementKey() } catch {
            throw EnrollmentError.invalidKey("encryption_key: \(error.description)")
        }
        let xwingKey = try Self.xwingKey(of: request)
        try Self.checkFactorKeys(request)
        let brought = [request.pinKey, request.biometricKey].compactMap { $0 }.count
        guard brought >= tenant.policy.minimumFactors else {
            throw EnrollmentError.invalidRequest(
                "this tenant requires at least \(tenant.policy.minimumFactors) of pin_key and biometric_key; the request has \(brought)")
        }
        guard let name = DeviceName.validate(request.deviceName) else {
            throw EnrollmentError.invalidRequest(
                "device_name must be 1 to \(DeviceName.maximumLength) characters without control or format characters (such as bidirectional overrides)")
        }
        if let push = request.push {
            guard !push.token.isEmpty, push.token.unicodeScalars.count <= PushRegistration.maximumTokenLength else {
                throw EnrollmentError.invalidRequest("push.token must be 1 to \(PushRegistration.maximumTokenLength) characters")
            }
        }
        let authority = try await authority(of: request, accessToken: accessToken, tenant: tenant, at: date)
        guard let user = try await store.user(id: authority.userID, tenantID: tenant.id),
              user.status == .active else {
            throw EnrollmentError.userNotActive
        }
        // A handover's ticket makes a pending device, which shows a number until the device that
        // asked for the ticket approves it (`startHandover`).
        var handover: Handover?
        if case .ticket(let ticket) = authority, let found = try await store.handover(ticketID: ticket.id) {
            guard found.status == .waiting, found.expiresAt > date else { throw EnrollmentError.ticketExpired }
            handover = found
        }
        let handoverNumber = handover.map { _ in String(NumberMatching.number()) }
        var device = Device(
            id: Identifier.make("dev", at: date), tenantID: tenant.id, userID: user.id, name: name,
            platform: request.platform, signingKey: request.signingKey, encryptionKey: encryptionKey, push: request.push,
            pushTokenValid: true, status: handover == nil ? .active : .pending, createdAt: date, updatedAt: date,
            pinKey: request.pinKey,
            biometricKey: request.biometricKey, hasTOTP: request.totp == true && tenant.policy.totp, xwingKey: xwingKey)
        device.certificate = try await certificates.issue(for: device, tenant: tenant)
        // The seed goes to the device sealed to its HPKE key, and is kept here sealed under the
        // master key: the server must recompute codes, so it cannot keep a hash.
        let totpSeed = device.hasTOTP ? Secrets.randomBytes(20) : nil
        let sealedSeed = try totpSeed.map { try sealer.seal($0, context: Self.totpContext(device.id)) }
        var auditDetails = ["user_id": user.id, "platform": device.platform.rawValue, "name": name,
                            "factors": Self.factorNames(device)]
        switch authority {
        case .ticket(let ticket):
            auditDetails["ticket_id"] = ticket.id
            if let handover {
                auditDetails["handover_id"] = handover.id
                auditDetails["vouched_by"] = handover.fromDeviceID
            }
        case .accessToken(let token):
            auditDetails["client_id"] = token.clientID
            // Spent only now that everything else checked out: a refused request leaves the
            // token usable for a corrected one.
            guard try await jwtIDs.use(token.id, clientID: token.clientID, purpose: .enrollment,
                                       expiresAt: Date(timeIntervalSince1970: TimeInterval(token.expiresAt))) else {
                throw EnrollmentError.accessTokenUsed
            }
        case .trustedIssuer(let token):
            auditDetails["trusted_issuer"] = token.trustedIssuerID
            auditDetails["issuer"] = token.issuer
            guard try await trustedIssuers.spend(token) else { throw EnrollmentError.accessTokenUsed }
        }
        do {
            try await store.enroll(
                device, totpSeed: sealedSeed, ticketID: authority.ticketID,
                handover: handover.flatMap { handover in handoverNumber.map { (handover.id, $0) } },
                auditDetails: auditDetails, at: date)
        } catch let conflict as EnrollmentConflict {
            // Another redemption or a revocation came first: say which.
            switch conflict {
            case .ticketRevoked: throw EnrollmentError.ticketRevoked
            case .ticketExpired: throw EnrollmentError.ticketExpired
            case .ticketUsed: throw EnrollmentError.ticketUsed
            case .handoverClosed: throw EnrollmentError.ticketExpired
            case .signingKeyEnrolled:
                throw EnrollmentError.invalidKey("this signing key is already enrolled; generate a new key for each enrollment")
            }
        }
        let totp = try totpSeed.map { seed in
            TOTPEnrollment(
                algorithm: .sha1, digits: Int64(TOTPVerification.digits), period: Int64(TOTPVerification.period),
                sealedSeed: try SealedDetails.sealTOTPSeed(seed, to: try encryptionKey.agreementKey(), deviceID: device.id))
        }
        let receipt = EnrollmentReceipt(
            deviceID: device.id, tenant: tenant.slug, server: request.audience,
            user: EnrolledUser(id: user.id, username: user.username, displayName: user.displayName),
            deviceName: name, platform: device.platform,
            requestDigest: Data(SHA256.hash(data: Data(proof.serialized.utf8))).base64URLEncodedString,
            issuedAt: Int64(date.timeIntervalSince1970), totpDigest: try totp?.digest(), vouchedBy: handover?.fromDeviceID)
        let key = try await tenants.signingKey(for: tenant)
        let signed = try CompactJWS.sign(
            header: ["typ": .string(EnrollmentReceipt.type), "jwk": try JSONValue(encoding: tenant.signingKey)],
            payload: try JSONValue(encoding: receipt).canonicalData, signer: key)
        let pending = handover.flatMap { handover in
            handoverNumber.map { PendingHandover(id: handover.id, number: $0, expiresAt: date.addingTimeInterval(Handover.lifetime)) }
        }
        return EnrollmentResponse(
            enrollmentReceipt: signed.serialized, totp: totp, deviceCertificate: device.certificate, handover: pending)
    }

    static func totpContext(_ deviceID: String) -> String { "totp-seed:\(deviceID)" }

    /// The X-Wing key a device announced, decoded and checked to be one; nil when it sent none.
    private static func xwingKey(of request: EnrollmentRequest) throws(EnrollmentError) -> Data? {
        guard let text = request.xwingKey else { return nil }
        guard let raw = Data(base64URLEncoded: text), raw.count == HPKESuite.xwingPublicKeyLength,
              Self.isXWingKey(raw) else {
            throw EnrollmentError.invalidKey("xwing_key: must be an X-Wing public key of \(HPKESuite.xwingPublicKeyLength) bytes, base64url")
        }
        return raw
    }

    /// Whether `raw` parses as an X-Wing public key; where the platform has no X-Wing, its length
    /// alone is checked (the server seals with P-256 there).
    private static func isXWingKey(_ raw: Data) -> Bool {
        guard #available(macOS 26, iOS 26, *) else { return true }
        return (try? XWingMLKEM768X25519.PublicKey(rawRepresentation: raw)) != nil
    }

    /// The PIN and biometric keys must be P-256 keys, distinct from each other and from the
    /// device key: one key standing for two factors would prove only one.
    private static func checkFactorKeys(_ request: EnrollmentRequest) throws(EnrollmentError) {
        for (field, key) in [("pin_key", request.pinKey), ("biometric_key", request.biometricKey)] {
            guard let key else { continue }
            do { _ = try key.signingKey() } catch { throw .invalidKey("\(field): \(error.description)") }
            guard key != request.signingKey, key != request.encryptionKey else {
                throw .invalidKey("\(field) must be a key of its own, not the signing or encryption key")
            }
        }
        if let pin = request.pinKey, pin == request.biometricKey {
            throw .invalidKey("pin_key and biometric_key must be different keys")
        }
    }

    private static func factorNames(_ device: Device) -> String {
        let factors = device.enrolledFactors
        return [factors.pin ? "pin" : nil, factors.biometric ? "biometric" : nil, factors.totp ? "totp" : nil]
            .compactMap { $0 }.joined(separator: " ")
    }

    /// The request inside the proof, after checking that the key in the header signed it and
    /// is the key being enrolled.
    private func parseProof(_ text: String) throws(EnrollmentError) -> (EnrollmentRequest, CompactJWS) {
        let jws: CompactJWS
        do { jws = try CompactJWS(parsing: text) } catch { throw .invalidProof(error.description) }
        guard jws.type == EnrollmentRequest.type else { throw .invalidProof("typ must be \(EnrollmentRequest.type)") }
        guard let jwkValue = jws.header["jwk"], let headerKey = try? jwkValue.decode(as: ECPublicJWK.self) else {
            throw .invalidProof("the header must carry the signing key as jwk")
        }
        let publicKey: P256.Signing.PublicKey
        do { publicKey = try headerKey.signingKey() } catch { throw .invalidKey("jwk: \(error.description)") }
        guard jws.isValid(for: publicKey) else { throw .invalidProof("the signature does not verify with the jwk in the header") }
        let request: EnrollmentRequest
        do {
            request = try JSON.decode(EnrollmentRequest.self, from: jws.payload, what: "the enrollment request payload")
        } catch let error as APIError {
            throw .invalidRequest(error.message)
        } catch {
            throw .invalidRequest("the enrollment request payload is not valid JSON")
        }
        guard request.signingKey == headerKey else { throw .invalidProof("signing_key must be the jwk that signed the request") }
        return (request, jws)
    }

    /// What authorizes an enrollment: a ticket, the user's access token, or a token of one of
    /// the tenant's trusted issuers.
    enum Authority {
        case ticket(EnrollmentTicket)
        case accessToken(VerifiedAccessToken)
        case trustedIssuer(TrustedIssuerToken)

        var userID: String {
            switch self {
            case .ticket(let ticket): ticket.userID
            case .accessToken(let token): token.userID
            case .trustedIssuer(let token): token.userID
            }
        }

        var ticketID: String? {
            if case .ticket(let ticket) = self { ticket.id } else { nil }
        }
    }

    /// The one credential of the request: the ticket named in the signed proof, or the bearer
    /// token whose hash the proof names (so that a proof seen in transit cannot be replayed with
    /// another token, nor the token with another proof). A bearer token is the tenant's own when
    /// its `iss` is the tenant's, or else must come from one of the tenant's trusted issuers.
    private func authority(of request: EnrollmentRequest, accessToken: String?, tenant: Tenant, at date: Date)
        async throws -> Authority {
        switch (request.ticket, accessToken) {
        case (let ticket?, nil):
            guard request.accessTokenHash == nil else {
                throw EnrollmentError.credentials("ath names an access token, but none was sent (Authorization: Bearer)")
            }
            return .ticket(try await findTicket(ticket, tenant: tenant, at: date))
        case (nil, let token?):
            guard request.accessTokenHash == EnrollmentRequest.hash(accessToken: token) else {
                throw EnrollmentError.invalidProof("ath must be the base64url SHA-256 of the access token sent with the request")
            }
            let issuer = Issuer(tenant: tenant, origin: origin)
            if let claimed = TrustedIssuerTokenVerifier.claimedIssuer(of: token), claimed != issuer.identifier {
                return .trustedIssuer(try await trustedIssuerToken(token, claiming: claimed, tenant: tenant))
            }
            let verified: VerifiedAccessToken
            do {
                verified = try await accessTokens.validate(token, issuer: issuer).token
            } catch let rejection as AccessTokenRejection {
                throw EnrollmentError.invalidAccessToken(rejection.description)
            }
            guard verified.scope.contains(Self.enrollScope) else { throw EnrollmentError.insufficientScope(Self.enrollScope) }
            // A refreshed token keeps its sign-in's auth_time: the ten minutes count from the
            // approval, not from the token (the same rule as the account page's).
            let fresh = Int(AccountFlow.freshSignIn)
            guard let authTime = verified.authTime, Int64(date.timeIntervalSince1970) - authTime <= Int64(fresh) else {
                throw EnrollmentError.staleSignIn(maxAge: fresh)
            }
            return .accessToken(verified)
        case (nil, nil):
            throw EnrollmentError.credentials("an enrollment needs a ticket, or the user's access token as Authorization: Bearer")
        case (_?, _?):
            throw EnrollmentError.credentials("send a ticket or an access token, not both")
        }
    }

    /// The token checked against the trusted issuer its `iss` names; an issuer the tenant does
    /// not trust (another tenant's among them) is refused before any key is looked at.
    private func trustedIssuerToken(_ token: String, claiming issuer: String, tenant: Tenant) async throws
        -> TrustedIssuerToken {
        guard let trusted = try await trustedIssuers.trustedIssuer(issuer, tenantID: tenant.id) else {
            throw EnrollmentError.invalidAccessToken("the token's issuer is neither this tenant nor one it trusts")
        }
        do {
            return try await trustedIssuers.verify(token, issuer: trusted)
        } catch let rejection as TrustedIssuerTokenRejection {
            switch rejection {
            case .insufficientScope(let scope): throw EnrollmentError.insufficientScope(scope)
            case .unknownUser(let claim): throw EnrollmentError.unknownUser(claim: claim)
            case .userNotActive: throw EnrollmentError.tokenUserNotActive
            default: throw EnrollmentError.invalidAccessToken(rejection.description)
            }
        }
    }

    private func findTicket(_ secret: String, tenant: Tenant, at date: Date) async throws -> EnrollmentTicket {
        guard secret.hasPrefix(EnrollmentTicket.secretPrefix), secret.count < 100,
              let ticket = try await store.ticket(secretHash: Secrets.hash(secret)),
              ticket.tenantID == tenant.id else {
            throw EnrollmentError.invalidTicket
        }
        if ticket.usedAt != nil { throw EnrollmentError.ticketUsed }
        if ticket.revokedAt != nil { throw EnrollmentError.ticketRevoked }
        if ticket.expiresAt <= date { throw EnrollmentError.ticketExpired }
        return ticket
    }
}
