import CountersignCore
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// One enrollment, as the protocol prescribes: prove possession of the new signing key with a
/// signed enrollment request, submit it with the ticket (or with the user's access token, whose
/// hash the request names), and accept the server's receipt only when `EnrollmentReceiptCheck`
/// does. Storing the result is the caller's business.
struct EnrollmentExchange: Sendable {
    /// What authorizes the enrollment.
    enum Credential: Sendable {
        /// The ticket of an enrollment URI, and the thumbprint of the server key it names.
        case ticket(String, serverKeyThumbprint: String)
        /// An access token with the scope `countersign:enroll`; the server key is the one the
        /// server presents over TLS (`fetchServerKey`).
        case accessToken(String)
    }

    let server: URL
    let credential: Credential
    let endpoints: DeviceEndpoints
    /// Already checked with `DeviceName.validate`.
    let deviceName: String
    let platform: DevicePlatform
    let push: PushRegistration?

    /// The public keys of the factors enrolled with the device, and whether it asks for a TOTP seed.
    var factorKeys = FactorKeys()

    struct FactorKeys: Sendable {
        var pin: ECPublicJWK?
        var biometric: ECPublicJWK?
        var totp = false
        /// The X-Wing public key (raw), announced beside the P-256 encryption key.
        var xwing: Data?
    }

    /// What an accepted enrollment brings: the record, and the TOTP seed when the server sent one.
    struct Accepted: Sendable {
        let enrollment: Enrollment
        let totpSeed: OneTimeCodeSeed?
    }

    func perform(
        enrollmentID: String, keys: DeviceKeys, serverKeyThumbprint: String, transport: any HTTPTransport, now: Date
    ) async throws(CountersignError) -> Accepted {
        let request = try signedRequest(keys: keys, issuedAt: now)
        let response = try await submit(request, over: transport)
        let check = EnrollmentReceiptCheck(
            pinnedThumbprint: serverKeyThumbprint, server: server.absoluteString, sentRequest: request)
        let accepted = try check.verify(response.enrollmentReceipt)
        let receipt = accepted.receipt
        let seed = try OneTimeCodeSeed.accept(
            response.totp, receiptDigest: receipt.totpDigest, requested: factorKeys.totp, deviceID: receipt.deviceID,
            key: keys.agreement)
        var enrollment = Enrollment(
            id: enrollmentID, server: server, tenant: receipt.tenant, deviceID: receipt.deviceID,
            user: receipt.user, deviceName: receipt.deviceName, platform: receipt.platform,
            serverKey: accepted.serverKey, enrolledAt: Date(timeIntervalSince1970: TimeInterval(receipt.issuedAt)))
        // A handover's enrollment: the signed receipt names the device that vouched, and the
        // answer the number to show; one without the other is not an answer to trust.
        switch (response.handover, receipt.vouchedBy) {
        case (nil, nil):
            break
        case (let handover?, let vouchedBy?):
            guard handover.number.count == 2, handover.number.allSatisfy(\.isNumber) else {
                throw .invalidServerResponse("the handover's number is not two digits")
            }
            enrollment.handover = EnrollmentHandover(
                id: handover.id, number: handover.number, vouchedBy: vouchedBy, expiresAt: handover.expiresAt)
        default:
            throw .invalidServerResponse("the enrollment receipt and the answer disagree on whether another device vouched for this one")
        }
        return Accepted(enrollment: enrollment, totpSeed: seed)
    }

    /// The enrollment request as a compact JWS signed by the new signing key, whose JWK is in
    /// the header as well as in the payload.
    func signedRequest(keys: DeviceKeys, issuedAt: Date) throws(CountersignError) -> String {
        let signingKey = ECPublicJWK(keys.signer.publicKey)
        let (ticket, tokenHash): (String?, String?) = switch credential {
        case .ticket(let ticket, _): (ticket, nil)
        case .accessToken(let token): (nil, EnrollmentRequest.hash(accessToken: token))
        }
        let request = EnrollmentRequest(
            ticket: ticket, audience: server.absoluteString,
            issuedAt: Int64(issuedAt.timeIntervalSince1970.rounded(.down)), deviceName: deviceName,
            platform: platform, signingKey: signingKey, encryptionKey: ECPublicJWK(keys.agreement.publicKey),
            push: push, pinKey: factorKeys.pin, biometricKey: factorKeys.biometric, totp: factorKeys.totp ? true : nil,
            accessTokenHash: tokenHash, xwingKey: factorKeys.xwing?.base64URLEncodedString)
        let payload: JSONValue
        let jwk: JSONValue
        do {
            payload = try JSONValue(encoding: request)
            jwk = try JSONValue(encoding: signingKey)
        } catch {
            throw .invalidRequest("the enrollment request could not be encoded")
        }
        do {
            return try CompactJWS.sign(
                header: ["typ": .string(EnrollmentRequest.type), "jwk": jwk],
                payload: payload.canonicalData, signer: keys.signer
            ).serialized
        } catch {
            throw .keyStore("the new signing key could not sign the enrollment request")
        }
    }

    /// The thumbprint of the server's device-protocol key that the receipt must be signed with.
    /// With a ticket: the server's key, fetched and compared with the URI's `fp` — before any
    /// key is made or the ticket is sent, so that a URI that does not match its server spends
    /// nothing. With an access token: the key the server presents, trusted as the TLS
    /// connection to the server the app named is. The receipt's signature is checked either way.
    func serverKeyThumbprint(over transport: any HTTPTransport) async throws(CountersignError) -> String {
        var request = URLRequest(url: endpoints.serverKey)
        request.httpMethod = "GET"
        request.cachePolicy = .reloadIgnoringLocalCacheData
        request.setValue("application/json", forHTTPHeaderField: "Accept")
        let answer = try await ServerAnswer.exchange(request, over: transport)
        guard answer.isSuccess else { throw answer.enrollmentFailure }
        let thumbprint = try answer.decode(ServerKeyResponse.self, what: "server key").key.thumbprint
        if case .ticket(_, let pinned) = credential, thumbprint != pinned { throw .serverKeyMismatch }
        return thumbprint
    }

    /// Posts the request and returns the body of a successful answer.
    private func submit(
        _ enrollmentRequest: String, over transport: any HTTPTransport
    ) async throws(CountersignError) -> EnrollmentResponse {
        var request = URLRequest(url: endpoints.enrollments)
        request.httpMethod = "POST"
        request.cachePolicy = .reloadIgnoringLocalCacheData
        request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        request.setValue("application/json", forHTTPHeaderField: "Accept")
        request.httpBody = try JSONBody.encode(EnrollmentSubmission(enrollmentRequest: enrollmentRequest))
        if case .accessToken(let token) = credential { request.setValue("Bearer \(token)", forHTTPHeaderField: "Authorization") }
        let answer = try await ServerAnswer.exchange(request, over: transport)
        guard answer.isSuccess else { throw answer.enrollmentFailure }
        return try answer.decode(EnrollmentResponse.self, what: "enrollment response")
    }
}
