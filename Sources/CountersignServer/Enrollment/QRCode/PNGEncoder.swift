import Foundation

extension QRCode {
    /// A PNG image of the symbol: 1-bit greyscale, black modules on white, with a quiet zone.
    ///
    /// The image data is stored rather than compressed (zlib with uncompressed deflate
    /// blocks) so that no compression library is needed; at one bit per pixel even a
    /// version 40 symbol at eight pixels per module stays under 300 kB.
    ///
    /// - Parameters:
    ///   - moduleSize: Pixels per module; values below 1 count as 1.
    ///   - border: Quiet-zone width in modules; the standard asks for 4. Negative counts as 0.
    public func png(moduleSize: Int = 8, border: Int = 4) -> Data {
        let moduleSize = max(1, moduleSize)
        let border = max(0, border)
        let side = (size + 2 * border) * moduleSize
        let rowBytes = (side + 7) / 8

        var scanlines: [UInt8] = []
        scanlines.reserveCapacity(side * (rowBytes + 1))
        for moduleY in -border..<(size + border) {
            // Each scanline starts with filter type 0 (None); in 1-bit greyscale a set bit is white.
            var row: [UInt8] = [0]
            row.reserveCapacity(rowBytes + 1)
            // Pixels are packed up to a byte's worth at a time rather than bit by bit.
            var pending: UInt16 = 0
            var pendingBits = 0
            for moduleX in -border..<(size + border) {
                let white = !self[moduleX, moduleY]
                var remaining = moduleSize
                while remaining > 0 {
                    let count = min(remaining, 8)
                    pending = pending &<< UInt16(count) | (white ? (1 &<< UInt16(count)) - 1 : 0)
                    pendingBits += count
                    remaining -= count
                    if pendingBits >= 8 {
                        pendingBits -= 8
                        row.append(UInt8(truncatingIfNeeded: pending &>> UInt16(pendingBits)))
                    }
                }
            }
            if pendingBits > 0 {
                row.append(UInt8(truncatingIfNeeded: pending &<< UInt16(8 - pendingBits)))
            }
            for _ in 0..<moduleSize {
                scanlines.append(contentsOf: row)
            }
        }

        var header: [UInt8] = []
        header.appendBigEndian(UInt32(side))
        header.appendBigEndian(UInt32(side))
        // Bit depth 1, colour type 0 (greyscale), deflate, adaptive filtering, no interlace.
        header += [1, 0, 0, 0, 0]

        var png = PNGWriter.signature
        PNGWriter.appendChunk(type: "IHDR", data: header, to: &png)
        PNGWriter.appendChunk(type: "IDAT", data: PNGWriter.zlibStored(scanlines), to: &png)
        PNGWriter.appendChunk(type: "IEND", data: [], to: &png)
        return Data(png)
    }
}

/// The few pieces of PNG and zlib framing that a stored (uncompressed) image needs.
enum PNGWriter {
    static let signature: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]

    /// Deflate's stored blocks carry a 16-bit length.
    static let maximumStoredBlock = 65_535

    static func appendChunk(type: String, data: [UInt8], to png: inout [UInt8]) {
        let typeBytes = Array(type.utf8)
        png.appendBigEndian(UInt32(data.count))
        png += typeBytes
        png += data
        png.appendBigEndian(crc32(typeBytes + data))
    }

    /// A zlib stream (RFC 1950) whose deflate data (RFC 1951) is a series of stored blocks.
    static func zlibStored(_ payload: [UInt8]) -> [UInt8] {
        // CMF 0x78: deflate with a 32 KiB window; FLG 0x01 makes CMF·256 + FLG a multiple of 31.
        var stream: [UInt8] = [0x78, 0x01]
        stream.reserveCapacity(payload.count + payload.count / maximumStoredBlock * 5 + 11)
        var start = 0
        repeat {
            let end = min(start + maximumStoredBlock, payload.count)
            let length = UInt16(end - start)
            // BFINAL in bit 0, BTYPE 00 (stored); the rest of the byte pads to a boundary.
            stream.append(end == payload.count ? 1 : 0)
            stream.appendLittleEndian(length)
            stream.appendLittleEndian(~length)
            stream += payload[start..<end]
            start = end
        } while start < payload.count
        stream.appendBigEndian(adler32(payload))
        return stream
    }

    static func adler32(_ bytes: [UInt8]) -> UInt32 {
        let modulus: UInt32 = 65_521
        // 5552 is the longest run whose sums cannot overflow 32 bits before reducing.
        let runLength = 5_552
        var a: UInt32 = 1
        var b: UInt32 = 0
        var start = 0
        while start < bytes.count {
            let end = min(start + runLength, bytes.count)
            for byte in bytes[start..<end] {
                a += UInt32(byte)
                b += a
            }
            a %= modulus
            b %= modulus
            start = end
        }
        return b << 16 | a
    }

    private static let crcTable: [UInt32] = (0..<256).map { index in
        var value = UInt32(index)
        for _ in 0..<8 {
            value = value & 1 == 1 ? 0xEDB8_8320 ^ (value >> 1) : value >> 1
        }
        return value
    }

    /// CRC-32 as PNG uses it (ISO 3309, reflected, initial and final XOR all ones).
    static func crc32(_ bytes: [UInt8]) -> UInt32 {
        let table = crcTable
        var crc: UInt32 = 0xFFFF_FFFF
        for byte in bytes {
            crc = table[Int((crc ^ UInt32(byte)) & 0xFF)] ^ (crc &>> 8)
        }
        return crc ^ 0xFFFF_FFFF
    }
}

extension [UInt8] {
    fileprivate mutating func appendBigEndian(_ value: UInt32) {
        append(contentsOf: [24, 16, 8, 0].map { UInt8(truncatingIfNeeded: value >> $0) })
    }

    fileprivate mutating func appendLittleEndian(_ value: UInt16) {
        append(contentsOf: [UInt8(value & 0xFF), UInt8(value >> 8)])
    }
}
