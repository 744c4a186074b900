import CountersignCore
import Foundation

/// Answering a request with the factor it requires: the handler asks the user, the SDK signs
/// the answer with the device key, adds the PIN or biometric key's signature over it, and reads
/// the server's verdict.
extension CountersignAuthenticator {
    /// Opens a request's details and answers it with `handler`, as `respond(toDetails:with:)`.
    ///
    /// ```swift
    /// let outcome = try await authenticator.respond(to: request, with: approvalScreen)
    /// ```
    public func respond(
        to request: ApprovalRequest, with handler: some ChallengeHandler
    ) async throws(CountersignError) -> ApprovalOutcome {
        try await respond(toDetails: details(for: request), with: handler)
    }

    /// Answers a request with the factor its details require, asking `handler` for what only the
    /// user can give.
    ///
    /// - A wrong PIN asks for it again, telling how many attempts remain; the last one the
    ///   server allows removes the enrollment (`.userDeregistered`, local data erased).
    /// - A biometric check that fails, or a custom verifier that asks for it, turns to the PIN
    ///   where the request allows that.
    /// - Cancelling any challenge denies the request as `cancelled`, then throws
    ///   `.actionCancelled`.
    /// - A request for a factor this enrollment cannot give throws `.requestNotHandleable`
    ///   without answering.
    ///
    /// ```swift
    /// do {
    ///     switch try await authenticator.respond(toDetails: details, with: approvalScreen) {
    ///     case .approved: showDone()
    ///     case .denied(let reason, _): showDenied(reason)
    ///     }
    /// } catch .actionCancelled {
    ///     dismiss()
    /// }
    /// ```
    public func respond(
        toDetails details: RequestDetails, with handler: some ChallengeHandler
    ) async throws(CountersignError) -> ApprovalOutcome {
        if details.verification.alternatives != nil { return try await respondWithAlternatives(details, handler: handler) }
        let enrollmentID = details.request.enrollmentID
        let pinSalt = try await keyStore.factorMaterial(.pinSalt, for: enrollmentID)
        let pinFallback = details.allowsPINFallback && pinSalt != nil
        switch details.requiredFactor {
        case .confirm:
            switch await handler.confirm(ConfirmationChallenge(details: details)) {
            case .confirm: return try await submit(details, approving: .confirm)
            case .deny: return try await submit(details, denying: .declined)
            case .notRequested: return try await submit(details, denying: .notRequested)
            }
        case .numberMatch:
            switch await handler.matchNumber(NumberMatchChallenge(details: details)) {
            case .number(let number):
                try Self.check(number, digits: details.numberDigits)
                return try await submit(details, approving: .numberMatch, number: number)
            case .cancel:
                try await cancel(details)
            }
        case .pin:
            guard let pinSalt else { throw .requestNotHandleable }
            return try await answerWithPIN(details, salt: pinSalt, reason: .required, handler: handler)
        case .biometric:
            return try await answerWithBiometric(details, pinSalt: pinFallback ? pinSalt : nil, handler: handler)
        case .custom:
            return try await answerWithCustomData(details, pinSalt: pinSalt, pinFallback: pinFallback, handler: handler)
        }
    }

    // MARK: - Factors

    /// Asks for the PIN until the server accepts it, the user cancels, or the server removes the
    /// enrollment after one wrong PIN too many.
    func answerWithPIN(
        _ details: RequestDetails, salt: Data, reason: PINChallenge.Reason, handler: some ChallengeHandler
    ) async throws(CountersignError) -> ApprovalOutcome {
        var failedAttempts = 0
        var attemptsRemaining: Int?
        while true {
            let challenge = PINChallenge(
                details: details, reason: reason, failedAttempts: failedAttempts, attemptsRemaining: attemptsRemaining)
            guard case .pin(let pin) = await handler.enterPIN(challenge) else { try await cancel(details) }
            let key = try PINKey(pin: pin, salt: salt)
            let response = try await signedResponse(details, .approve, factor: .pin)
            let signature = try key.signature(for: FactorProof.message(factor: .pin, response: response))
            do {
                return try await post(details, ApprovalSubmission(response: response, pinSignature: signature))
            } catch .wrongPIN(let remaining) {
                failedAttempts += 1
                attemptsRemaining = remaining
            }
        }
    }

