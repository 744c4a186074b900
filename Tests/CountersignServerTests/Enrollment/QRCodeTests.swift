import Foundation
import Testing

@testable import CountersignServer

#if canImport(FoundationXML)
import FoundationXML
#endif

/// A 220-character enrolment URI shaped like the ones the server shows.
private let sampleEnrollmentURI =
    "countersign://enroll?v=1&server=https%3A%2F%2Fcountersign.example.com%3A8443"
    + "&ticket=HPdjPVrDB2wqiXyF_so94e6rDA54EtdPBUkFGn3wsVMLO-AWQXfOfx4XJHlpRTYIrqZt"
    + "&fp=9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"

@Suite("QR code encoder")
struct QRCodeTests {
    // MARK: Reed–Solomon

    @Test(
        "Reed–Solomon reproduces published examples",
        arguments: [
            // ISO/IEC 18004 Annex I: "01234567" as version 1-M.
            ([16, 32, 12, 86, 97, 128, 236, 17, 236, 17, 236, 17, 236, 17, 236, 17],
             [165, 36, 212, 193, 237, 54, 199, 135, 44, 85]),
            // The widely published "HELLO WORLD" as version 1-Q.
            ([32, 91, 11, 120, 209, 114, 220, 77, 67, 64, 236, 17, 236],
             [168, 72, 22, 82, 217, 54, 156, 0, 46, 15, 180, 122, 16]),
        ] as [([UInt8], [UInt8])]
    )
    func reedSolomon(data: [UInt8], expected: [UInt8]) {
        #expect(QRReedSolomonEncoder(degree: expected.count).errorCorrection(for: data[...]) == expected)
    }

    // MARK: Version selection

    @Test("Version selection: enrolment URI, empty string, and the UTF-8 ECI header counted")
    func versionSelection() throws {
        #expect(sampleEnrollmentURI.utf8.count == 220)
        let uri = String(sampleEnrollmentURI.prefix(200))
        let code = try QRCode(encoding: uri, errorCorrection: .medium)
        #expect(code.version == 10 && code.size == 57)
        #expect(try QRCode(encoding: "").version == 1)
        // 16 UTF-8 bytes plus the 12-bit ECI header exactly fill 1-L; one more byte does not fit.
        #expect(try QRCode(encoding: String(repeating: "é", count: 8), errorCorrection: .low).version == 1)
        #expect(try QRCode(encoding: String(repeating: "é", count: 8) + "a", errorCorrection: .low).version == 2)
    }

