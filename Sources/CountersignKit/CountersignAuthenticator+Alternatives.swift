import CountersignCore
import Foundation

/// Answering a request that offers alternatives (`TransactionDetails.Verification.alternatives`):
/// pick one, walk its factors in order, then send one answer that proves them all.
extension CountersignAuthenticator {
    /// The alternatives of a request as groups for a picker, each with the factors this
    /// enrollment lacks for it. A request without alternatives has one group per way its
    /// verification allows (the factor, and the PIN where it may stand in).
    ///
    /// ```swift
    /// let groups = try await authenticator.alternatives(of: details)
    /// if !groups.contains(where: \.isAvailable) { offerToEnroll(groups.first?.missingFactors ?? []) }
    /// ```
    public func alternatives(of details: RequestDetails) async throws(CountersignError) -> [AuthenticatorGroup] {
        let enrolled = try await enrolledFactors(details.request.enrollmentID)
        return details.verification.offered.enumerated().compactMap { index, factors in
            factors.map { factors in
                AuthenticatorGroup(index: index, options: factors.map(AuthenticatorOption.init(factor:)),
                                   missingFactors: factors.filter { !enrolled.contains($0) })
            }
        }
    }

    /// The factors this enrollment can give: a tap, a number and the app's own check always;
    /// the PIN with a salt; the biometric check with a key and the platform's keys to use it.
    private func enrolledFactors(_ enrollmentID: String) async throws(CountersignError) -> Set<Factor> {
        var factors: Set<Factor> = [.confirm, .numberMatch, .custom]
        if try await keyStore.factorMaterial(.pinSalt, for: enrollmentID) != nil { factors.insert(.pin) }
        if biometricKeys != nil, try await keyStore.factorMaterial(.biometricKey, for: enrollmentID) != nil {
            factors.insert(.biometric)
        }
        return factors
    }

    /// What the user gave along an alternative, before anything is signed.
    private struct Collected {
        var number: Int64?
        var pin: String?
        var prompt: String?
        var customData: String?
    }

    /// Picks the alternative (the app's picker where it has one and there is a choice, else the
    /// first this enrollment can use), walks its factors with an interstitial before each after
    /// the first, then signs: the device key over everything, the PIN and biometric keys over
    /// that. A wrong PIN asks for the PIN again and sends the same answer with the new PIN's
    /// signature; a verifier that asks for the PIN gets the PIN alone.
    func respondWithAlternatives(
        _ details: RequestDetails, handler: some ChallengeHandler
    ) async throws(CountersignError) -> ApprovalOutcome {
        let groups = try await alternatives(of: details)
        guard let firstUsable = groups.first(where: \.isAvailable) else {
            if let fewest = groups.min(by: { $0.missingFactors.count < $1.missingFactors.count }) {
                throw .factorsNotEnrolled(fewest.missingFactors)
            }
            throw .requestNotHandleable
        }
        var chosen = firstUsable
        if groups.count > 1, let picker = hooks.picker(for: .authentication) {
            switch await picker.pick(among: groups, for: details) {
            case .cancel:
                try await cancel(details)
            case .alternative(let index):
                guard let picked = groups.first(where: { $0.index == index }) else {
                    throw .invalidRequest("the request has no alternative \(index)")
                }
                guard picked.isAvailable else { throw .factorsNotEnrolled(picked.missingFactors) }
                chosen = picked
            }
        }

        var collected = Collected()
        let factors = chosen.factors
        for (position, factor) in factors.enumerated() {
            if position > 0, await !proceeds(to: factor, at: position, of: factors.count, in: .authentication, handler) {
                try await cancel(details)
            }
            if let denial = try await collect(factor, into: &collected, details, handler: handler) {
                return try await submit(details, denying: denial)
            }
        }
        return try await send(details, alternative: chosen, collected, handler: handler)
    }

