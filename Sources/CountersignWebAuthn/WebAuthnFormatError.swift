import CountersignCBOR

/// Why bytes that claim to be WebAuthn structures are not: the client data, the attestation
/// object, the authenticator data or a COSE key. A relying party turns each into a failed
/// ceremony; the authenticator side never produces them.
public enum WebAuthnFormatError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The CBOR of `part` (`attestationObject`, `credentialPublicKey`, `extensions`) is malformed.
    case cbor(CBORError, part: String)
    /// `clientDataJSON` is not UTF-8 JSON holding an object.
    case clientDataNotJSON
    /// A member of the client data is missing or has the wrong type.
    case clientDataMember(String)
    /// A member of the attestation object is missing or has the wrong type.
    case attestationObjectMember(String)
    /// Authenticator data shorter than its 37 fixed bytes.
    case authenticatorDataTooShort
    /// The AT flag is set but the attested credential data is missing or cut short.
    case attestedCredentialDataTruncated
    /// Bytes remain after the attested credential data and the extensions.
    case leftoverBytes
    /// The ED flag is set but no extensions map follows, or what follows is not a map.
    case extensionsMissing
    /// The credential public key is not a COSE key Countersign can use; the reason says why.
    case publicKey(String)
    /// A COSE algorithm Countersign does not verify.
    case unsupportedAlgorithm(Int64)

    public var description: String {
        switch self {
        case .cbor(let error, let part): "\(part) is not valid CBOR (\(error))"
        case .clientDataNotJSON: "clientDataJSON is not a JSON object"
        case .clientDataMember(let name): "clientDataJSON member \(name) is missing or has the wrong type"
        case .attestationObjectMember(let name): "attestationObject member \(name) is missing or has the wrong type"
        case .authenticatorDataTooShort: "authenticator data is shorter than 37 bytes"
        case .attestedCredentialDataTruncated: "attested credential data is missing or cut short"
        case .leftoverBytes: "authenticator data has bytes left over"
        case .extensionsMissing: "the ED flag is set but no extensions map follows"
        case .publicKey(let reason): "credential public key: \(reason)"
        case .unsupportedAlgorithm(let alg): "COSE algorithm \(alg) is not supported"
        }
    }
}
