import Crypto
import Foundation

/// The signature every device call carries after enrollment: a compact JWS (ES256) in the
/// `Authorization: Device <jws>` header, signed by the device's signing key, with the device id
/// as `kid` and claims that pin it to one request:
///
/// ```json
/// {"htm":"PATCH","htu":"https://auth.example.com/device/v1/self","iat":1790000000,
///  "jti":"3q2-7wX…","body_sha256":"47DEQpj8…"}
/// ```
///
/// The server recomputes method, URL and body digest from the request it received, checks the
/// time against its window and records `jti` so the same signature is never accepted twice.
public struct DeviceRequestSignature: Sendable {
    /// The `typ` header value.
    public static let type = "countersign-request+jwt"
    /// The HTTP authorization scheme.
    public static let scheme = "Device"

    public let jws: CompactJWS
    public let deviceID: String
    public let method: String
    public let url: String
    public let issuedAt: Int64
    public let nonce: String
    public let bodyDigest: String

    /// Signs a request. `nonce` defaults to 128 random bits.
    public static func sign(
        method: String, url: String, body: Data, deviceID: String, signer: some ES256Signer,
        now: Date = Date(), nonce: String = randomNonce()
    ) throws -> DeviceRequestSignature {
        let claims = JSONValue.object([
            "htm": .string(method.uppercased()),
            "htu": .string(url),
            "iat": .integer(Int64(now.timeIntervalSince1970.rounded(.down))),
            "jti": .string(nonce),
            "body_sha256": .string(digest(of: body)),
        ])
        let jws = try CompactJWS.sign(
            header: ["typ": .string(type), "kid": .string(deviceID)], payload: claims.canonicalData, signer: signer)
        return try parse(jws.serialized)
    }

    /// 128 random bits, base64url.
    public static func randomNonce() -> String {
        var generator = SystemRandomNumberGenerator()
        return Data((0..<16).map { _ in UInt8.random(in: .min ... .max, using: &generator) }).base64URLEncodedString
    }

    /// The base64url SHA-256 of a body (of the empty string for a request without one).
    public static func digest(of body: Data) -> String {
        Data(SHA256.hash(data: body)).base64URLEncodedString
    }

    /// The value of the `Authorization` header.
    public var authorizationHeader: String { "\(Self.scheme) \(jws.serialized)" }

    /// Parses the value of an `Authorization` header. The signature itself is not checked here:
    /// the caller first finds the device named by `deviceID`, then calls `verify`.
    public static func parse(authorizationHeader value: String?) throws(DeviceRequestError) -> DeviceRequestSignature {
        guard let value, !value.isEmpty else { throw .missingSignature }
        let prefix = scheme + " "
        guard value.count > prefix.count, value.prefix(prefix.count).lowercased() == prefix.lowercased() else {
            throw .malformed("the Authorization header must use the \(scheme) scheme")
        }
        return try parse(String(value.dropFirst(prefix.count)).trimmingCharacters(in: .whitespaces))
    }

    /// Ids and nonces are stored and compared as text: a control character (NUL above all, which
    /// PostgreSQL cannot store), a space (no id the server issues has one, and a header value's
    /// spaces are easily lost or added on the way) or a character outside ASCII has no place in
    /// one. "Printable" here is visible: `!` to `~`, the space excluded.
    private static func isPrintableASCII(_ scalar: Unicode.Scalar) -> Bool { (0x21...0x7E).contains(scalar.value) }