    @Test(
        "Byte capacities match the published table at the boundaries",
        arguments: [
            (1, QRCode.ErrorCorrection.low, 17), (1, .medium, 14), (1, .quartile, 11), (1, .high, 7),
            (9, .medium, 180), (10, .medium, 213), (40, .low, 2953), (40, .medium, 2331),
            (40, .quartile, 1663), (40, .high, 1273),
        ]
    )
    func capacityBoundaries(version: Int, level: QRCode.ErrorCorrection, capacity: Int) throws {
        #expect(QRCode.byteCapacity(version: version, errorCorrection: level) == capacity)
        let fitting = String(repeating: "a", count: capacity)
        let overflowing = fitting + "a"
        #expect(try QRCode(encoding: fitting, errorCorrection: level).version == version)
        if version < 40 {
            #expect(try QRCode(encoding: overflowing, errorCorrection: level).version == version + 1)
        } else {
            #expect(throws: QRCodeError.tooLong(bytes: capacity + 1)) {
                try QRCode(encoding: overflowing, errorCorrection: level)
            }
        }
    }

    @Test("Too-long input reports its UTF-8 byte count")
    func tooLongCountsBytes() {
        let text = String(repeating: "é", count: 1500)
        #expect(throws: QRCodeError.tooLong(bytes: 3000)) { try QRCode(encoding: text, errorCorrection: .low) }
        #expect(QRCodeError.tooLong(bytes: 3000).description.contains("3000"))
    }

    // MARK: Format and version information

    @Test(
        "Format and version information match published values",
        arguments: [
            (QRCode.ErrorCorrection.low, 0, 0b111011111000100), (.low, 4, 0b110011000101111),
            (.medium, 0, 0b101010000010010), (.quartile, 0, 0b011010101011111), (.high, 0, 0b001011010001001),
        ]
    )
    func formatInformation(level: QRCode.ErrorCorrection, mask: Int, bits: Int) {
        #expect(QRCode.formatBits(errorCorrection: level, mask: mask) == bits)
        // Version information, likewise from the published table.
        #expect(QRCode.versionBits(version: 7) == 0b000111_110010010100)
        #expect(QRCode.versionBits(version: 40) == 0b101000_110001101001)
    }

    @Test("Both copies of format and version information are in the symbol", arguments: [1, 7, 24])
    func informationPlacement(version: Int) throws {
        let length = QRCode.byteCapacity(version: version, errorCorrection: .quartile)
        let code = try QRCode(encoding: String(repeating: "x", count: length), errorCorrection: .quartile)
        #expect(code.version == version)
        let size = code.size
        func read(_ positions: [(Int, Int)]) -> Int {
            positions.enumerated().reduce(0) { $0 | (code[$1.element.0, $1.element.1] ? 1 << $1.offset : 0) }
        }
        let nearCorner = (0...5).map { (8, $0) } + [(8, 7), (8, 8), (7, 8)] + (9..<15).map { (14 - $0, 8) }
        let split = (0..<8).map { (size - 1 - $0, 8) } + (8..<15).map { (8, size - 15 + $0) }
        let format = QRCode.formatBits(errorCorrection: .quartile, mask: code.mask)
        #expect(read(nearCorner) == format)
        #expect(read(split) == format)
        #expect(code[8, size - 8], "the dark module")
        if version >= 7 {
            #expect(read((0..<18).map { (size - 11 + $0 % 3, $0 / 3) }) == QRCode.versionBits(version: version))
            #expect(read((0..<18).map { ($0 / 3, size - 11 + $0 % 3) }) == QRCode.versionBits(version: version))
        }
    }

    // MARK: Function patterns

    @Test("Finder patterns, separators and timing patterns are in place")
    func functionPatterns() throws {
        let code = try QRCode(encoding: sampleEnrollmentURI)
        let size = code.size
        for (left, top) in [(0, 0), (size - 7, 0), (0, size - 7)] {
            for dy in -1...7 {
                for dx in -1...7 where (0..<size).contains(left + dx) && (0..<size).contains(top + dy) {
                    let ring = max(abs(dx - 3), abs(dy - 3))
                    #expect(code[left + dx, top + dy] == (ring != 2 && ring != 4), "finder at (\(left), \(top))")
                }
            }
        }
        for index in 8..<(size - 8) {
            #expect(code[index, 6] == (index % 2 == 0), "horizontal timing at \(index)")
            #expect(code[6, index] == (index % 2 == 0), "vertical timing at \(index)")
        }
        #expect(!code[-1, 0] && !code[size, size], "outside the symbol reads as quiet zone")
    }

    @Test(
        "Alignment pattern centres match ISO/IEC 18004 Table E.1",
        arguments: [
            (1, []), (2, [6, 18]), (7, [6, 22, 38]), (16, [6, 26, 50, 74]), (22, [6, 26, 50, 74, 98]),
            (32, [6, 34, 60, 86, 112, 138]), (36, [6, 24, 50, 76, 102, 128, 154]), (40, [6, 30, 58, 86, 114, 142, 170]),
        ] as [(Int, [Int])]
    )
    func alignmentCentres(version: Int, centres: [Int]) {
        #expect(QRMatrix.alignmentCentres(version: version) == centres)
    }

    @Test("Data module count agrees with the function patterns drawn, for every version")
    func dataModuleCount() {
        for version in 1...40 {
            let matrix = QRMatrix(version: version)
            let free = (0..<(matrix.size * matrix.size)).count {
                !matrix.isFunctionModule(x: $0 % matrix.size, y: $0 / matrix.size)
            }
            #expect(free == QRBlockLayout.dataModuleCount(version: version), "version \(version)")
        }
    }

    @Test("Penalty rules 1 and 3 score runs and finder look-alikes")
    func linePenalty() {
        func score(_ line: [Bool], start: Int = 0, step: Int = 1) -> Int {
            line.withUnsafeBufferPointer { QRMatrix.linePenalty($0, start: start, step: step, count: 11) }
        }
        let pattern = [true, false, true, true, true, false, true, false, false, false, false]
        #expect(score(pattern) == 40)
        #expect(score(pattern.reversed()) == 40)
        #expect(score([true, true, true, true, true, false, true, false, true, false, true]) == 3)
        #expect(score([false, true, true, true, true, true, true, true, false, true, false]) == 5)
        #expect(score([true, false, true, true, false, true, false, false, true, true, false]) == 0)
        #expect(score([false, false] + pattern.flatMap { [$0, true] }, start: 2, step: 2) == 40)
    }

    // MARK: Renderers

    @Test("CRC-32 and Adler-32 match their standard check values")
    func checksums() {
        #expect(PNGWriter.crc32(Array("123456789".utf8)) == 0xCBF4_3926)
        #expect(PNGWriter.adler32(Array("Wikipedia".utf8)) == 0x11E6_0398)
    }

    @Test("PNG is well-formed and its pixels match the modules", arguments: [(1, 3, 4), (40, 8, 4), (10, 1, 0)])
    func pngStructure(version: Int, moduleSize: Int, border: Int) throws {
        let text = String(repeating: "Q", count: QRCode.byteCapacity(version: version, errorCorrection: .low))
        let code = try QRCode(encoding: text, errorCorrection: .low)
        let image = try DecodedPNG(code.png(moduleSize: moduleSize, border: border))
        let side = (code.size + 2 * border) * moduleSize
        #expect(image.width == side && image.height == side)
        #expect(image.storedBlocks == (side * (image.rowBytes + 1) + 65_534) / 65_535)
        let mismatches = (0..<(side * side)).count { pixel in
            let (x, y) = (pixel % side, pixel / side)
            return image.isWhite(x: x, y: y) == code[x / moduleSize - border, y / moduleSize - border]
        }
        #expect(mismatches == 0)
    }

    @Test("SVG is well-formed and its path covers exactly the dark modules")
    func svgStructure() throws {
        let code = try QRCode(encoding: sampleEnrollmentURI)
        let svg = code.svg(moduleSize: 5, border: 3)
        let span = code.size + 6
        #if canImport(FoundationXML) || os(macOS)
        let document = try XMLDocument(data: Data(svg.utf8))
        let root = try #require(document.rootElement())
        // Looked up by hand: swift-corelibs-foundation's attribute(forName:) misses attributes
        // on elements in a default namespace.
        func attribute(_ element: XMLElement?, _ name: String) -> String? {
            element?.attributes?.first { $0.name == name }?.stringValue
        }
        #expect(root.name == "svg" && root.children?.compactMap(\.name) == ["rect", "path"])
        #expect(attribute(root, "width") == "\(span * 5)" && attribute(root, "height") == "\(span * 5)")
        #expect(attribute(root, "viewBox") == "0 0 \(span) \(span)")
        #expect(attribute(root, "shape-rendering") == "crispEdges")
        #expect(attribute(root.elements(forName: "rect").first, "fill") == "#ffffff")
        #endif
        let pathData = try #require(svg.firstMatch(of: /<path fill="#000000" d="([^"]*)"\/>/)?.1)
        var covered = Set<Int>()
        for run in pathData.matches(of: /M(\d+),(\d+)h(\d+)v1h-(\d+)z/) {
            let (x, y, width) = (Int(run.1) ?? -1, Int(run.2) ?? -1, Int(run.3) ?? -1)
            #expect(run.3 == run.4)
            for offset in 0..<width {
                covered.insert((y - 3) * code.size + x - 3 + offset)
            }
        }
        let dark = (0..<(code.size * code.size)).filter { code[$0 % code.size, $0 / code.size] }
        #expect(covered == Set(dark))
    }

    @Test("Terminal text shows light modules as half blocks, two rows per line")
    func terminalText() throws {
        let code = try QRCode(encoding: "countersign")
        let border = 2
        let span = code.size + 2 * border
        let lines = code.terminalText(border: border).split(separator: "\n", omittingEmptySubsequences: false)
        #expect(lines.last == "")
        #expect(lines.count - 1 == (span + 1) / 2)
        for (lineIndex, line) in lines.dropLast().enumerated() {
            #expect(line.count == span)
            let top = 2 * lineIndex - border
            for (column, character) in line.enumerated() {
                let x = column - border
                let upperLight = !code[x, top]
                let lowerLight = top + 1 < code.size + border && !code[x, top + 1]
                let expected: Character = upperLight ? (lowerLight ? "█" : "▀") : (lowerLight ? "▄" : " ")
                #expect(character == expected, "line \(lineIndex), column \(column)")
            }
        }
    }

    // MARK: Decoding with an independent reader

    @Test(
        "zxing-cpp decodes the PNG back to the original text",
        // Needs python3 with the zxingcpp and Pillow modules (pip install zxing-cpp pillow);
        // when either is missing the test is reported as skipped and the reason goes to stderr.
        .enabled(if: ZXingReader.isAvailable, "python3 with zxingcpp and Pillow is not available"),
        arguments: ["Countersign", sampleEnrollmentURI, "Grüße aus Zürich — 認証 ✓ 🔐"],
        QRCode.ErrorCorrection.allCases
    )
    func zxingDecodes(text: String, level: QRCode.ErrorCorrection) async throws {
        let code = try QRCode(encoding: text, errorCorrection: level)
        let results = try await ZXingReader.decode([code.png()])
        let symbol = try #require(results.first?.first, "zxing-cpp found no QR code")
        #expect(symbol.text == text)
        #expect(symbol.ecLevel == level.letter)
        #expect(symbol.version == "\(code.version)")
        #expect(symbol.mask == "\(code.mask)")
    }

    @Test(
        "zxing-cpp decodes every version at every level filled to capacity",
        .enabled(if: ZXingReader.isAvailable, "python3 with zxingcpp and Pillow is not available")
    )
    func zxingDecodesEveryVersion() async throws {
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~:/?#[]@!$&'()*+,;=")
        var codes: [(QRCode, String)] = []
        for level in QRCode.ErrorCorrection.allCases {
            for version in 1...40 {
                let length = QRCode.byteCapacity(version: version, errorCorrection: level)
                let text = String((0..<length).map { alphabet[($0 * 7 + version) % alphabet.count] })
                let code = try QRCode(encoding: text, errorCorrection: level)
                #expect(code.version == version)
                codes.append((code, text))
            }
        }
        let results = try await ZXingReader.decode(codes.map { $0.0.png(moduleSize: 3) })
        #expect(results.count == codes.count)
        for ((code, text), found) in zip(codes, results) {
            #expect(found.first?.text == text, "version \(code.version) level \(code.errorCorrection)")
            #expect(found.first?.ecLevel == code.errorCorrection.letter)
        }
    }
}