    /// `pinSalt` is given only when the PIN may stand in for the biometric check.
    private func answerWithBiometric(
        _ details: RequestDetails, pinSalt: Data?, handler: some ChallengeHandler
    ) async throws(CountersignError) -> ApprovalOutcome {
        let handle = try await keyStore.factorMaterial(.biometricKey, for: details.request.enrollmentID)
        guard let handle, let biometricKeys else {
            guard let pinSalt else { throw .requestNotHandleable }
            return try await answerWithPIN(details, salt: pinSalt, reason: .fallback, handler: handler)
        }
        let biometry = await biometricKeys.biometry
        let challenge = BiometricChallenge(details: details, pinFallbackAllowed: pinSalt != nil, biometry: biometry)
        let prompt: String
        switch await handler.verifyBiometric(challenge) {
        case .defaultPrompt: prompt = challenge.defaultPrompt
        case .prompt(let text): prompt = text
        case .pinFallback:
            guard let pinSalt else { throw .invalidRequest("this request does not accept the PIN instead") }
            return try await answerWithPIN(details, salt: pinSalt, reason: .fallback, handler: handler)
        case .cancel: try await cancel(details)
        }
        let response = try await signedResponse(details, .approve, factor: .biometric, biometry: biometry)
        let signature: Data
        do {
            signature = try await biometricKeys.sign(
                FactorProof.message(factor: .biometric, response: response), with: handle, prompt: prompt)
        } catch .cancelled {
            try await cancel(details)
        } catch {
            guard let pinSalt else { throw error == .failed ? .biometricFailed : .requestNotHandleable }
            return try await answerWithPIN(details, salt: pinSalt, reason: .fallback, handler: handler)
        }
        return try await post(
            details, ApprovalSubmission(response: response, biometricSignature: signature.base64URLEncodedString))
    }

    /// The verifier may ask for the PIN even where the request does not offer it as a fallback.
    private func answerWithCustomData(
        _ details: RequestDetails, pinSalt: Data?, pinFallback: Bool, handler: some ChallengeHandler
    ) async throws(CountersignError) -> ApprovalOutcome {
        let data: String
        switch await handler.provideCustomData(CustomChallenge(details: details, pinFallbackAllowed: pinFallback)) {
        case .data(let text): data = text
        case .pinFallback:
            guard pinFallback, let pinSalt else { throw .invalidRequest("this request does not accept the PIN instead") }
            return try await answerWithPIN(details, salt: pinSalt, reason: .fallback, handler: handler)
        case .cancel: try await cancel(details)
        }
        guard data.utf8.count <= ApprovalResponse.maximumCustomDataLength else {
            throw .invalidRequest("custom data must be at most \(ApprovalResponse.maximumCustomDataLength) bytes")
        }
        do {
            return try await submit(details, approving: .custom, customData: data)
        } catch .server(_, DeviceErrorCode.pinFallbackRequired.rawValue, _) {
            guard let pinSalt else { throw .requestNotHandleable }
            return try await answerWithPIN(details, salt: pinSalt, reason: .verifierRequested, handler: handler)
        }
    }

    /// Denies the request as cancelled, then reports the cancellation.
    func cancel(_ details: RequestDetails) async throws(CountersignError) -> Never {
        _ = try await submit(details, denying: .cancelled)
        throw .actionCancelled
    }

    static func check(_ number: Int64, digits: Int) throws(CountersignError) {
        var limit: Int64 = 1
        for _ in 0..<min(max(digits, 1), 18) { limit *= 10 }
        guard (0..<limit).contains(number) else {
            throw .invalidRequest("the number must have at most \(digits) digits")
        }
    }

    // MARK: - Signing and sending