    /// Shows the interstitial the app's delegate gives for `ceremony` before the factor at
    /// `position` (from 0) of `total`; false when the user cancelled on it.
    private func proceeds(
        to factor: Factor, at position: Int, of total: Int, in ceremony: Ceremony, _ handler: some ChallengeHandler
    ) async -> Bool {
        guard let delegate = hooks.interstitials(for: ceremony) else { return true }
        let step = AuthenticatorStep(total: total, index: position, nextFactor: factor)
        guard let interstitial = await delegate.interstitial(before: step, in: ceremony) else { return true }
        return await handler.present(interstitial, at: step) != .cancel
    }

    /// Asks the user for one factor; a denial when they said no on the confirmation.
    private func collect(
        _ factor: Factor, into collected: inout Collected, _ details: RequestDetails, handler: some ChallengeHandler
    ) async throws(CountersignError) -> DenyReason? {
        switch factor {
        case .confirm:
            switch await handler.confirm(ConfirmationChallenge(details: details)) {
            case .confirm: return nil
            case .deny: return .declined
            case .notRequested: return .notRequested
            }
        case .numberMatch:
            guard case .number(let number) = await handler.matchNumber(NumberMatchChallenge(details: details)) else {
                try await cancel(details)
            }
            try Self.check(number, digits: details.numberDigits)
            collected.number = number
        case .pin:
            let challenge = PINChallenge(details: details, reason: .required, failedAttempts: 0, attemptsRemaining: nil)
            guard case .pin(let pin) = await handler.enterPIN(challenge) else { try await cancel(details) }
            collected.pin = pin
        case .biometric:
            let challenge = BiometricChallenge(details: details, pinFallbackAllowed: false, biometry: await biometricKeys?.biometry)
            switch await handler.verifyBiometric(challenge) {
            case .defaultPrompt: collected.prompt = challenge.defaultPrompt
            case .prompt(let text): collected.prompt = text
            case .pinFallback: throw .invalidRequest("this alternative does not accept the PIN instead; pick one with the PIN")
            case .cancel: try await cancel(details)
            }
        case .custom:
            switch await handler.provideCustomData(CustomChallenge(details: details, pinFallbackAllowed: false)) {
            case .data(let text):
                guard text.utf8.count <= ApprovalResponse.maximumCustomDataLength else {
                    throw .invalidRequest("custom data must be at most \(ApprovalResponse.maximumCustomDataLength) bytes")
                }
                collected.customData = text
            case .pinFallback: throw .invalidRequest("this alternative does not accept the PIN instead; pick one with the PIN")
            case .cancel: try await cancel(details)
            }
        }
        return nil
    }

    /// Signs the alternative's answer and sends it, asking for the PIN again after a wrong one.
    private func send(
        _ details: RequestDetails, alternative: AuthenticatorGroup, _ collected: Collected, handler: some ChallengeHandler
    ) async throws(CountersignError) -> ApprovalOutcome {
        let enrollmentID = details.request.enrollmentID
        let biometry = alternative.factors.contains(.biometric) ? await biometricKeys?.biometry : nil
        let response = try await signedResponse(
            details, .approve, factors: alternative.factors, alternative: alternative.index, number: collected.number,
            customData: collected.customData, biometry: biometry)
        var submission = ApprovalSubmission(response: response)
        if let prompt = collected.prompt {
            guard let biometricKeys, let handle = try await keyStore.factorMaterial(.biometricKey, for: enrollmentID) else {
                throw .factorsNotEnrolled([.biometric])
            }
            do {
                submission.biometricSignature = try await biometricKeys.sign(
                    FactorProof.message(factor: .biometric, response: response), with: handle, prompt: prompt
                ).base64URLEncodedString
            } catch .cancelled {
                try await cancel(details)
            } catch {
                throw error == .failed ? .biometricFailed : .requestNotHandleable
            }
        }
        guard let firstPIN = collected.pin else { return try await postAskingForPIN(details, submission, handler: handler) }
        guard let salt = try await keyStore.factorMaterial(.pinSalt, for: enrollmentID) else { throw .factorsNotEnrolled([.pin]) }
        var pin = firstPIN
        var failedAttempts = 0
        while true {
            submission.pinSignature = try PINKey(pin: pin, salt: salt)
                .signature(for: FactorProof.message(factor: .pin, response: response))
            do {
                return try await postAskingForPIN(details, submission, handler: handler)
            } catch .wrongPIN(let remaining) {
                failedAttempts += 1
                let challenge = PINChallenge(
                    details: details, reason: .required, failedAttempts: failedAttempts, attemptsRemaining: remaining)
                guard case .pin(let again) = await handler.enterPIN(challenge) else { try await cancel(details) }
                pin = again
            }
        }
    }

