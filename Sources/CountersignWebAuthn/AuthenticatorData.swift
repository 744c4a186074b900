import CountersignCBOR

/// The flags byte of authenticator data (WebAuthn Level 3 §6.1). Bits 1 and 5 are reserved.
public struct AuthenticatorFlags: OptionSet, Sendable, Hashable {
    public let rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    /// UP: the user touched or otherwise showed presence.
    public static let userPresent = AuthenticatorFlags(rawValue: 0x01)
    /// UV: the authenticator verified the user (biometric, PIN).
    public static let userVerified = AuthenticatorFlags(rawValue: 0x04)
    /// BE: the credential may be backed up (synced); fixed at creation.
    public static let backupEligible = AuthenticatorFlags(rawValue: 0x08)
    /// BS: the credential is backed up now.
    public static let backupState = AuthenticatorFlags(rawValue: 0x10)
    /// AT: attested credential data follows the counter.
    public static let attestedCredentialData = AuthenticatorFlags(rawValue: 0x40)
    /// ED: an extensions map ends the data.
    public static let extensionData = AuthenticatorFlags(rawValue: 0x80)
}

/// `aaguid ‖ credentialIdLength ‖ credentialId ‖ credentialPublicKey` (§6.5.1).
public struct AttestedCredentialData: Sendable, Equatable {
    public var aaguid: [UInt8]
    public var credentialID: [UInt8]
    public var publicKey: COSEKey
    /// The key's CBOR exactly as the authenticator wrote it.
    public var publicKeyBytes: [UInt8]

    public init(aaguid: [UInt8], credentialID: [UInt8], publicKey: COSEKey) {
        self.aaguid = aaguid
        self.credentialID = credentialID
        self.publicKey = publicKey
        publicKeyBytes = publicKey.encoded
    }

    init(aaguid: [UInt8], credentialID: [UInt8], publicKey: COSEKey, publicKeyBytes: [UInt8]) {
        self.aaguid = aaguid
        self.credentialID = credentialID
        self.publicKey = publicKey
        self.publicKeyBytes = publicKeyBytes
    }
}

/// Authenticator data (WebAuthn Level 3 §6.1): `rpIdHash(32) ‖ flags(1) ‖ signCount(4, big
/// endian) ‖ attestedCredentialData? ‖ extensions?`. Parsing is exact: the AT flag requires the
/// attested data, the ED flag an extensions map, and no byte may be left over. The credential
/// public key must be in CTAP2 canonical CBOR, as §6.5.1.1 requires of authenticators.
public struct AuthenticatorData: Sendable, Equatable {
    /// The bytes the signature covers, as received.
    public let bytes: [UInt8]
    public let rpIDHash: [UInt8]
    public let flags: AuthenticatorFlags
    public let signCount: UInt32
    public let attestedCredentialData: AttestedCredentialData?
    public let extensions: CBORMap?

    public init(parsing bytes: [UInt8]) throws(WebAuthnFormatError) {
        guard bytes.count >= 37 else { throw .authenticatorDataTooShort }
        self.bytes = bytes
        rpIDHash = Array(bytes[0..<32])
        flags = AuthenticatorFlags(rawValue: bytes[32])
        signCount = bytes[33..<37].reduce(0) { $0 << 8 | UInt32($1) }
        var offset = 37
        if flags.contains(.attestedCredentialData) {
            guard bytes.count >= offset + 18 else { throw .attestedCredentialDataTruncated }
            let aaguid = Array(bytes[offset..<offset + 16])
            let idLength = Int(bytes[offset + 16]) << 8 | Int(bytes[offset + 17])
            offset += 18
            guard bytes.count >= offset + idLength else { throw .attestedCredentialDataTruncated }
            let credentialID = Array(bytes[offset..<offset + idLength])
            offset += idLength
            guard offset < bytes.count else { throw .attestedCredentialDataTruncated }
            let decoded: (value: CBORValue, length: Int)
            do {
                decoded = try CBORDecoder(options: .canonical).decodePrefix(bytes[offset...])
            } catch {
                throw .cbor(error, part: "credentialPublicKey")
            }
            let key = try COSEKey(decoded.value)
            attestedCredentialData = AttestedCredentialData(
                aaguid: aaguid, credentialID: credentialID, publicKey: key,
                publicKeyBytes: Array(bytes[offset..<offset + decoded.length]))
            offset += decoded.length
        } else {
            attestedCredentialData = nil
        }
        if flags.contains(.extensionData) {
            guard offset < bytes.count else { throw .extensionsMissing }
            let value: CBORValue
            do {
                value = try CBORDecoder().decode(bytes[offset...])
            } catch {
                throw .cbor(error, part: "extensions")
            }
            guard let map = value.map else { throw .extensionsMissing }
            extensions = map
        } else {
            guard offset == bytes.count else { throw .leftoverBytes }
            extensions = nil
        }
    }

    /// Builds authenticator data, setting AT and ED from what is given.
    public init(
        rpIDHash: [UInt8], flags: AuthenticatorFlags, signCount: UInt32,
        attestedCredentialData: AttestedCredentialData? = nil, extensions: CBORMap? = nil
    ) {
        var flags = flags
        flags.remove([.attestedCredentialData, .extensionData])
        if attestedCredentialData != nil { flags.insert(.attestedCredentialData) }
        if extensions != nil { flags.insert(.extensionData) }
        var bytes = rpIDHash
        bytes.append(flags.rawValue)
        bytes += [UInt8(signCount >> 24), UInt8(signCount >> 16 & 0xFF), UInt8(signCount >> 8 & 0xFF), UInt8(signCount & 0xFF)]
        if let attested = attestedCredentialData {
            bytes += attested.aaguid
            bytes += [UInt8(attested.credentialID.count >> 8), UInt8(attested.credentialID.count & 0xFF)]
            bytes += attested.credentialID
            bytes += attested.publicKeyBytes
        }
        if let extensions { bytes += CBOREncoder.encode(.map(extensions)) }
        self.bytes = bytes
        self.rpIDHash = rpIDHash
        self.flags = flags
        self.signCount = signCount
        self.attestedCredentialData = attestedCredentialData
        self.extensions = extensions
    }
}
