import Crypto
import Foundation

/// Produces ES256 signatures. A software key, a Secure Enclave key or a hardware token can
/// stand behind it; the signature is the 64-byte raw `r ‖ s` form that JWS uses.
///
/// Not `Sendable` itself, so that `P256.Signing.PrivateKey` can be one everywhere: CryptoKit
/// (what `Crypto` is on Apple platforms) does not declare its key types `Sendable` in the iOS 17
/// and 18 SDKs, and a conformance here would add that to a type Countersign does not own. A
/// signer that is kept and shared, as in `DeviceKeys`, is an `any ES256Signer & Sendable`.
public protocol ES256Signer {
    var publicKey: P256.Signing.PublicKey { get }
    func signature(for data: Data) throws -> Data
}

extension P256.Signing.PrivateKey: ES256Signer {
    public func signature(for data: Data) throws -> Data {
        try self.signature(for: data).rawRepresentation
    }
}

/// A compact JWS (RFC 7515 §7.1) signed with ES256: `header.payload.signature`.
public struct CompactJWS: Sendable, Equatable {
    /// The protected header, as parsed.
    public let header: JSONValue
    /// The payload bytes (base64url-decoded).
    public let payload: Data
    /// The raw `r ‖ s` signature.
    public let signature: Data
    /// The serialised form.
    public let serialized: String
    /// `base64url(header) . base64url(payload)`: the bytes the signature covers.
    public let signingInput: Data

    /// Signs `payload` with `signer`. `alg` is always set to ES256.
    public static func sign(header: [String: JSONValue], payload: Data, signer: some ES256Signer) throws -> CompactJWS {
        var fields = header
        fields["alg"] = .string("ES256")
        let headerValue = JSONValue.object(fields)
        let input = headerValue.canonicalData.base64URLEncodedString + "." + payload.base64URLEncodedString
        let signature = try signer.signature(for: Data(input.utf8))
        return CompactJWS(header: headerValue, payload: payload, signature: signature,
                          serialized: input + "." + signature.base64URLEncodedString, signingInput: Data(input.utf8))
    }

    private init(header: JSONValue, payload: Data, signature: Data, serialized: String, signingInput: Data) {
        self.header = header
        self.payload = payload
        self.signature = signature
        self.serialized = serialized
        self.signingInput = signingInput
    }

    /// Parses a compact serialisation. Only the structure is checked here; call `verify`.
    public init(parsing text: String) throws(JWSError) {
        let parts = text.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3 else { throw .malformed("a compact JWS has three dot-separated parts") }
        guard let headerBytes = Data(base64URLEncoded: parts[0]),
              let header = try? JSONValue(parsing: headerBytes), case .object = header else {
            throw .malformed("the header is not base64url-encoded JSON")
        }
        guard let payload = Data(base64URLEncoded: parts[1]) else { throw .malformed("the payload is not base64url") }
        guard let signature = Data(base64URLEncoded: parts[2]) else { throw .malformed("the signature is not base64url") }
        guard header["alg"]?.stringValue == "ES256" else { throw .unsupportedAlgorithm(header["alg"]?.stringValue ?? "none") }
        if header["crit"] != nil { throw .malformed("no critical header parameters are understood") }
        self.header = header
        self.payload = payload
        self.signature = signature
        self.serialized = text
        self.signingInput = Data("\(parts[0]).\(parts[1])".utf8)
    }

    /// Whether the signature was made by `key` over this JWS's signing input.
    public func isValid(for key: P256.Signing.PublicKey) -> Bool {
        guard signature.count == 64,
              let ecdsa = try? P256.Signing.ECDSASignature(rawRepresentation: signature) else { return false }
        return key.isValidSignature(ecdsa, for: signingInput)
    }

    /// Throws unless `key` made the signature.
    public func verify(with key: P256.Signing.PublicKey) throws(JWSError) {
        guard isValid(for: key) else { throw .badSignature }
    }

    /// The payload parsed as JSON.
    public func payloadJSON() throws(JWSError) -> JSONValue {
        guard let value = try? JSONValue(parsing: payload) else { throw .malformed("the payload is not JSON") }
        return value
    }

    /// The key id (`kid`) of the header, if any.
    public var keyID: String? { header["kid"]?.stringValue }
    /// The type (`typ`) of the header, if any.
    public var type: String? { header["typ"]?.stringValue }
}

/// Why a JWS was refused.
public enum JWSError: Error, Sendable, Equatable, CustomStringConvertible {
    case malformed(String)
    case unsupportedAlgorithm(String)
    case badSignature

    public var description: String {
        switch self {
        case .malformed(let why): "malformed JWS: \(why)"
        case .unsupportedAlgorithm(let alg): "algorithm \"\(alg)\" is not accepted; use ES256"
        case .badSignature: "the signature does not verify"
        }
    }
}