    /// Signs and sends an approval that needs no second key.
    func submit(
        _ details: RequestDetails, approving factor: Factor, number: Int64? = nil, customData: String? = nil
    ) async throws(CountersignError) -> ApprovalOutcome {
        let response = try await signedResponse(details, .approve, factor: factor, number: number, customData: customData)
        return try await post(details, ApprovalSubmission(response: response))
    }

    /// Signs and sends a denial; a denial needs no factor proof.
    func submit(_ details: RequestDetails, denying reason: DenyReason?) async throws(CountersignError) -> ApprovalOutcome {
        if let reason, !DenyReason.fromDevice.contains(reason) {
            throw .invalidRequest("a device denies as declined, cancelled or not_requested")
        }
        let response = try await signedResponse(details, .deny, factor: .confirm, reason: reason)
        return try await post(details, ApprovalSubmission(response: response))
    }

    /// The answer as a compact JWS by the device key, over the digest of the details shown and
    /// the server's challenge: what a PIN or biometric key then signs in turn.
    func signedResponse(
        _ details: RequestDetails, _ decision: ApprovalResponse.Decision, factor: Factor, reason: DenyReason? = nil,
        number: Int64? = nil, customData: String? = nil, biometry: Biometry? = nil
    ) async throws(CountersignError) -> String {
        try await signedResponse(details, decision, factors: [factor], reason: reason, number: number,
                                 customData: customData, biometry: biometry)
    }

    /// The same, for the factors of an alternative (`alternative` its index in the details).
    func signedResponse(
        _ details: RequestDetails, _ decision: ApprovalResponse.Decision, factors: [Factor], alternative: Int? = nil,
        reason: DenyReason? = nil, number: Int64? = nil, customData: String? = nil, biometry: Biometry? = nil
    ) async throws(CountersignError) -> String {
        let enrollment = try await keyStore.enrollment(details.request.enrollmentID)
        let keys = try await keyStore.keys(for: details.request.enrollmentID)
        let response = ApprovalResponse(
            requestID: details.request.id, decision: decision, detailsDigest: details.digest,
            challenge: details.transaction.challenge, factors: factors.map(\.rawValue),
            issuedAt: Int64(now().timeIntervalSince1970.rounded(.down)), reason: reason, number: number,
            customData: customData, biometry: biometry?.rawValue, alternative: alternative.map(Int64.init))
        do { return try response.sign(deviceID: enrollment.deviceID, signer: keys.signer).serialized } catch {
            throw .keyStore("the signing key of enrollment \(enrollment.id) could not sign the answer")
        }
    }

    /// Sends a signed answer and reads the server's verdict.
    func post(
        _ details: RequestDetails, _ submission: ApprovalSubmission
    ) async throws(CountersignError) -> ApprovalOutcome {
        let acknowledgement = try await withDevice(details.request.enrollmentID) { client throws(CountersignError) in
            guard let url = client.endpoints.response(to: details.request.id) else {
                throw .invalidRequestDetails("the request id cannot name a URL")
            }
            return try await Self.refusalsOfApprovals { () async throws(CountersignError) in
                try await client.send(
                    .post, url, json: submission, expecting: ApprovalAcknowledgement.self, what: "acknowledgement")
            }
        }
        return try ApprovalOutcome(acknowledgement)
    }

    /// Runs a call about one request, turning the refusals an app handles on their own into
    /// their own errors.
    static func refusalsOfApprovals<Result>(
        _ call: () async throws(CountersignError) -> Result
    ) async throws(CountersignError) -> Result {
        do {
            return try await call()
        } catch {
            guard case .server(_, let code, _) = error else { throw error }
            switch DeviceErrorCode(rawValue: code) {
            case .alreadyDecided: throw .alreadyAnswered
            case .approvalExpired: throw .expired
            case .unknownRequest: throw .requestNotFound
            case .factorRequired, .factorNotEnrolled: throw .requestNotHandleable
            case .verifierUnavailable: throw .verifierUnavailable
            default: throw error
            }
        }
    }
}
