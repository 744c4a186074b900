/// Arithmetic in GF(2⁸) as ISO/IEC 18004 defines it: a byte is a polynomial over GF(2),
/// products are reduced modulo x⁸ + x⁴ + x³ + x² + 1 (0x11D), and α = 2 generates the
/// multiplicative group.
enum QRGaloisField {
    /// αⁿ for n in 0..<510: doubled so that the sum of two logarithms indexes it directly.
    static let antilogarithms: [UInt8] = {
        var table = [UInt8](repeating: 0, count: 510)
        var value = 1
        for power in 0..<255 {
            table[power] = UInt8(value)
            table[power + 255] = UInt8(value)
            value <<= 1
            if value & 0x100 != 0 {
                value ^= 0x11D
            }
        }
        return table
    }()

    /// log_α of every non-zero byte; entry 0 is meaningless because zero has no logarithm.
    static let logarithms: [Int] = {
        var table = [Int](repeating: 0, count: 256)
        for power in 0..<255 {
            table[Int(antilogarithms[power])] = power
        }
        return table
    }()

    static func multiply(_ lhs: UInt8, _ rhs: UInt8) -> UInt8 {
        guard lhs != 0, rhs != 0 else { return 0 }
        return antilogarithms[logarithms[Int(lhs)] + logarithms[Int(rhs)]]
    }
}

/// Computes the Reed–Solomon error-correction codewords of one block: the remainder of
/// data(x)·xⁿ divided by the generator g(x) = (x − α⁰)(x − α¹)…(x − αⁿ⁻¹).
struct QRReedSolomonEncoder: Sendable {
    /// Coefficients of g(x), highest degree first, without the leading 1 (g is monic).
    private let generator: [UInt8]

    init(degree: Int) {
        var coefficients: [UInt8] = [1]
        for root in 0..<degree {
            // Multiplying by (x + αʳ): shift up one degree, then add αʳ times the old polynomial.
            var next = coefficients + [0]
            let factor = QRGaloisField.antilogarithms[root]
            for index in 1..<next.count {
                next[index] ^= QRGaloisField.multiply(coefficients[index - 1], factor)
            }
            coefficients = next
        }
        generator = Array(coefficients.dropFirst())
    }

    var degree: Int { generator.count }

    func errorCorrection(for data: ArraySlice<UInt8>) -> [UInt8] {
        // Polynomial long division as a shift register holding the running remainder. The
        // tables are read into locals once because this loop runs for every data codeword.
        let antilogarithms = QRGaloisField.antilogarithms
        let logarithms = QRGaloisField.logarithms
        let generatorLogarithms = generator.map { logarithms[Int($0)] }
        var remainder = [UInt8](repeating: 0, count: degree)
        guard degree > 0 else { return remainder }
        for byte in data {
            let factor = byte ^ remainder[0]
            let factorLogarithm = logarithms[Int(factor)]
            for index in 0..<degree {
                let shifted = index + 1 < degree ? remainder[index + 1] : 0
                let product = factor == 0 || generator[index] == 0
                    ? 0 : antilogarithms[generatorLogarithms[index] + factorLogarithm]
                remainder[index] = shifted ^ product
            }
        }
        return remainder
    }
}

/// How the codewords of one version and error-correction level split into Reed–Solomon
/// blocks, and how those blocks interleave into the final codeword sequence.
struct QRBlockLayout: Sendable {
    let version: Int
    let blockCount: Int
    let errorCorrectionPerBlock: Int
    /// Every codeword the symbol has room for, data and error correction together.
    let totalCodewords: Int

    var dataCodewords: Int { totalCodewords - blockCount * errorCorrectionPerBlock }

    init(version: Int, errorCorrection: QRCode.ErrorCorrection) {
        let row = Self.tableRow(errorCorrection)
        self.version = version
        blockCount = Self.blockCounts[row][version - 1]
        errorCorrectionPerBlock = Self.errorCorrectionCodewordsPerBlock[row][version - 1]
        totalCodewords = Self.dataModuleCount(version: version) / 8
    }

