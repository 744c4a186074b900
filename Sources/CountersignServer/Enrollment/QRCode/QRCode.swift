/// A QR Code symbol (ISO/IEC 18004, Model 2) carrying a string in byte mode.
///
/// Encoding picks the smallest version (1–40) whose capacity holds the UTF-8 bytes at the
/// requested error-correction level, then tries all eight data masks and keeps the one the
/// standard's penalty rules score lowest. Text that is not pure ASCII is prefixed with an
/// ECI designator for UTF-8 so that readers do not fall back to ISO-8859-1, which byte
/// mode otherwise implies; pure ASCII reads identically either way and skips the overhead.
public struct QRCode: Sendable {
    /// How much of the symbol is spent on Reed–Solomon redundancy, and so how much damage
    /// a reader can recover from: roughly 7 %, 15 %, 25 % and 30 % of codewords.
    public enum ErrorCorrection: Sendable, CaseIterable {
        case low, medium, quartile, high
    }

    /// The symbol version, 1–40; the symbol is `4 × version + 17` modules square.
    public let version: Int
    /// Modules along each side, excluding the quiet zone.
    public let size: Int
    /// The error-correction level the symbol was encoded at.
    public let errorCorrection: ErrorCorrection
    /// The mask pattern reference (0–7) the penalty evaluation selected.
    let mask: Int
    /// Row-major; `true` is dark.
    private let modules: [Bool]

    /// Encodes `text` as UTF-8 in byte mode.
    ///
    /// - Throws: ``QRCodeError/tooLong(bytes:)`` when even a version 40 symbol at this
    ///   error-correction level cannot hold the text.
    public init(encoding text: String, errorCorrection: ErrorCorrection = .medium) throws(QRCodeError) {
        let payload = Array(text.utf8)
        let declaresUTF8 = payload.contains { $0 >= 0x80 }
        let headerBits = declaresUTF8 ? 12 : 0
        let layout = Self.smallestLayout(bytes: payload.count, headerBits: headerBits, level: errorCorrection)
        guard let layout else { throw .tooLong(bytes: payload.count) }
        let data = Self.dataCodewords(payload: payload, declaresUTF8: declaresUTF8, layout: layout)
        var matrix = QRMatrix(version: layout.version)
        matrix.place(codewords: layout.interleave(data))

        var bestMask = 0
        var best = matrix.masked(bestMask, errorCorrection: errorCorrection)
        var bestPenalty = best.penalty()
        for mask in 1..<8 {
            let candidate = matrix.masked(mask, errorCorrection: errorCorrection)
            let penalty = candidate.penalty()
            if penalty < bestPenalty {
                (bestMask, best, bestPenalty) = (mask, candidate, penalty)
            }
        }

        version = layout.version
        size = best.size
        self.errorCorrection = errorCorrection
        mask = bestMask
        modules = best.modules
    }

    /// Whether the module at column `x`, row `y` is dark. Coordinates outside the symbol
    /// read as light, which is what the quiet zone around it is.
    public subscript(x: Int, y: Int) -> Bool {
        guard x >= 0, x < size, y >= 0, y < size else { return false }
        return modules[y * size + x]
    }
}

/// Why a string could not be encoded.
public enum QRCodeError: Error, Sendable, Equatable {
    /// The UTF-8 encoding of the text has `bytes` bytes, more than a version 40 symbol at the
    /// requested error-correction level can hold.
    case tooLong(bytes: Int)
}

extension QRCodeError: CustomStringConvertible {
    public var description: String {
        switch self {
        case .tooLong(let bytes):
            "Text of \(bytes) UTF-8 bytes does not fit in a QR code at this error-correction level "
                + "(version 40 is the largest symbol)"
        }
    }
}

// MARK: - Data codewords

extension QRCode {
    private static let byteModeIndicator: UInt32 = 0b0100
    private static let eciModeIndicator: UInt32 = 0b0111
    /// ECI assignment number 26 is UTF-8; values below 128 are written in a single byte.
    private static let utf8Designator: UInt32 = 26

