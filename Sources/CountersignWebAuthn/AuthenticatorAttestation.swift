import CountersignCBOR

/// The attestation objects an authenticator without an attestation certificate can make, so
/// that an authenticator builds them without handling CBOR itself.
extension AttestationObject {
    /// `none` attestation (WebAuthn Level 3 §8.7): `fmt` "none" and an empty statement.
    public static func none(_ authenticatorData: AuthenticatorData) -> AttestationObject {
        AttestationObject(format: "none", statement: CBORMap(), authenticatorData: authenticatorData)
    }

    /// `packed` self attestation (§8.2, no `x5c`): `{alg, sig}`, where `sig` is the credential
    /// key's own signature over `authenticatorData ‖ SHA-256(clientDataJSON)` (ASN.1 DER for
    /// ECDSA) and `alg` that key's algorithm.
    public static func packedSelf(
        algorithm: COSEAlgorithm, signature: [UInt8], authenticatorData: AuthenticatorData
    ) -> AttestationObject {
        AttestationObject(
            format: "packed",
            statement: CBORMap([
                .init(key: .text("alg"), value: .init(algorithm.rawValue)),
                .init(key: .text("sig"), value: .bytes(signature)),
            ]),
            authenticatorData: authenticatorData)
    }
}
