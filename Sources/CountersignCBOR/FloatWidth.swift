/// The narrowest IEEE 754 format that holds a `Double` exactly, and the widenings back.
///
/// Done on bit patterns rather than through `Float`/`Float16` conversions, because hardware
/// conversions quiet signalling NaNs and drop payload bits: a NaN must survive a decode and a
/// re-encode bit for bit, or canonical re-encoding would not reproduce the input.
enum FloatWidth: Equatable {
    case half(UInt16)
    case single(UInt32)
    case double(UInt64)

    /// The encoded size in bytes, after the initial byte.
    var byteCount: Int {
        switch self {
        case .half: 2
        case .single: 4
        case .double: 8
        }
    }

    /// The shortest of half, single and double that keeps `value` exactly (RFC 8949 §4.2.2
    /// preferred serialization, as CTAP2 canonical form asks).
    init(shortestFor value: Double) {
        let bits = value.bitPattern
        let sign = bits >> 63
        let significand = bits & 0x000F_FFFF_FFFF_FFFF
        if value.isNaN || value.isInfinite {
            if significand & (1 << 42 - 1) == 0 {
                self = .half(UInt16(sign << 15 | 0x7C00 | significand >> 42))
            } else if significand & (1 << 29 - 1) == 0 {
                self = .single(UInt32(sign << 31 | 0x7F80_0000 | significand >> 29))
            } else {
                self = .double(bits)
            }
            return
        }
        if let half = Self.exactHalf(value) {
            self = .half(half)
        } else if let single = Float(exactly: value) {
            self = .single(single.bitPattern)
        } else {
            self = .double(bits)
        }
    }

    /// The half-precision bits of a finite `value`, if half precision holds it exactly.
    private static func exactHalf(_ value: Double) -> UInt16? {
        let sign = UInt16(value.bitPattern >> 63) << 15
        let magnitude = value.magnitude
        if magnitude == 0 { return sign }
        if magnitude >= 0x1p-14 {
            guard magnitude <= 65504 else { return nil }
            let bits = magnitude.bitPattern
            guard bits & (1 << 42 - 1) == 0 else { return nil }
            let exponent = UInt16(Int(bits >> 52) - 1023 + 15)
            return sign | exponent << 10 | UInt16(truncatingIfNeeded: bits >> 42) & 0x3FF
        }
        // Subnormal half: magnitude = m × 2^-24 for an integer m < 1024. Scaling by a power of
        // two is exact here, so the test for an integer is too.
        let scaled = magnitude * 0x1p24
        guard scaled == scaled.rounded(.towardZero) else { return nil }
        return sign | UInt16(scaled)
    }

    /// The value as a `Double`; every half and single is exactly representable.
    var double: Double {
        switch self {
        case .half(let bits): Self.widen(half: bits)
        case .single(let bits): Self.widen(single: bits)
        case .double(let bits): Double(bitPattern: bits)
        }
    }

    private static func widen(half bits: UInt16) -> Double {
        let sign = UInt64(bits >> 15) << 63
        let exponent = UInt64(bits >> 10 & 0x1F)
        let significand = UInt64(bits & 0x3FF)
        switch exponent {
        case 0:
            let magnitude = Double(significand) * 0x1p-24
            return sign == 0 ? magnitude : -magnitude
        case 0x1F:
            return Double(bitPattern: sign | 0x7FF << 52 | significand << 42)
        default:
            // Rebias from half's 15 to double's 1023 by adding, not by subtracting 15 first,
            // which would underflow for exponents below 15.
            return Double(bitPattern: sign | (exponent + 1023 - 15) << 52 | significand << 42)
        }
    }

    private static func widen(single bits: UInt32) -> Double {
        if bits & 0x7F80_0000 == 0x7F80_0000 {
            let sign = UInt64(bits >> 31) << 63
            return Double(bitPattern: sign | 0x7FF << 52 | UInt64(bits & 0x7F_FFFF) << 29)
        }
        return Double(Float(bitPattern: bits))
    }
}