    /// Parses a compact JWS and its claims.
    public static func parse(_ text: String) throws(DeviceRequestError) -> DeviceRequestSignature {
        let jws: CompactJWS
        do { jws = try CompactJWS(parsing: text) } catch { throw .malformed(error.description) }
        guard jws.type == type else { throw .malformed("typ must be \"\(type)\"") }
        guard let kid = jws.keyID, !kid.isEmpty else { throw .malformed("kid (the device id) is missing") }
        guard kid.unicodeScalars.allSatisfy(Self.isPrintableASCII) else {
            throw .malformed("kid (the device id) must be printable ASCII without spaces (! to ~)")
        }
        let claims: JSONValue
        do { claims = try jws.payloadJSON() } catch { throw .malformed(error.description) }
        guard let method = claims["htm"]?.stringValue, let url = claims["htu"]?.stringValue,
              let issuedAt = claims["iat"]?.integerValue, let nonce = claims["jti"]?.stringValue,
              let bodyDigest = claims["body_sha256"]?.stringValue else {
            throw .malformed("the claims htm, htu, iat, jti and body_sha256 are all required")
        }
        guard (16...128).contains(nonce.unicodeScalars.count), nonce.unicodeScalars.allSatisfy(Self.isPrintableASCII) else {
            throw .malformed("jti must be 16 to 128 printable ASCII characters without spaces (! to ~)")
        }
        return DeviceRequestSignature(
            jws: jws, deviceID: kid, method: method, url: url, issuedAt: issuedAt, nonce: nonce, bodyDigest: bodyDigest)
    }

    /// Checks the signature against the device's key and the claims against the request the
    /// server actually received. Replay (a `jti` seen before) is the caller's to check, since it
    /// needs shared storage.
    public func verify(
        key: P256.Signing.PublicKey, method: String, url: String, body: Data, now: Date, window: TimeInterval
    ) throws(DeviceRequestError) {
        guard jws.isValid(for: key) else { throw .invalidSignature }
        guard self.method == method.uppercased() else { throw .methodMismatch }
        guard self.url == url else { throw .urlMismatch }
        let skew = now.timeIntervalSince1970 - TimeInterval(issuedAt)
        guard abs(skew) <= window else { throw .outsideTimeWindow }
        guard bodyDigest == Self.digest(of: body) else { throw .bodyMismatch }
    }
}

/// Why a device-signed request was refused. Every case is answered with HTTP 401.
public enum DeviceRequestError: Error, Sendable, Equatable, CustomStringConvertible {
    case missingSignature
    case malformed(String)
    case unknownDevice
    case deviceDeregistered
    case invalidSignature
    case methodMismatch
    case urlMismatch
    case outsideTimeWindow
    case replayed
    case bodyMismatch
    /// A device enrolled with a handover ticket, not approved yet, called anything but
    /// `GET` or `DELETE /self` (403, not 401: its signature is good).
    case handoverPending

    /// The `error` code on the wire.
    public var code: DeviceErrorCode {
        switch self {
        case .missingSignature: .missingSignature
        case .malformed: .malformedSignature
        case .unknownDevice: .unknownDevice
        case .deviceDeregistered: .deviceDeregistered
        case .invalidSignature: .invalidSignature
        case .methodMismatch, .urlMismatch: .requestMismatch
        case .outsideTimeWindow: .requestExpired
        case .replayed: .replayedRequest
        case .bodyMismatch: .bodyMismatch
        case .handoverPending: .handoverPending
        }
    }

    public var description: String {
        switch self {
        case .missingSignature: "the request carries no Authorization: Device signature"
        case .malformed(let why): "the device signature is malformed: \(why)"
        case .unknownDevice: "no device with this key id is enrolled"
        case .deviceDeregistered: "this device has been removed; enroll it again"
        case .invalidSignature: "the signature does not verify with the device's key"
        case .methodMismatch: "the signed method (htm) is not the method of this request"
        case .urlMismatch: "the signed URL (htu) is not the URL of this request"
        case .outsideTimeWindow: "the signature's time (iat) is outside the accepted window; check the device clock"
        case .replayed: "this signature (jti) has been used before"
        case .bodyMismatch: "the body does not match the signed digest (body_sha256)"
        case .handoverPending:
            "this device waits for the approval of the device that handed over to it; until then it may only read or remove itself"
        }
    }
}
