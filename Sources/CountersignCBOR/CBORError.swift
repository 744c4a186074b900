/// Why a byte string is not the CBOR item Countersign accepts.
///
/// Every case carries the byte offset of the offending item's head, counted from the first byte
/// handed to the decoder (not from a slice's `startIndex`), so a rejected attestation object can
/// be pinned to the exact byte in a log or a test.
public enum CBORError: Error, Sendable, Equatable {
    /// The input ends inside an item: its head is cut off, or an element is missing. When no
    /// byte of the item is present, the offset is the input's length.
    case truncated(offset: Int)
    /// Additional information 31. Indefinite lengths let one item be spelt many ways and make
    /// sizes unknowable up front; WebAuthn never needs them, so they are never accepted.
    case indefiniteLength(offset: Int)
    /// Additional information 28...30, which RFC 8949 reserves.
    case reservedAdditionalInfo(offset: Int)
    /// A longer integer, length or float encoding than needed (canonical mode only).
    case nonMinimalEncoding(offset: Int)
    /// A map key that does not follow the previous one in CTAP2 canonical order (canonical mode
    /// only). The offset is that of the out-of-order key.
    case unsortedMapKeys(offset: Int)
    /// A map key equal to an earlier key of the same map. Always refused: two readers could
    /// otherwise see two different values for `alg` or `fmt`. The offset is that of the repeat.
    case duplicateMapKey(offset: Int)
    /// An array, map or tag nested deeper than `Options.maximumDepth`.
    case depthLimitExceeded(offset: Int)
    /// An item claims more bytes or elements than remain, or the input is longer than
    /// `Options.maximumInputLength`. Checked before anything is allocated.
    case lengthLimitExceeded(offset: Int)
    /// A text string that is not well-formed UTF-8.
    case invalidUTF8(offset: Int)
    /// A simple value 0...31 in the two-byte form, or a break (0xFF) outside any
    /// indefinite-length item.
    case invalidSimpleValue(offset: Int)
    /// `decode(_:)` found bytes after the one item; the offset is the first of them.
    case trailingBytes(offset: Int)
}

extension CBORError {
    /// The byte offset every case carries, for logs that need only the position.
    public var offset: Int {
        switch self {
        case .truncated(let offset), .indefiniteLength(let offset), .reservedAdditionalInfo(let offset),
            .nonMinimalEncoding(let offset), .unsortedMapKeys(let offset), .duplicateMapKey(let offset),
            .depthLimitExceeded(let offset), .lengthLimitExceeded(let offset), .invalidUTF8(let offset),
            .invalidSimpleValue(let offset), .trailingBytes(let offset):
            offset
        }
    }
}
