import CountersignWebAuthn

/// The attestation a `PasskeyAuthenticator` gives with a new credential.
///
/// ```swift
/// let authenticator = PasskeyAuthenticator(store: store, attestation: .packed)
/// ```
public enum PasskeyAttestationFormat: String, Sendable, CaseIterable {
    /// `none`: an empty statement, and an all-zero AAGUID (WebAuthn Level 3 §8.7, §5.1.3).
    case none
    /// `packed` self attestation: the new key signs the registration itself (`{alg: -7, sig}`),
    /// and the attested data carries the authenticator's AAGUID. It proves the response was
    /// made with the key it registers, not what kind of device holds it.
    case packed

    /// The format a registration gets: `none` whenever the relying party asked for none (or
    /// did not ask; `attestation` defaults to "none"), or names preferred formats without
    /// `packed` — WebAuthn lets the client replace attestation in those cases, and a browser
    /// does.
    func effective(for options: PublicKeyCredentialCreationOptionsJSON) -> PasskeyAttestationFormat {
        guard self == .packed, ["indirect", "direct", "enterprise"].contains(options.attestation) else { return .none }
        guard options.attestationFormats.isEmpty || options.attestationFormats.contains("packed") else { return .none }
        return .packed
    }
}
