import Crypto
import Foundation

/// The hash algorithms a TPM names objects with (`TPMI_ALG_HASH`, TPM 2.0 Library Part 2 §6.3).
enum TPMHashAlgorithm: UInt16, Sendable {
    case sha1 = 0x0004
    case sha256 = 0x000B
    case sha384 = 0x000C
    case sha512 = 0x000D

    func digest(_ data: [UInt8]) -> [UInt8] {
        switch self {
        case .sha1: Array(Insecure.SHA1.hash(data: data))
        case .sha256: Array(SHA256.hash(data: data))
        case .sha384: Array(SHA384.hash(data: data))
        case .sha512: Array(SHA512.hash(data: data))
        }
    }
}

/// Reads TPM 2.0 wire structures: big-endian integers and `TPM2B_*` buffers (a UINT16 length,
/// then that many bytes). Every read checks the bounds first, so no input, however cut short or
/// garbled, reads past its end; and a structure must end where its last field does.
struct TPMReader {
    private let bytes: [UInt8]
    private let structure: String
    private var offset = 0

    init(_ bytes: [UInt8], structure: String) {
        self.bytes = bytes
        self.structure = structure
    }

    mutating func uint16(_ field: String) throws(AttestationFailure) -> UInt16 {
        try take(2, field).reduce(0) { $0 << 8 | UInt16($1) }
    }

    mutating func uint32(_ field: String) throws(AttestationFailure) -> UInt32 {
        try take(4, field).reduce(0) { $0 << 8 | UInt32($1) }
    }

    /// A `TPM2B_*` buffer's bytes.
    mutating func sized(_ field: String) throws(AttestationFailure) -> [UInt8] {
        let count = try uint16("\(field) size")
        return try take(Int(count), field)
    }

    mutating func skip(_ count: Int, _ field: String) throws(AttestationFailure) {
        _ = try take(count, field)
    }

    /// Whatever is left, for a union member read once its selector has been checked.
    mutating func rest() -> [UInt8] {
        defer { offset = bytes.count }
        return Array(bytes[offset...])
    }

    func finish() throws(AttestationFailure) {
        guard offset == bytes.count else {
            throw AttestationFailure("\(structure) has \(bytes.count - offset) bytes after its last field")
        }
    }

    private mutating func take(_ count: Int, _ field: String) throws(AttestationFailure) -> [UInt8] {
        guard count <= bytes.count - offset else { throw AttestationFailure("\(structure) is cut short in \(field)") }
        defer { offset += count }
        return Array(bytes[offset..<offset + count])
    }
}

/// `TPMS_ATTEST` (Part 2 §10.12.12): what the TPM signed in a TPM attestation's `certInfo`.
/// `clockInfo` and `firmwareVersion` are skipped, as WebAuthn ignores them; `attested` stays
/// unread until `type` has been checked, because `type` says what it holds.
struct TPMAttest: Sendable {
    /// `TPM_GENERATED_VALUE`, "\xFFTCG": the TPM made this structure itself.
    static let generatedValue: UInt32 = 0xFF54_4347
    /// `TPM_ST_ATTEST_CERTIFY`: the result of `TPM2_Certify`.
    static let certifyType: UInt16 = 0x8017

    let magic: UInt32
    let type: UInt16
    let qualifiedSigner: [UInt8]
    let extraData: [UInt8]
    let attested: [UInt8]

    init(parsing bytes: [UInt8]) throws(AttestationFailure) {
        var reader = TPMReader(bytes, structure: "certInfo")
        magic = try reader.uint32("magic")
        type = try reader.uint16("type")
        qualifiedSigner = try reader.sized("qualifiedSigner")
        extraData = try reader.sized("extraData")
        // TPMS_CLOCK_INFO: clock (8), resetCount (4), restartCount (4), safe (1).
        try reader.skip(17, "clockInfo")
        try reader.skip(8, "firmwareVersion")
        attested = reader.rest()
    }

    /// `attested` as the `TPMS_CERTIFY_INFO` of a `TPM_ST_ATTEST_CERTIFY` structure.
    func certifyInfo() throws(AttestationFailure) -> TPMCertifyInfo {
        try TPMCertifyInfo(parsing: attested)
    }
}

/// `TPMS_CERTIFY_INFO` (Part 2 §10.12.3): the name of the certified object.
struct TPMCertifyInfo: Sendable {
    let name: [UInt8]
    let qualifiedName: [UInt8]

    init(parsing bytes: [UInt8]) throws(AttestationFailure) {
        var reader = TPMReader(bytes, structure: "certInfo.attested")
        name = try reader.sized("name")
        qualifiedName = try reader.sized("qualifiedName")
        try reader.finish()
    }
}

