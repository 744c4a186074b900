import CountersignWebAuthn
import Foundation

/// What an assertion is checked against: the registered credential, as stored.
struct CredentialRecord: Sendable, Equatable {
    var credentialID: [UInt8]
    /// The user handle of the credential's user (`user.id` at registration).
    var userHandle: [UInt8]
    var publicKey: COSEKey
    var signCount: UInt32
    var backupEligible: Bool
}

/// What a verified assertion tells the caller to record (§7.2 step 24) and the sign-in to
/// claim.
struct VerifiedAssertion: Sendable, Equatable {
    var signCount: UInt32
    var userVerified: Bool
    var backupState: Bool
    /// The counter did not increase and the tenant lets such sign-ins through, flagged.
    var signCountRegressed: Bool
}

/// The authentication ceremony's verification (WebAuthn Level 3 §7.2), steps in the
/// specification's order. The caller takes the challenge (so that a failure still uses it),
/// finds the credential by `rawId` within the tenant, and records the result.
struct AuthenticationCeremony: Sendable {
    struct Expectation: Sendable {
        var challenge: [UInt8]
        var userVerification: UserVerificationRequirement
        /// `allowCredentials`; empty for a usernameless sign-in.
        var allowCredentials: [[UInt8]]
        /// The user handle of the user identified before the ceremony (a username typed, an
        /// account page re-check); nil when the credential identifies the user.
        var identifiedUserHandle: [UInt8]?
    }

    let relyingParty: RelyingParty

    func verify(_ response: AuthenticationResponseJSON, expecting expected: Expectation, credential: CredentialRecord?)
        throws(WebAuthnError) -> VerifiedAssertion
    {
        try RegistrationCeremony.isPublicKeyCredential(type: response.type, id: response.id, rawID: response.rawId.bytes)
        try Self.allowed(response.rawId.bytes, in: expected.allowCredentials)
        let credential = try Self.owner(
            of: credential, userHandle: response.response.userHandle?.bytes, identified: expected.identifiedUserHandle)
        let clientDataJSON = response.response.clientDataJSON.bytes
        let clientData = try CeremonyChecks.clientData(clientDataJSON)
        try CeremonyChecks.type(clientData, is: CollectedClientData.getType)
        try CeremonyChecks.challenge(clientData, is: expected.challenge)
        try CeremonyChecks.origin(clientData, allowedBy: relyingParty)
        try CeremonyChecks.frame(clientData, allowedBy: relyingParty)
        let authenticatorData = try Self.authenticatorData(response.response.authenticatorData.bytes)
        try CeremonyChecks.rpIDHash(authenticatorData, of: relyingParty)
        try CeremonyChecks.userPresent(authenticatorData)
        try CeremonyChecks.userVerified(authenticatorData, requirement: expected.userVerification)
        try CeremonyChecks.backupFlags(authenticatorData)
        try Self.backupEligibility(authenticatorData, matches: credential)
        try Self.signature(
            response.response.signature.bytes, over: authenticatorData.bytes + CeremonyChecks.hash(clientDataJSON),
            by: credential)
        let regressed = try signCount(authenticatorData.signCount, after: credential.signCount)
        return VerifiedAssertion(
            signCount: regressed ? credential.signCount : authenticatorData.signCount,
            userVerified: authenticatorData.flags.contains(.userVerified),
            backupState: authenticatorData.flags.contains(.backupState), signCountRegressed: regressed)
    }

    /// §7.2 step 5: when the options listed credentials, the one used is among them.
    static func allowed(_ rawID: [UInt8], in allowCredentials: [[UInt8]]) throws(WebAuthnError) {
        guard allowCredentials.isEmpty || allowCredentials.contains(rawID) else { throw .credentialNotAllowed }
    }

    /// §7.2 step 6: the credential is registered and belongs to the user signing in. With a
    /// user identified beforehand the credential must be theirs and a `userHandle`, if sent,
    /// theirs too; without one (usernameless), `userHandle` is required and must be the
    /// credential's user's.
    static func owner(of credential: CredentialRecord?, userHandle: [UInt8]?, identified: [UInt8]?) throws(WebAuthnError)
        -> CredentialRecord
    {
        if let identified {
            guard let credential else { throw .unknownCredential }
            guard credential.userHandle == identified else { throw .userHandleMismatch }
            if let userHandle, userHandle != identified { throw .userHandleMismatch }
            return credential
        }
        guard let userHandle, !userHandle.isEmpty else { throw .userHandleMissing }
        guard let credential else { throw .unknownCredential }
        guard credential.userHandle == userHandle else { throw .userHandleMismatch }
        return credential
    }

    /// §7.2 step 15's input: authenticator data that parses exactly, and carries no attested
    /// credential data (AT is for registration only).
    static func authenticatorData(_ bytes: [UInt8]) throws(WebAuthnError) -> AuthenticatorData {
        let data: AuthenticatorData
        do {
            data = try AuthenticatorData(parsing: bytes)
        } catch {
            throw .format(error)
        }
        guard !data.flags.contains(.attestedCredentialData) else {
            throw .attestedCredentialData("an assertion must not carry attested credential data")
        }
        return data
    }

    /// §7.2 step 19: BE is fixed when a credential is created; a change means another
    /// authenticator or a forgery.
    static func backupEligibility(_ data: AuthenticatorData, matches credential: CredentialRecord) throws(WebAuthnError) {
        guard data.flags.contains(.backupEligible) == credential.backupEligible else {
            throw .invalidBackupFlags("BE differs from the registered credential's")
        }
    }

    /// §7.2 step 21: the signature over `authData ‖ SHA-256(clientDataJSON)` verifies with the
    /// credential's key.
    static func signature(_ signature: [UInt8], over data: [UInt8], by credential: CredentialRecord) throws(WebAuthnError) {
        guard credential.publicKey.isValidSignature(signature, for: data) else { throw .invalidSignature }
    }

    /// §7.2 step 22: a counter that is in use must increase. Both zero means the authenticator
    /// keeps no counter (synced passkeys). Returns whether it regressed and the tenant lets the
    /// sign-in through anyway.
    func signCount(_ received: UInt32, after stored: UInt32) throws(WebAuthnError) -> Bool {
        guard received != 0 || stored != 0 else { return false }
        guard received <= stored else { return false }
        switch relyingParty.signCountRegression {
        case .reject: throw .signCountRegression(stored: stored, received: received)
        case .flag: return true
        }
    }
}
