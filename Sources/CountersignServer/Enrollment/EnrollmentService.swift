import CountersignCore
import Crypto
import Foundation

/// Issues enrollment tickets and redeems them for devices.
public struct EnrollmentService: Sendable {
    let store: any EnrollmentStore
    let sealer: SecretSealer
    let tenants: TenantService
    let origin: PublicOrigin
    /// How long a ticket is valid when its issuer names no lifetime.
    let ticketLifetime: TimeInterval
    /// How far an enrollment request's `iat` may be from now.
    let signatureWindow: TimeInterval
    let now: @Sendable () -> Date

    /// A new ticket, the URI that carries it and the secret itself (shown once).
    public struct IssuedTicket: Sendable {
        public let ticket: EnrollmentTicket
        public let uri: EnrollmentURI
    }

    public func issueTicket(for user: User, tenant: Tenant, lifetime: TimeInterval?, actor: String) async throws -> IssuedTicket {
        let date = now()
        let lifetime = lifetime ?? ticketLifetime
        let secret = Secrets.generate(prefix: EnrollmentTicket.secretPrefix)
        let ticket = EnrollmentTicket(
            id: Identifier.make("tkt", at: date), tenantID: tenant.id, userID: user.id, createdBy: actor,
            createdAt: date, expiresAt: date.addingTimeInterval(lifetime))
        try await store.issue(ticket, secretHash: Secrets.hash(secret), at: date)
        guard let server = URL(string: origin.tenantBase(tenant)) else {
            throw StorageError.corrupt("the public URL is not a URL")
        }
        return IssuedTicket(
            ticket: ticket, uri: EnrollmentURI(server: server, ticket: secret, serverKeyThumbprint: tenant.signingKey.thumbprint))
    }

    /// Checks an enrollment request completely, then — in one transaction — redeems the ticket,
    /// stores the device and records the enrollment. A refused request changes nothing.
    public func enroll(_ submission: EnrollmentSubmission, tenant: Tenant) async throws -> EnrollmentResponse {
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
        try Self.checkFactorKeys(request)
        guard let name = DeviceName.validate(request.deviceName) else {
            throw EnrollmentError.invalidRequest(
                "device_name must be 1 to \(DeviceName.maximumLength) characters without control characters")
        }
        if let push = request.push {
            guard !push.token.isEmpty, push.token.unicodeScalars.count <= PushRegistration.maximumTokenLength else {
                throw EnrollmentError.invalidRequest("push.token must be 1 to \(PushRegistration.maximumTokenLength) characters")
            }
        }
        let ticket = try await findTicket(request.ticket, tenant: tenant, at: date)
        guard let user = try await store.user(id: ticket.userID, tenantID: tenant.id),
              user.status == .active else {
            throw EnrollmentError.userNotActive
        }
        let device = Device(
            id: Identifier.make("dev", at: date), tenantID: tenant.id, userID: user.id, name: name,
            platform: request.platform, signingKey: request.signingKey, encryptionKey: encryptionKey, push: request.push,
            pushTokenValid: true, status: .active, createdAt: date, updatedAt: date, pinKey: request.pinKey,
            biometricKey: request.biometricKey, hasTOTP: request.totp == true && tenant.policy.totp)
        // The seed goes to the device sealed to its HPKE key, and is kept here sealed under the
        // master key: the server must recompute codes, so it cannot keep a hash.
        let totpSeed = device.hasTOTP ? Secrets.randomBytes(20) : nil
        let sealedSeed = try totpSeed.map { try sealer.seal($0, context: Self.totpContext(device.id)) }
        do {
            try await store.enroll(
                device, totpSeed: sealedSeed, ticketID: ticket.id,
                auditDetails: ["user_id": user.id, "ticket_id": ticket.id, "platform": device.platform.rawValue, "name": name,
                               "factors": Self.factorNames(device)],
                at: date)
        } catch let conflict as EnrollmentConflict {
            // Another redemption or a revocation came first: say which.
            switch conflict {
            case .ticketRevoked: throw EnrollmentError.ticketRevoked
            case .ticketExpired: throw EnrollmentError.ticketExpired
            case .ticketUsed: throw EnrollmentError.ticketUsed
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
            issuedAt: Int64(date.timeIntervalSince1970), totpDigest: try totp?.digest())
        let key = try await tenants.signingKey(for: tenant)
        let signed = try CompactJWS.sign(
            header: ["typ": .string(EnrollmentReceipt.type), "jwk": try JSONValue(encoding: tenant.signingKey)],
            payload: try JSONValue(encoding: receipt).canonicalData, signer: key)
        return EnrollmentResponse(enrollmentReceipt: signed.serialized, totp: totp)
    }

    static func totpContext(_ deviceID: String) -> String { "totp-seed:\(deviceID)" }

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
