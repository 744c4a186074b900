import CountersignWebAuthn
import Foundation

/// The relying party's two verifications on their own, without storage or challenges of their
/// own: for tools outside the server (`countersign-bench passkeys`) that want to know what the
/// server checks, and what that costs. The server itself runs the same ceremonies through
/// `PasskeyService`.
///
/// ```swift
/// let verifier = WebAuthnVerifier(rpID: "example.org", origins: ["https://example.org"])
/// let credential = try await verifier.verifyRegistration(response, challenge: challenge)
/// ```
public struct WebAuthnVerifier: Sendable {
    /// What a verified registration established.
    public struct Credential: Sendable, Equatable {
        public let id: [UInt8]
        public let publicKey: COSEKey
        public let signCount: UInt32
        public let backupEligible: Bool
        public let attestationFormat: String
    }

    let relyingParty: RelyingParty

    /// `userVerification` is `required`, `preferred` or `discouraged`; the attestation of any
    /// format is accepted when it verifies, trusted or not.
    public init(rpID: String, origins: [String], userVerification: String = "preferred") {
        relyingParty = RelyingParty(
            id: rpID, name: rpID, origins: Set(origins), topOrigins: [],
            userVerification: UserVerificationRequirement(rawValue: userVerification) ?? .preferred,
            attestation: .none, allowUnattested: true, signCountRegression: .reject)
    }

    /// Runs WebAuthn Level 3 §7.1 on `response` for a ceremony that issued `challenge`.
    public func verifyRegistration(_ response: RegistrationResponseJSON, challenge: [UInt8], at date: Date = Date())
        async throws -> Credential
    {
        let registered = try await RegistrationCeremony(relyingParty: relyingParty).verify(
            response,
            expecting: .init(challenge: challenge, algorithms: relyingParty.algorithms, userVerification: relyingParty.userVerification),
            at: date)
        return Credential(
            id: registered.credentialID, publicKey: registered.publicKey, signCount: registered.signCount,
            backupEligible: registered.backupEligible, attestationFormat: registered.attestation.format)
    }

    /// Runs WebAuthn Level 3 §7.2 on `response` for a ceremony that issued `challenge`, against
    /// `credential` held by the user with `userHandle`; returns the new signature counter.
    public func verifyAssertion(
        _ response: AuthenticationResponseJSON, challenge: [UInt8], credential: Credential, userHandle: [UInt8]
    ) throws -> UInt32 {
        let record = CredentialRecord(
            credentialID: credential.id, userHandle: userHandle, publicKey: credential.publicKey,
            signCount: credential.signCount, backupEligible: credential.backupEligible)
        return try AuthenticationCeremony(relyingParty: relyingParty).verify(
            response,
            expecting: .init(
                challenge: challenge, userVerification: relyingParty.userVerification, allowCredentials: [],
                identifiedUserHandle: nil),
            credential: record
        ).signCount
    }
}
