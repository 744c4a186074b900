import CountersignWebAuthn
import Crypto

/// The verification steps registration (§7.1) and authentication (§7.2) share: the client
/// data's type, challenge, origin and frame, and the authenticator data's RP ID hash, presence,
/// verification and backup flags. Each is one rule and one error.
enum CeremonyChecks {
    /// §7.1 steps 5–8 / §7.2 steps 7–10: `clientDataJSON` is UTF-8 JSON with the members a
    /// client must write.
    static func clientData(_ bytes: [UInt8]) throws(WebAuthnError) -> CollectedClientData {
        do {
            return try CollectedClientData(parsing: bytes)
        } catch {
            throw .format(error)
        }
    }

    /// §7.1 step 9 / §7.2 step 11: `C.type` names this ceremony, so that a signature made for
    /// signing in cannot register a credential, nor the reverse.
    static func type(_ data: CollectedClientData, is expected: String) throws(WebAuthnError) {
        guard data.type == expected else { throw .wrongCeremonyType(data.type) }
    }

    /// §7.1 step 10 / §7.2 step 12: `C.challenge` is the base64url of the challenge this
    /// ceremony issued, exactly.
    static func challenge(_ data: CollectedClientData, is expected: [UInt8]) throws(WebAuthnError) {
        guard let received = Base64URLBytes(base64URL: data.challenge), !received.bytes.isEmpty,
              received.bytes == expected
        else { throw .challengeMismatch }
    }

    /// §7.1 step 11 / §7.2 step 13 (§13.4.9): `C.origin` is one the relying party lists,
    /// compared as exact strings.
    static func origin(_ data: CollectedClientData, allowedBy relyingParty: RelyingParty) throws(WebAuthnError) {
        guard relyingParty.origins.contains(data.origin) else { throw .originNotAllowed(data.origin) }
    }

    /// §7.1 step 12 / §7.2 step 14: a ceremony in a cross-origin iframe only where the relying
    /// party expects one, under a top-level origin it lists.
    static func frame(_ data: CollectedClientData, allowedBy relyingParty: RelyingParty) throws(WebAuthnError) {
        if let topOrigin = data.topOrigin {
            guard relyingParty.topOrigins.contains(topOrigin) else {
                throw .crossOriginNotAllowed("top-level origin \(topOrigin) is not allowed")
            }
        } else if data.crossOrigin == true {
            guard !relyingParty.topOrigins.isEmpty else { throw .crossOriginNotAllowed("crossOrigin is true") }
        }
    }

    /// §7.1 step 15 / §7.2 step 15: the authenticator scoped the credential to this RP ID.
    static func rpIDHash(_ data: AuthenticatorData, of relyingParty: RelyingParty) throws(WebAuthnError) {
        guard data.rpIDHash == relyingParty.idHash else { throw .rpIDHashMismatch }
    }

    /// §7.1 step 16 / §7.2 step 16: the user was present.
    static func userPresent(_ data: AuthenticatorData) throws(WebAuthnError) {
        guard data.flags.contains(.userPresent) else { throw .userNotPresent }
    }

    /// §7.1 step 17 / §7.2 step 17: the user was verified where the ceremony required it;
    /// otherwise the UV flag is only recorded.
    static func userVerified(_ data: AuthenticatorData, requirement: UserVerificationRequirement) throws(WebAuthnError) {
        if requirement == .required, !data.flags.contains(.userVerified) { throw .userNotVerified }
    }

    /// §7.1 step 18 / §7.2 step 18: a credential that cannot be backed up is not backed up.
    static func backupFlags(_ data: AuthenticatorData) throws(WebAuthnError) {
        if data.flags.contains(.backupState), !data.flags.contains(.backupEligible) {
            throw .invalidBackupFlags("BS is set while BE is clear")
        }
    }

    /// SHA-256 of `clientDataJSON`, which the authenticator signed (§7.1 step 13, §7.2 step 19).
    static func hash(_ clientDataJSON: [UInt8]) -> [UInt8] {
        Array(SHA256.hash(data: clientDataJSON))
    }
}