// MARK: - Helpers

extension QRCode.ErrorCorrection {
    /// The letter readers report for the level: L, M, Q or H.
    fileprivate var letter: String { String(describing: self).prefix(1).uppercased() }
}

/// A PNG taken apart independently of the encoder's framing code; parsing checks every
/// chunk CRC, the zlib header, each stored deflate block and the Adler-32 trailer.
private struct DecodedPNG {
    struct Malformed: Error, CustomStringConvertible { let description: String }

    let width: Int, height: Int, rowBytes: Int, storedBlocks: Int
    private let pixels: [UInt8]

    init(_ data: Data) throws {
        let bytes = [UInt8](data)
        func require(_ condition: Bool, _ what: String) throws {
            if !condition { throw Malformed(description: "bad PNG: \(what)") }
        }
        func number(_ slice: ArraySlice<UInt8>) -> Int { slice.reduce(0) { $0 << 8 | Int($1) } }
        try require(bytes.starts(with: [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]), "signature")
        var chunks: [(type: String, data: ArraySlice<UInt8>)] = []
        var offset = 8
        while offset + 12 <= bytes.count {
            let end = offset + 8 + number(bytes[offset..<(offset + 4)])
            try require(end + 4 <= bytes.count, "chunk overruns the file")
            try require(PNGWriter.crc32(Array(bytes[(offset + 4)..<end])) == number(bytes[end..<(end + 4)]), "CRC")
            let type = String(decoding: bytes[(offset + 4)..<(offset + 8)], as: UTF8.self)
            chunks.append((type, bytes[(offset + 8)..<end]))
            offset = end + 4
        }
        try require(offset == bytes.count && chunks.map(\.type) == ["IHDR", "IDAT", "IEND"], "chunk sequence")
        let header = Array(chunks[0].data)
        try require(header.count == 13 && header[8...] == [1, 0, 0, 0, 0], "IHDR is not 1-bit greyscale")
        (width, height) = (number(header[0..<4]), number(header[4..<8]))
        rowBytes = (width + 7) / 8

        let zlib = Array(chunks[1].data)
        try require(zlib.count >= 6 && zlib[0] == 0x78 && (Int(zlib[0]) << 8 | Int(zlib[1])) % 31 == 0, "zlib header")
        var inflated: [UInt8] = []
        var position = 2, blocks = 0, final = false
        while !final {
            try require(position + 5 <= zlib.count && zlib[position] & 0b110 == 0, "not a stored block")
            final = zlib[position] & 1 == 1
            let length = Int(zlib[position + 1]) | Int(zlib[position + 2]) << 8
            let complement = Int(zlib[position + 3]) | Int(zlib[position + 4]) << 8
            try require(length ^ complement == 0xFFFF && position + 5 + length <= zlib.count, "LEN/NLEN")
            inflated += zlib[(position + 5)..<(position + 5 + length)]
            position += 5 + length
            blocks += 1
        }
        try require(position + 4 == zlib.count && PNGWriter.adler32(inflated) == number(zlib[position...]), "Adler-32")
        try require(inflated.count == height * (rowBytes + 1), "inflated size")
        try require(stride(from: 0, to: inflated.count, by: rowBytes + 1).allSatisfy { inflated[$0] == 0 }, "filter")
        storedBlocks = blocks
        pixels = inflated
    }