    /// Largest payload, in bytes, that fits `version` at `errorCorrection` without an ECI.
    static func byteCapacity(version: Int, errorCorrection: ErrorCorrection) -> Int {
        let layout = QRBlockLayout(version: version, errorCorrection: errorCorrection)
        return (layout.dataCodewords * 8 - 4 - characterCountWidth(version: version)) / 8
    }

    private static func characterCountWidth(version: Int) -> Int {
        version <= 9 ? 8 : 16
    }

    /// `headerBits` covers whatever precedes the byte-mode segment (the ECI designator).
    private static func smallestLayout(bytes: Int, headerBits: Int, level: ErrorCorrection) -> QRBlockLayout? {
        for version in 1...40 {
            let layout = QRBlockLayout(version: version, errorCorrection: level)
            let countWidth = characterCountWidth(version: version)
            let bitsNeeded = headerBits + 4 + countWidth + 8 * bytes
            if bitsNeeded <= layout.dataCodewords * 8, bytes < 1 << countWidth {
                return layout
            }
        }
        return nil
    }

    private static func dataCodewords(payload: [UInt8], declaresUTF8: Bool, layout: QRBlockLayout) -> [UInt8] {
        let capacity = layout.dataCodewords
        var writer = QRBitWriter()
        if declaresUTF8 {
            writer.append(eciModeIndicator, width: 4)
            writer.append(utf8Designator, width: 8)
        }
        writer.append(byteModeIndicator, width: 4)
        writer.append(UInt32(payload.count), width: characterCountWidth(version: layout.version))
        for byte in payload {
            writer.append(UInt32(byte), width: 8)
        }
        // The terminator is up to four zero bits; it may be shortened, or omitted, when the
        // data already fills the symbol. Padding to a byte boundary is implicit in the writer.
        writer.append(0, width: min(4, capacity * 8 - writer.bitCount))
        var codewords = writer.bytes
        var padIndex = 0
        while codewords.count < capacity {
            codewords.append(padIndex % 2 == 0 ? 0xEC : 0x11)
            padIndex += 1
        }
        return codewords
    }

    /// The 15-bit format information: level and mask protected by a (15, 5) BCH code, then
    /// XORed with 101010000010010 so that no combination yields an all-light pattern.
    static func formatBits(errorCorrection: ErrorCorrection, mask: Int) -> Int {
        let levelBits = switch errorCorrection {
        case .low: 0b01
        case .medium: 0b00
        case .quartile: 0b11
        case .high: 0b10
        }
        return bchCode(levelBits << 3 | mask, generator: 0b101_0011_0111, degree: 10) ^ 0b101_0100_0001_0010
    }

    /// The 18-bit version information (versions 7 and up): the version number protected by
    /// an (18, 6) BCH code.
    static func versionBits(version: Int) -> Int {
        bchCode(version, generator: 0b1_1111_0010_0101, degree: 12)
    }

    /// `data` followed by the remainder of `data · x^degree` divided by `generator`, all
    /// polynomials over GF(2) held as bit patterns.
    private static func bchCode(_ data: Int, generator: Int, degree: Int) -> Int {
        var remainder = data << degree
        while remainder >> degree != 0 {
            let leadingBit = Int.bitWidth - 1 - remainder.leadingZeroBitCount
            remainder ^= generator << (leadingBit - degree)
        }
        return data << degree | remainder
    }
}

/// Accumulates a most-significant-bit-first bit stream; a partly filled last byte is
/// zero-padded, as the standard asks before the pad codewords.
struct QRBitWriter {
    private(set) var bytes: [UInt8] = []
    private(set) var bitCount = 0

    mutating func append(_ value: UInt32, width: Int) {
        for shift in stride(from: width - 1, through: 0, by: -1) {
            if bitCount % 8 == 0 {
                bytes.append(0)
            }
            if (value &>> UInt32(shift)) & 1 == 1 {
                bytes[bytes.count - 1] |= 0x80 &>> UInt8(bitCount % 8)
            }
            bitCount += 1
        }
    }
}

// MARK: - Module matrix

/// The symbol under construction: module colours plus which modules belong to function
/// patterns, which neither data placement nor masking may touch.
struct QRMatrix {
    let version: Int
    let size: Int
    private(set) var modules: [Bool]
    private var isFunction: [Bool]