    /// Posts an answer; when the custom verifier asks for the PIN instead, answers with the
    /// PIN alone, which the server then accepts for this request.
    private func postAskingForPIN(
        _ details: RequestDetails, _ submission: ApprovalSubmission, handler: some ChallengeHandler
    ) async throws(CountersignError) -> ApprovalOutcome {
        do {
            return try await post(details, submission)
        } catch .server(_, DeviceErrorCode.pinFallbackRequired.rawValue, _) {
            guard let salt = try await keyStore.factorMaterial(.pinSalt, for: details.request.enrollmentID) else {
                throw .factorsNotEnrolled([.pin])
            }
            return try await answerWithPIN(details, salt: salt, reason: .verifierRequested, handler: handler)
        }
    }
}

extension CountersignAuthenticator {
    /// The registration ceremony: sets up what this enrollment lacks to approve `details`. Of the
    /// alternatives whose missing factors this device can add (a PIN; a biometric key where it has
    /// biometric keys), the app's picker for `.registration` chooses (else the one that lacks
    /// fewest), the interstitial delegate for `.registration` is asked before each factor after
    /// the first, the handler is asked for a new PIN (`PINChallenge.Reason.setUp`), and the
    /// factors are added at the server (`addFactors`). The request itself is not answered.
    ///
    /// ```swift
    /// do {
    ///     _ = try await authenticator.respond(toDetails: details, with: screen)
    /// } catch .factorsNotEnrolled {
    ///     _ = try await authenticator.enrollFactors(for: details, with: screen)
    ///     _ = try await authenticator.respond(toDetails: details, with: screen)
    /// }
    /// ```
    public func enrollFactors(
        for details: RequestDetails, with handler: some ChallengeHandler
    ) async throws(CountersignError) -> DeviceDescription {
        let groups = try await alternatives(of: details)
        guard !groups.contains(where: \.isAvailable) else {
            throw .invalidRequest("this enrollment can already approve the request")
        }
        let addable: Set<Factor> = biometricKeys == nil ? [.pin] : [.pin, .biometric]
        let candidates = groups.filter { $0.missingFactors.allSatisfy(addable.contains) }
            .sorted { $0.missingFactors.count < $1.missingFactors.count }
        guard var chosen = candidates.first else { throw .requestNotHandleable }
        if candidates.count > 1, let picker = hooks.picker(for: .registration) {
            switch await picker.pick(among: candidates, for: details) {
            case .cancel:
                throw .actionCancelled
            case .alternative(let index):
                guard let picked = candidates.first(where: { $0.index == index }) else {
                    throw .invalidRequest("alternative \(index) cannot be set up on this device")
                }
                chosen = picked
            }
        }
        var factors = EnrollmentFactors()
        let missing = chosen.missingFactors
        for (position, factor) in missing.enumerated() {
            if position > 0, await !proceeds(to: factor, at: position, of: missing.count, in: .registration, handler) {
                throw .actionCancelled
            }
            switch factor {
            case .pin:
                let challenge = PINChallenge(details: details, reason: .setUp, failedAttempts: 0, attemptsRemaining: nil)
                guard case .pin(let pin) = await handler.enterPIN(challenge) else { throw .actionCancelled }
                factors.pin = pin
            case .biometric:
                factors.biometric = true
            case .confirm, .numberMatch, .custom:
                break
            }
        }
        return try await addFactors(details.request.enrollmentID, factors)
    }
}