    func isWhite(x: Int, y: Int) -> Bool {
        (pixels[y * (rowBytes + 1) + 1 + x / 8] >> (7 - x % 8)) & 1 == 1
    }
}

/// Reads PNGs with zxing-cpp through python3: an independent decoder is the only convincing
/// evidence that the symbols scan.
enum ZXingReader {
    struct Symbol: Decodable { let text: String, ecLevel: String, version: String, mask: String }
    struct Failure: Error, CustomStringConvertible { let description: String }

    private static let script = """
        import json, sys, zxingcpp
        from PIL import Image
        print(json.dumps([[{"text": b.text, "ecLevel": b.ec_level, "version": str(b.extra.get("Version")),
                            "mask": str(b.extra.get("DataMask"))}
                           for b in zxingcpp.read_barcodes(Image.open(path).convert("L"),
                                                           formats=zxingcpp.BarcodeFormat.QRCode, try_invert=False)]
                          for path in sys.argv[1:]]))
        """

    /// The python3 executable, or nil after saying on stderr why the decode tests are skipped.
    private static let python: String? = {
        let searchPath = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        guard let python = searchPath.split(separator: ":").map({ "\($0)/python3" })
            .first(where: FileManager.default.isExecutableFile(atPath:)) else {
            return skipped(because: "python3 was not found on PATH")
        }
        guard (try? ChildProcess.runBlocking(URL(fileURLWithPath: python), ["-c", "import zxingcpp, PIL"])) != nil else {
            return skipped(because: "\(python) cannot import zxingcpp and PIL (pip install zxing-cpp pillow)")
        }
        return python
    }()

    static var isAvailable: Bool { python != nil }

    private static func skipped(because reason: String) -> String? {
        FileHandle.standardError.write(Data("QRCodeTests: SKIPPED the zxing-cpp decode tests: \(reason)\n".utf8))
        return nil
    }

    /// The symbols found in each image, in order.
    static func decode(_ images: [Data]) async throws -> [[Symbol]] {
        guard let python else { throw Failure(description: "python3 with zxingcpp is unavailable") }
        let directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("qrcode-tests-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let paths = try images.enumerated().map { index, image in
            let file = directory.appendingPathComponent("\(index).png")
            try image.write(to: file)
            return file.path
        }
        let output = try await ChildProcess.run(URL(fileURLWithPath: python), ["-c", script] + paths)
        return try JSONDecoder().decode([[Symbol]].self, from: Data(output.utf8))
    }
}