    init(version: Int) {
        self.version = version
        size = 4 * version + 17
        modules = Array(repeating: false, count: size * size)
        isFunction = Array(repeating: false, count: size * size)
        drawFunctionPatterns()
    }

    func isFunctionModule(x: Int, y: Int) -> Bool { isFunction[y * size + x] }

    /// Centre coordinates of the alignment patterns along either axis. ISO/IEC 18004
    /// Table E.1 spaces them from the bottom-right corner with an even step that is the
    /// rounded-up share of the span; version 32 is the one row where the table instead
    /// uses 26 rather than the 28 that rule gives.
    static func alignmentCentres(version: Int) -> [Int] {
        guard version >= 2 else { return [] }
        let count = version / 7 + 2
        let last = 4 * version + 10
        let share = (last - 6 + count - 2) / (count - 1)
        let step = version == 32 ? 26 : share + share % 2
        return [6] + (0..<(count - 1)).map { last - step * (count - 2 - $0) }
    }

    private mutating func setFunction(x: Int, y: Int, dark: Bool) {
        modules[y * size + x] = dark
        isFunction[y * size + x] = true
    }

    private mutating func drawFunctionPatterns() {
        for index in 0..<size {
            setFunction(x: 6, y: index, dark: index % 2 == 0)
            setFunction(x: index, y: 6, dark: index % 2 == 0)
        }
        for (centreX, centreY) in [(3, 3), (size - 4, 3), (3, size - 4)] {
            // The 7×7 finder plus its one-module light separator, clipped at the symbol edge.
            for dy in -4...4 {
                for dx in -4...4 where (0..<size).contains(centreX + dx) && (0..<size).contains(centreY + dy) {
                    let ring = max(abs(dx), abs(dy))
                    setFunction(x: centreX + dx, y: centreY + dy, dark: ring != 2 && ring != 4)
                }
            }
        }
        let centres = Self.alignmentCentres(version: version)
        for (column, centreX) in centres.enumerated() {
            for (row, centreY) in centres.enumerated() {
                let first = 0, last = centres.count - 1
                // These three would sit on top of finder patterns.
                if (column, row) == (first, first) || (column, row) == (last, first)
                    || (column, row) == (first, last) {
                    continue
                }
                for dy in -2...2 {
                    for dx in -2...2 {
                        setFunction(x: centreX + dx, y: centreY + dy, dark: max(abs(dx), abs(dy)) != 1)
                    }
                }
            }
        }
        // Reserve the format areas now; each mask candidate writes the real bits.
        drawFormat(bits: 0)
        if version >= 7 {
            let bits = QRCode.versionBits(version: version)
            for index in 0..<18 {
                let dark = (bits >> index) & 1 == 1
                let across = size - 11 + index % 3, along = index / 3
                setFunction(x: across, y: along, dark: dark)
                setFunction(x: along, y: across, dark: dark)
            }
        }
    }

    /// Writes the 15 format bits (bit 0 least significant) in both copies, plus the dark module.
    private mutating func drawFormat(bits: Int) {
        func bit(_ index: Int) -> Bool { (bits >> index) & 1 == 1 }
        for index in 0...5 {
            setFunction(x: 8, y: index, dark: bit(index))
        }
        setFunction(x: 8, y: 7, dark: bit(6))
        setFunction(x: 8, y: 8, dark: bit(7))
        setFunction(x: 7, y: 8, dark: bit(8))
        for index in 9..<15 {
            setFunction(x: 14 - index, y: 8, dark: bit(index))
        }
        for index in 0..<8 {
            setFunction(x: size - 1 - index, y: 8, dark: bit(index))
        }
        for index in 8..<15 {
            setFunction(x: 8, y: size - 15 + index, dark: bit(index))
        }
        setFunction(x: 8, y: size - 8, dark: true)
    }

