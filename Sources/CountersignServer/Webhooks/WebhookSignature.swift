import Crypto
import Foundation

/// The signature on every webhook call, so that a tenant's receiver can tell the server's calls
/// from anyone else's and refuse a recorded call played back later.
///
/// The header is `Countersign-Signature: t=<unix seconds>,v1=<hex>`, where `<hex>` is the
/// lower-case HMAC-SHA256, keyed with the webhook's secret exactly as it was shown (its ASCII
/// characters, not the bytes they encode), of `"<t>.<raw body>"`. The timestamp is inside the
/// MAC, so it cannot be moved forward to keep an old call fresh.
///
/// ```swift
/// let header = WebhookSignature.sign(body: body, secret: secret, at: Date())
/// try WebhookSignature.verify(header: header, body: body, secret: secret, now: Date())
/// ```
public enum WebhookSignature {
    public static let signatureHeader = "Countersign-Signature"
    public static let eventHeader = "Countersign-Event"
    public static let deliveryHeader = "Countersign-Delivery"
    /// How far a receiver lets the signature's time be from its own clock, either way.
    public static let defaultTolerance: TimeInterval = 300

    /// The header value for `body` sent at `date`.
    public static func sign(body: Data, secret: String, at date: Date) -> String {
        let timestamp = Int64(date.timeIntervalSince1970.rounded(.down))
        return "t=\(timestamp),v1=\(hex(mac(body: body, secret: secret, timestamp: timestamp)))"
    }

    /// What a receiver does: checks that `header` signs `body` with `secret`, at a time within
    /// `tolerance` of `now`. Several `v1` values are accepted (any one may match); members other
    /// than `t` and `v1` are ignored, so that a later scheme can be sent beside this one.
    public static func verify(header: String, body: Data, secret: String, now: Date,
                              tolerance: TimeInterval = defaultTolerance) throws(WebhookSignatureError) {
        var timestamp: Int64?
        var candidates: [Data] = []
        for member in header.split(separator: ",") {
            let parts = member.trimmingCharacters(in: .whitespaces).split(separator: "=", maxSplits: 1)
            guard parts.count == 2 else { throw .malformedHeader }
            switch parts[0] {
            case "t":
                guard timestamp == nil, let value = Int64(parts[1]) else { throw .malformedHeader }
                timestamp = value
            case "v1":
                guard let value = bytes(hex: parts[1]) else { throw .malformedHeader }
                candidates.append(value)
            default:
                continue
            }
        }
        guard let timestamp, !candidates.isEmpty else { throw .malformedHeader }
        guard abs(now.timeIntervalSince1970 - TimeInterval(timestamp)) <= tolerance else { throw .outsideTolerance }
        let expected = mac(body: body, secret: secret, timestamp: timestamp)
        // Every candidate is compared, so the time taken does not tell which one matched.
        var matched = false
        for candidate in candidates where Secrets.constantTimeEqual(candidate, expected) { matched = true }
        guard matched else { throw .mismatch }
    }

    private static func mac(body: Data, secret: String, timestamp: Int64) -> Data {
        var message = Data("\(timestamp).".utf8)
        message.append(body)
        return Data(HMAC<SHA256>.authenticationCode(for: message, using: SymmetricKey(data: Data(secret.utf8))))
    }

    private static func hex(_ data: Data) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var out: [UInt8] = []
        out.reserveCapacity(data.count * 2)
        for byte in data {
            out.append(digits[Int(byte >> 4)])
            out.append(digits[Int(byte & 0x0f)])
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// Lower-case hex only: the one spelling `sign` produces.
    private static func bytes(hex text: Substring) -> Data? {
        let utf8 = Array(text.utf8)
        guard !utf8.isEmpty, utf8.count % 2 == 0 else { return nil }
        func value(_ character: UInt8) -> UInt8? {
            switch character {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): character - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): character - UInt8(ascii: "a") + 10
            default: nil
            }
        }
        var out = Data(capacity: utf8.count / 2)
        for index in stride(from: 0, to: utf8.count, by: 2) {
            guard let high = value(utf8[index]), let low = value(utf8[index + 1]) else { return nil }
            out.append(high << 4 | low)
        }
        return out
    }
}

/// Why a receiver refuses a call's signature.
public enum WebhookSignatureError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The header is missing `t` or `v1`, or one of them is not a number or lower-case hex.
    case malformedHeader
    /// The signature's time is further from the receiver's clock than the tolerance: a call
    /// played back later, or a clock that is off.
    case outsideTolerance
    /// No `v1` value is the MAC of this body and time under this secret.
    case mismatch

    public var description: String {
        switch self {
        case .malformedHeader: "the signature header is not of the form t=<unix seconds>,v1=<hex>"
        case .outsideTolerance: "the signature's time is too far from the receiver's clock"
        case .mismatch: "the signature does not match the body and secret"
        }
    }
}
