import CountersignWebAuthn

/// Why a WebAuthn registration or authentication ceremony failed (WebAuthn Level 3 §7.1,
/// §7.2): one case per verification step, each with the code the passkey endpoints answer
/// and a message for the page. A failed ceremony stores nothing and its challenge stays used.
enum WebAuthnError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The response is not the JSON form the ceremony expects (an assertion posted for a
    /// registration, a missing or ill-typed member, `id` other than `rawId`, `type` other than
    /// `public-key`).
    case malformedResponse(String)
    /// The client data, attestation object, authenticator data or key could not be parsed.
    case format(WebAuthnFormatError)
    /// `C.type` is not the ceremony's (`webauthn.create` / `webauthn.get`).
    case wrongCeremonyType(String)
    /// `C.challenge` is not the challenge this ceremony issued.
    case challengeMismatch
    /// The ceremony is unknown, already used, expired, or bound to another browser.
    case challengeNotFound
    /// `C.origin` is not one of the relying party's origins.
    case originNotAllowed(String)
    /// `crossOrigin` or `topOrigin` says the ceremony ran in an iframe the relying party does not expect.
    case crossOriginNotAllowed(String)
    /// `rpIdHash` is not SHA-256 of the RP ID.
    case rpIDHashMismatch
    /// The UP flag is clear.
    case userNotPresent
    /// User verification was required and the UV flag is clear.
    case userNotVerified
    /// BS set while BE is clear, or BE differs from the registered credential's.
    case invalidBackupFlags(String)
    /// Registration without attested credential data, or an assertion with it.
    case attestedCredentialData(String)
    /// The credential's algorithm was not offered in `pubKeyCredParams`.
    case algorithmNotAllowed(Int64)
    /// `fmt` names a format Countersign does not verify.
    case unsupportedAttestationFormat(String)
    /// The attestation statement did not verify.
    case invalidAttestation(String)
    /// The attestation verified but does not chain to a trusted root, and the tenant does not
    /// accept unattested authenticators.
    case attestationNotTrusted(String)
    /// The credential ID is longer than 1023 bytes.
    case credentialIDTooLong
    /// The credential ID in the authenticator data is not `rawId`.
    case credentialIDMismatch
    /// The credential is already registered (to this or any other user or tenant).
    case credentialAlreadyRegistered
    /// The credential is not among `allowCredentials`.
    case credentialNotAllowed
    /// No credential with this ID is registered for this tenant.
    case unknownCredential
    /// A usernameless sign-in without `userHandle`.
    case userHandleMissing
    /// `userHandle` is not the handle of the credential's user, or the credential belongs to
    /// another user than the one signing in.
    case userHandleMismatch
    /// The assertion signature does not verify with the credential's key.
    case invalidSignature
    /// The signature counter did not increase: the credential may have been cloned.
    case signCountRegression(stored: UInt32, received: UInt32)
    /// Passkeys are switched off for the tenant.
    case disabled
    /// The FIDO metadata's latest status for the authenticator's model is one under which no
    /// new credential is registered (`MetadataStatusReport.refusing`).
    case authenticatorStatusRefused(status: String, model: String)
    /// The tenant's passkey rules for the user do not allow this authenticator: its model, a
    /// synced passkey where only device-bound ones are allowed, or no trusted attestation.
    case authenticatorNotAllowed(String)

    /// The `error` member of the JSON answer.
    var code: String {
        switch self {
        case .malformedResponse: "malformed_response"
        case .format: "malformed_response"
        case .wrongCeremonyType: "wrong_ceremony_type"
        case .challengeMismatch: "challenge_mismatch"
        case .challengeNotFound: "challenge_not_found"
        case .originNotAllowed: "origin_not_allowed"
        case .crossOriginNotAllowed: "cross_origin_not_allowed"
        case .rpIDHashMismatch: "rp_id_mismatch"
        case .userNotPresent: "user_not_present"
        case .userNotVerified: "user_not_verified"
        case .invalidBackupFlags: "invalid_backup_flags"
        case .attestedCredentialData: "invalid_authenticator_data"
        case .algorithmNotAllowed: "algorithm_not_allowed"
        case .unsupportedAttestationFormat: "unsupported_attestation_format"
        case .invalidAttestation: "invalid_attestation"
        case .attestationNotTrusted: "attestation_not_trusted"
        case .credentialIDTooLong: "credential_id_too_long"
        case .credentialIDMismatch: "credential_id_mismatch"
        case .credentialAlreadyRegistered: "credential_exists"
        case .credentialNotAllowed: "credential_not_allowed"
        case .unknownCredential: "unknown_credential"
        case .userHandleMissing: "user_handle_missing"
        case .userHandleMismatch: "user_handle_mismatch"
        case .invalidSignature: "invalid_signature"
        case .signCountRegression: "sign_count_regression"
        case .disabled: "passkeys_disabled"
        case .authenticatorStatusRefused: "authenticator_status_refused"
        case .authenticatorNotAllowed: "authenticator_not_allowed"
        }
    }

    var description: String {
        switch self {
        case .malformedResponse(let reason): "The response is malformed: \(reason)."
        case .format(let error): "The response is malformed: \(error)."
        case .wrongCeremonyType(let type): "The client data is of type \"\(type)\", not this ceremony's."
        case .challengeMismatch: "The client data does not carry this ceremony's challenge."
        case .challengeNotFound: "This passkey request is unknown, used or expired. Start again."
        case .originNotAllowed(let origin): "The origin \(origin) is not allowed for this relying party."
        case .crossOriginNotAllowed(let reason): "The ceremony ran in a frame this relying party does not allow: \(reason)."
        case .rpIDHashMismatch: "The authenticator data is for another relying party ID."
        case .userNotPresent: "The authenticator did not test user presence."
        case .userNotVerified: "User verification is required and the authenticator did not verify the user."
        case .invalidBackupFlags(let reason): "The backup flags are invalid: \(reason)."
        case .attestedCredentialData(let reason): "The authenticator data is invalid: \(reason)."
        case .algorithmNotAllowed(let alg): "The credential's algorithm \(alg) was not offered."
        case .unsupportedAttestationFormat(let format): "The attestation format \"\(format)\" is not supported."
        case .invalidAttestation(let reason): "The attestation statement does not verify: \(reason)."
        case .attestationNotTrusted(let reason): "The authenticator's attestation is not trusted: \(reason)."
        case .credentialIDTooLong: "The credential ID is longer than 1023 bytes."
        case .credentialIDMismatch: "The credential ID in the authenticator data is not the response's rawId."
        case .credentialAlreadyRegistered: "This passkey is already registered."
        case .credentialNotAllowed: "This passkey was not among the ones asked for."
        case .unknownCredential: "This passkey is not registered here."
        case .userHandleMissing: "The authenticator returned no user handle."
        case .userHandleMismatch: "This passkey belongs to another account."
        case .invalidSignature: "The passkey's signature does not verify."
        case .signCountRegression(let stored, let received):
            "The passkey's signature counter went from \(stored) to \(received): it may have been copied."
        case .disabled: "Passkeys are not enabled here."
        case .authenticatorStatusRefused(let status, let model):
            "The FIDO Alliance's metadata reports \(model) as \(status): no new passkey of it is accepted."
        case .authenticatorNotAllowed(let reason): "This authenticator is not allowed here: \(reason)."
        }
    }
}

extension WebAuthnError: WireFailure {
    /// Every ceremony failure is the client's: 400, except what the tenant's rules refuse of a
    /// valid response (passkeys switched off, an authenticator not allowed): 403.
    var wireError: WireError {
        switch self {
        case .disabled, .authenticatorStatusRefused, .authenticatorNotAllowed:
            WireError(.forbidden, code: code, description: description)
        default:
            WireError(.badRequest, code: code, description: description)
        }
    }
}