    /// Places codewords most significant bit first along the standard zigzag: two-module
    /// wide columns from the right edge, alternately upwards and downwards, skipping
    /// function modules. Modules left over hold the remainder bits, which are zeros.
    mutating func place(codewords: [UInt8]) {
        let bitTotal = codewords.count * 8
        var bitIndex = 0
        var upward = true
        var right = size - 1
        while right >= 1 {
            if right == 6 {
                // The vertical timing pattern fills column 6, so the pairs shift left past it.
                right = 5
            }
            for step in 0..<size {
                let y = upward ? size - 1 - step : step
                for column in 0..<2 where !isFunction[y * size + right - column] {
                    if bitIndex < bitTotal {
                        let bit = (codewords[bitIndex &>> 3] &>> (7 - UInt8(bitIndex & 7))) & 1
                        modules[y * size + right - column] = bit == 1
                    }
                    bitIndex += 1
                }
            }
            upward.toggle()
            right -= 2
        }
    }

    /// A copy with data mask `mask` applied and the matching format information written.
    func masked(_ mask: Int, errorCorrection: QRCode.ErrorCorrection) -> QRMatrix {
        var copy = self
        for y in 0..<size {
            for x in 0..<size where !isFunction[y * size + x] && Self.maskInverts(mask, x: x, y: y) {
                copy.modules[y * size + x].toggle()
            }
        }
        copy.drawFormat(bits: QRCode.formatBits(errorCorrection: errorCorrection, mask: mask))
        return copy
    }

    /// The data mask conditions; ISO/IEC 18004 states them with i as the row and j as the column.
    static func maskInverts(_ mask: Int, x: Int, y: Int) -> Bool {
        switch mask {
        case 0: (y + x) % 2 == 0
        case 1: y % 2 == 0
        case 2: x % 3 == 0
        case 3: (y + x) % 3 == 0
        case 4: (y / 2 + x / 3) % 2 == 0
        case 5: (y * x) % 2 + (y * x) % 3 == 0
        case 6: ((y * x) % 2 + (y * x) % 3) % 2 == 0
        default: ((y + x) % 2 + (y * x) % 3) % 2 == 0
        }
    }

    // MARK: Penalty

    /// The standard's score of features that confuse readers; lower is better.
    func penalty() -> Int {
        // Eight candidates per symbol make this the encoder's hot loop; reading through a
        // buffer pointer keeps debug builds fast as well.
        modules.withUnsafeBufferPointer { modules in
            var score = 0
            for line in 0..<size {
                score += Self.linePenalty(modules, start: line * size, step: 1, count: size)
                score += Self.linePenalty(modules, start: line, step: size, count: size)
            }
            // Rule 2: every 2×2 block of one colour, overlapping blocks counted separately.
            for y in 0..<(size - 1) {
                for x in 0..<(size - 1) {
                    let index = y * size + x
                    let colour = modules[index]
                    if modules[index + 1] == colour, modules[index + size] == colour,
                        modules[index + size + 1] == colour {
                        score += 3
                    }
                }
            }
            // Rule 4: 10 points for every full 5 % the dark share strays from one half.
            var dark = 0
            for module in modules where module {
                dark += 1
            }
            let total = size * size
            score += 10 * (abs(dark * 20 - total * 10) / total)
            return score
        }
    }

    /// Rules 1 and 3 for one row or column (`count` modules from `start`, `step` apart): runs
    /// of five or more same-coloured modules, and 1:1:3:1:1 finder look-alikes with four
    /// light modules on either side.
    static func linePenalty(_ modules: UnsafeBufferPointer<Bool>, start: Int, step: Int, count: Int) -> Int {
        // The last eleven modules as bits, oldest in bit 10, so both look-alike orientations
        // are a single comparison.
        let finderThenLight = 0b101_1101_0000
        let lightThenFinder = 0b000_0101_1101
        var score = 0
        var runColour = false
        var runLength = 0
        var window = 0
        for offset in 0..<count {
            let dark = modules[start + offset * step]
            if dark == runColour {
                runLength += 1
            } else {
                if runLength >= 5 {
                    score += runLength - 2
                }
                runColour = dark
                runLength = 1
            }
            window = (window &<< 1 | (dark ? 1 : 0)) & 0x7FF
            if offset >= 10, window == finderThenLight || window == lightThenFinder {
                score += 40
            }
        }
        if runLength >= 5 {
            score += runLength - 2
        }
        return score
    }
}