/// `TPMT_PUBLIC` (Part 2 §12.2.4): the public area of the credential key, as the TPM holds it.
/// Only what a WebAuthn credential can be is read: an RSA or ECC signing key, whose `symmetric`
/// is `TPM_ALG_NULL` and whose scheme, if any, is a signature scheme with a hash.
struct TPMPublic: Sendable {
    enum Key: Sendable, Equatable {
        /// The modulus and the exponent, 0 already replaced by the default 2^16 + 1.
        case rsa(modulus: [UInt8], exponent: UInt32)
        case ecc(curve: UInt16, x: [UInt8], y: [UInt8])
    }

    static let rsaType: UInt16 = 0x0001
    static let eccType: UInt16 = 0x0023
    static let null: UInt16 = 0x0010
    static let rsaSchemes: Set<UInt16> = [0x0014, 0x0016]  // TPM_ALG_RSASSA, TPM_ALG_RSAPSS
    static let eccSchemes: Set<UInt16> = [0x0018]  // TPM_ALG_ECDSA
    static let keyDerivationSchemes: Set<UInt16> = [0x0007, 0x0020, 0x0021, 0x0022]  // MGF1, KDF1 56A, KDF2, KDF1 108

    /// The bytes as received: the object's name is their hash.
    let bytes: [UInt8]
    let nameAlgorithm: TPMHashAlgorithm
    let objectAttributes: UInt32
    let key: Key

    init(parsing bytes: [UInt8]) throws(AttestationFailure) {
        self.bytes = bytes
        var reader = TPMReader(bytes, structure: "pubArea")
        let type = try reader.uint16("type")
        let nameAlg = try reader.uint16("nameAlg")
        guard let nameAlgorithm = TPMHashAlgorithm(rawValue: nameAlg) else {
            throw AttestationFailure("pubArea nameAlg \(Self.hex(nameAlg)) is not SHA-1, SHA-256, SHA-384 or SHA-512")
        }
        self.nameAlgorithm = nameAlgorithm
        objectAttributes = try reader.uint32("objectAttributes")
        _ = try reader.sized("authPolicy")
        guard try reader.uint16("symmetric") == Self.null else {
            throw AttestationFailure("pubArea symmetric is not TPM_ALG_NULL, as a signing key's is")
        }
        switch type {
        case Self.rsaType:
            try Self.scheme(&reader, oneOf: Self.rsaSchemes, field: "scheme")
            let keyBits = try reader.uint16("keyBits")
            let exponent = try reader.uint32("exponent")
            let modulus = try reader.sized("unique")
            guard modulus.count * 8 == Int(keyBits) else { throw AttestationFailure("pubArea unique is not keyBits long") }
            key = .rsa(modulus: modulus, exponent: exponent == 0 ? 65537 : exponent)
        case Self.eccType:
            try Self.scheme(&reader, oneOf: Self.eccSchemes, field: "scheme")
            let curve = try reader.uint16("curveID")
            try Self.scheme(&reader, oneOf: Self.keyDerivationSchemes, field: "kdf")
            key = .ecc(curve: curve, x: try reader.sized("unique.x"), y: try reader.sized("unique.y"))
        default:
            throw AttestationFailure("pubArea type \(Self.hex(type)) is neither TPM_ALG_RSA nor TPM_ALG_ECC")
        }
        try reader.finish()
    }

    /// The object's name (Part 1 §16): `nameAlg ‖ H_nameAlg(pubArea)`.
    var name: [UInt8] {
        let alg = nameAlgorithm.rawValue
        return [UInt8(alg >> 8), UInt8(alg & 0xFF)] + nameAlgorithm.digest(bytes)
    }

    /// A `TPMT_*_SCHEME`: `TPM_ALG_NULL`, or one of `schemes` followed by its hash algorithm.
    private static func scheme(_ reader: inout TPMReader, oneOf schemes: Set<UInt16>, field: String) throws(AttestationFailure) {
        let scheme = try reader.uint16(field)
        guard scheme != null else { return }
        guard schemes.contains(scheme) else { throw AttestationFailure("pubArea \(field) \(hex(scheme)) is not one this key type takes") }
        _ = try reader.uint16("\(field).hashAlg")
    }

    private static func hex(_ value: UInt16) -> String {
        "0x" + String(value, radix: 16, uppercase: true).leftPadded(to: 4)
    }
}

extension String {
    fileprivate func leftPadded(to width: Int) -> String {
        String(repeating: "0", count: max(0, width - count)) + self
    }
}