    /// Splits `data` (exactly `dataCodewords` long) into blocks, computes each block's
    /// error correction and returns everything in transmission order.
    func interleave(_ data: [UInt8]) -> [UInt8] {
        precondition(data.count == dataCodewords, "data must fill the symbol's data capacity")
        // When the codewords do not divide evenly, ISO/IEC 18004 Table 9 gives the later
        // blocks one extra data codeword; all blocks carry the same number of EC codewords.
        let shortBlockCount = blockCount - totalCodewords % blockCount
        let shortDataLength = totalCodewords / blockCount - errorCorrectionPerBlock
        var blocks: [ArraySlice<UInt8>] = []
        blocks.reserveCapacity(blockCount)
        var start = data.startIndex
        for index in 0..<blockCount {
            let length = shortDataLength + (index < shortBlockCount ? 0 : 1)
            blocks.append(data[start..<(start + length)])
            start += length
        }
        let encoder = QRReedSolomonEncoder(degree: errorCorrectionPerBlock)
        let corrections = blocks.map { encoder.errorCorrection(for: $0) }

        var sequence: [UInt8] = []
        sequence.reserveCapacity(totalCodewords)
        for offset in 0...shortDataLength {
            for block in blocks where offset < block.count {
                sequence.append(block[block.startIndex + offset])
            }
        }
        for offset in 0..<errorCorrectionPerBlock {
            for correction in corrections {
                sequence.append(correction[offset])
            }
        }
        return sequence
    }

    /// Modules left for codewords (and remainder bits) once every function pattern and the
    /// format and version information are placed.
    static func dataModuleCount(version: Int) -> Int {
        let size = 4 * version + 17
        var count = size * size
        count -= 3 * 64  // three finder patterns with their separators
        count -= 2 * (size - 16)  // the two timing patterns between the separators
        count -= 2 * 15 + 1  // two copies of the format information, plus the dark module
        if version >= 2 {
            let perAxis = version / 7 + 2
            let alignmentPatterns = perAxis * perAxis - 3
            // Patterns centred on row or column 6 share five modules with a timing pattern.
            count -= 25 * alignmentPatterns - 5 * 2 * (perAxis - 2)
        }
        if version >= 7 {
            count -= 2 * 18  // two copies of the version information
        }
        return count
    }

    private static func tableRow(_ level: QRCode.ErrorCorrection) -> Int {
        switch level {
        case .low: 0
        case .medium: 1
        case .quartile: 2
        case .high: 3
        }
    }

    /// ISO/IEC 18004 Table 9: error-correction codewords per block, rows L, M, Q, H, versions 1–40.
    private static let errorCorrectionCodewordsPerBlock: [[Int]] = [
        [7, 10, 15, 20, 26, 18, 20, 24, 30, 18, 20, 24, 26, 30, 22, 24, 28, 30, 28, 28,
         28, 28, 30, 30, 26, 28, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30],
        [10, 16, 26, 18, 24, 16, 18, 22, 22, 26, 30, 22, 22, 24, 24, 28, 28, 26, 26, 26,
         26, 28, 28, 28, 28, 28, 28, 28, 28, 28, 28, 28, 28, 28, 28, 28, 28, 28, 28, 28],
        [13, 22, 18, 26, 18, 24, 18, 22, 20, 24, 28, 26, 24, 20, 30, 24, 28, 28, 26, 30,
         28, 30, 30, 30, 30, 28, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30],
        [17, 28, 22, 16, 22, 28, 26, 26, 24, 28, 24, 28, 22, 24, 24, 30, 28, 28, 26, 28,
         30, 24, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30],
    ]

    /// ISO/IEC 18004 Table 9: number of error-correction blocks, rows L, M, Q, H, versions 1–40.
    private static let blockCounts: [[Int]] = [
        [1, 1, 1, 1, 1, 2, 2, 2, 2, 4, 4, 4, 4, 4, 6, 6, 6, 6, 7, 8,
         8, 9, 9, 10, 12, 12, 12, 13, 14, 15, 16, 17, 18, 19, 19, 20, 21, 22, 24, 25],
        [1, 1, 1, 2, 2, 4, 4, 4, 5, 5, 5, 8, 9, 9, 10, 10, 11, 13, 14, 16,
         17, 17, 18, 20, 21, 23, 25, 26, 28, 29, 31, 33, 35, 37, 38, 40, 43, 45, 47, 49],
        [1, 1, 2, 2, 4, 4, 6, 6, 8, 8, 8, 10, 12, 16, 12, 17, 16, 18, 21, 20,
         23, 23, 25, 27, 29, 34, 34, 35, 38, 40, 43, 45, 48, 51, 53, 56, 59, 62, 65, 68],
        [1, 1, 2, 4, 4, 4, 5, 6, 8, 8, 11, 11, 16, 16, 18, 16, 19, 21, 25, 25,
         25, 34, 30, 32, 35, 37, 40, 42, 45, 48, 51, 54, 57, 60, 63, 66, 70, 74, 77, 81],
    ]
}
