import CountersignCBOR
import Testing

/// Hex spelling of CBOR test vectors, as RFC 8949 and the WebAuthn specification print them.
extension Array where Element == UInt8 {
    init(hex: String) {
        let digits = hex.filter { !$0.isWhitespace }.map { UInt8(String($0), radix: 16)! }
        self = stride(from: 0, to: digits.count, by: 2).map { digits[$0] << 4 | digits[$0 + 1] }
    }

    var hex: String {
        map { ($0 < 16 ? "0" : "") + String($0, radix: 16) }.joined()
    }
}

/// Bytes the decoder must refuse, and the error it must give.
struct Malformed: Sendable, CustomTestStringConvertible {
    let hex: String
    let error: CBORError
    let why: String

    init(_ hex: String, _ error: CBORError, _ why: String) {
        self.hex = hex
        self.error = error
        self.why = why
    }

    var bytes: [UInt8] { [UInt8](hex: hex) }
    var testDescription: String { "\(why): \(hex)" }
}
