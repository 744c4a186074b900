/// The CTAP2 canonical order of encoded map keys (CTAP 2.1 §8 "Message Encoding"): lower major
/// type first, then the shorter encoding, then bytewise.
///
/// This is not RFC 7049's length-first order nor RFC 8949's plain bytewise one: a key `24`
/// (`18 18`) precedes `-1` (`20`) here. Authenticators sort this way, and the bytes of a
/// credential public key are signed over, so the decoder checks and the encoder writes exactly
/// this order.
enum CanonicalKeyOrder {
    /// Whether encoded key `a` sorts strictly before `b`; both are non-empty.
    static func precedes(_ a: UnsafeBufferPointer<UInt8>, _ b: UnsafeBufferPointer<UInt8>) -> Bool {
        compare(a, b) < 0
    }

    /// Negative, zero or positive as `a` sorts before, equal to or after `b`.
    static func compare(_ a: UnsafeBufferPointer<UInt8>, _ b: UnsafeBufferPointer<UInt8>) -> Int {
        let majorA = a[0] >> 5, majorB = b[0] >> 5
        if majorA != majorB { return majorA < majorB ? -1 : 1 }
        if a.count != b.count { return a.count < b.count ? -1 : 1 }
        for index in 0..<a.count where a[index] != b[index] {
            return a[index] < b[index] ? -1 : 1
        }
        return 0
    }
}
