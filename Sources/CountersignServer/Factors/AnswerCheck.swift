import CountersignCore
import Foundation

/// What a device's answer decides, once its factors have been checked.
enum AnswerOutcome: Sendable, Equatable {
    /// Approved, with the factors that proved it.
    case approve(factors: [String])
    /// Denied, by the user or because a factor said no (a wrong number, a rejected custom answer);
    /// `detail` is the custom verifier's reason, for the audit log.
    case deny(DenyReason, detail: String? = nil)
}

/// The checks of an answer beyond the device signature, one rule each, in the order that
/// spends least on a bad answer: the reason of a denial; whether the factors claimed can meet
/// the requirement; then the number (a wrong one is a denial, nothing more to check), the
/// biometric key's signature, the PIN (which counts), and last the custom verifier (a call
/// out).
struct AnswerCheck: Sendable {
    let store: any AnswerCheckStore
    let pins: PINVerifier
    let verifier: CustomVerifier

    func evaluate(
        _ response: ApprovalResponse, submission: ApprovalSubmission, transaction: ApprovalTransaction, device: Device,
        tenant: Tenant
    ) async throws -> AnswerOutcome {
        guard response.decision == .approve else { return .deny(try Self.denyReason(response)) }
        guard response.reason == nil else { throw ApprovalError.invalidResponse("reason belongs to a denial only") }
        let verification = transaction.verification ?? .init(factor: .confirm)
        let used = try Self.factors(of: response)
        try Self.check(response.alternative, of: verification, with: used)
        let message = { (factor: Factor) in FactorProof.message(factor: factor, response: submission.response) }

        if used.contains(.numberMatch) {
            guard let number = response.number else {
                throw ApprovalError.invalidResponse("number is required when factors include number_match")
            }
            guard let expected = transaction.matchNumber else {
                throw ApprovalError.invalidResponse("this request has no number to match")
            }
            if number != expected { return .deny(.wrongNumber) }
        }
        if used.contains(.biometric) {
            guard let key = device.biometricKey else { throw FactorError.factorNotEnrolled(.biometric) }
            guard let signature = submission.biometricSignature else {
                throw ApprovalError.invalidResponse("biometric_signature is required when factors include biometric")
            }
            guard FactorProof.isValid(signature, of: message(.biometric), by: try key.signingKey()) else {
                throw FactorError.invalidFactorProof(.biometric)
            }
        }
        if used.contains(.pin) {
            guard let signature = submission.pinSignature else {
                throw ApprovalError.invalidResponse("pin_signature is required when factors include pin")
            }
            try await pins.check(signature, over: message(.pin), device: device, tenant: tenant)
        }
        if used.contains(.custom) {
            if let denial = try await custom(response, transaction: transaction, verification: verification, device: device,
                                             tenant: tenant) {
                return denial
            }
        }
        return .approve(factors: Factor.allCases.filter(used.contains).map(\.rawValue))
    }

    /// The factors an approval claims. With alternatives each must be one this server knows
    /// and named once, since each is a proof the server checks; a one-factor answer of an
    /// older device keeps being read as before (names it does not know pass over).
    private static func factors(of response: ApprovalResponse) throws -> Set<Factor> {
        let known = response.factors.compactMap(Factor.init(rawValue:))
        if response.alternative != nil {
            guard known.count == response.factors.count, Set(known).count == known.count else {
                throw ApprovalError.invalidResponse(
                    "factors must name each factor of the alternative once: \(Factor.allCases.map(\.rawValue).joined(separator: ", "))")
            }
        }
        return Set(known)
    }

    /// The alternatives a pending request accepts: those sealed with it (`Verification.offered`),
    /// and the PIN alone once the custom verifier asked for it (`allowPINFallback`).
    static func accepted(_ verification: TransactionDetails.Verification) -> [[Factor]?] {
        let widened = verification.alternatives != nil && verification.pinFallback == true
        return verification.offered + (widened ? [[.pin]] : [])
    }

    /// Whether `used` meets `alternative`. A tap is met by any factor; every other factor only
    /// by itself (no other factor proves the user sees the relying party's number, knows the
    /// PIN or passed the biometric or custom check).
    static func meets(_ alternative: [Factor], with used: Set<Factor>) -> Bool {
        alternative.allSatisfy { $0 == .confirm ? !used.isEmpty : used.contains($0) }
    }

    /// The index of the first accepted alternative `used` meets; nil for none.
    static func alternativeMet(by used: Set<Factor>, in verification: TransactionDetails.Verification) -> Int? {
        accepted(verification).firstIndex { $0.map { meets($0, with: used) } ?? false }
    }

    /// An answer that names an alternative must be of the sealed alternatives and give exactly
    /// its factors, one proof each; one that names none (an older device, or the PIN the
    /// verifier asked for) must meet some alternative the request accepts.
    private static func check(
        _ named: Int64?, of verification: TransactionDetails.Verification, with used: Set<Factor>
    ) throws {
        let offered = accepted(verification)
        guard let named else {
            guard alternativeMet(by: used, in: verification) != nil else {
                if verification.alternatives == nil { throw FactorError.factorRequired(verification.factor) }
                throw FactorError.alternativeNotMet(offered: offered, named: nil)
            }
            return
        }
        guard let sealed = verification.alternatives else {
            throw ApprovalError.invalidResponse("alternative is given, but this request offers no alternatives")
        }
        guard named >= 0, named < sealed.count, let alternative = offered[Int(named)] else {
            throw FactorError.alternativeNotMet(offered: offered, named: named)
        }
        guard Set(alternative) == used else { throw FactorError.alternativeNotMet(offered: offered, named: named) }
    }

    private static func denyReason(_ response: ApprovalResponse) throws -> DenyReason {
        let reason = response.reason ?? .declined
        guard DenyReason.fromDevice.contains(reason) else {
            throw ApprovalError.invalidResponse(
                "reason must be one of \(DenyReason.fromDevice.map(\.rawValue).joined(separator: ", "))")
        }
        return reason
    }

    /// Asks the tenant's verifier about the app's data: nil when it accepts, a denial when it
    /// rejects; a request for the PIN widens the pending request to accept one, and anything
    /// else fails closed with nothing decided.
    private func custom(
        _ response: ApprovalResponse, transaction: ApprovalTransaction, verification: TransactionDetails.Verification,
        device: Device, tenant: Tenant
    ) async throws -> AnswerOutcome? {
        guard let data = response.customData else {
            throw ApprovalError.invalidResponse("custom_data is required when factors include custom")
        }
        guard data.utf8.count <= ApprovalResponse.maximumCustomDataLength else {
            throw ApprovalError.invalidResponse("custom_data is longer than \(ApprovalResponse.maximumCustomDataLength) bytes")
        }
        let user = try await store.user(id: transaction.userID, tenantID: tenant.id)
        let call = CustomVerification(
            tenant: tenant.slug, requestID: transaction.id, clientID: transaction.clientID, userID: transaction.userID,
            username: user?.username ?? "", deviceID: device.id, data: data, bindingMessage: transaction.bindingMessage)
        switch await verifier.verify(call, tenantID: tenant.id) {
        case .accept:
            return nil
        case .reject(let why):
            return .deny(.customRejected, detail: why)
        case .pinFallback:
            try await store.allowPINFallback(requestID: transaction.id, verification: verification)
            throw FactorError.pinFallbackRequired
        case .unavailable:
            throw FactorError.verifierUnavailable
        }
    }
}
