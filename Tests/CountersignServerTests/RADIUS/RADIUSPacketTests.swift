import CountersignRADIUS
import Foundation
import Testing

/// RADIUS packets read and written (`CountersignRADIUS`): the framing and attribute lengths of
/// RFC 2865 §3 and §5, RFC 3579 §3.2 and RFC 3162, each refusal a typed error, and no input that
/// traps.
@Suite("RADIUS packets")
struct RADIUSPacketTests {
    static let authenticator: [UInt8] = Array(0..<16)

    static func packet(_ attributes: [(UInt8, [UInt8])], code: UInt8 = 1, identifier: UInt8 = 7) -> [UInt8] {
        RADIUSPacket(code: code, identifier: identifier, authenticator: authenticator,
                     attributes: attributes.map { RADIUSAttribute(type: $0.0, value: $0.1) }).encoded()
    }

    @Test("a packet reads back as it was written, attributes in order, and writes back byte for byte")
    func roundTrip() throws {
        let bytes = Self.packet([(1, Array("alice".utf8)), (2, Array(repeating: 9, count: 32)), (32, Array("vpn".utf8)),
                                 (80, Array(repeating: 0, count: 16)), (31, Array("203.0.113.9".utf8)), (26, [0, 0, 9, 1])])
        #expect(bytes.count == 20 + 7 + 34 + 5 + 18 + 13 + 6 && bytes[2] == 0 && Int(bytes[3]) == bytes.count)
        let packet = try RADIUSPacket(parsing: bytes)
        #expect(packet.code == 1 && packet.identifier == 7 && packet.authenticator == Self.authenticator)
        #expect(packet.attributes.map(\.type) == [1, 2, 32, 80, 31, 26])
        #expect(packet.text(RADIUSAttribute.userName) == "alice" && packet.text(RADIUSAttribute.callingStationID) == "203.0.113.9")
        #expect(packet.encoded() == bytes)
    }

    @Test("octets after the packet's Length are padding and ignored; fewer than it, and it is no packet")
    func lengthField() throws {
        let bytes = Self.packet([(1, Array("bob".utf8))])
        #expect(try RADIUSPacket(parsing: bytes + [1, 2, 3]).encoded() == bytes)
        #expect(throws: RADIUSPacketError.truncated(declared: bytes.count, received: bytes.count - 1)) {
            try RADIUSPacket(parsing: Array(bytes.dropLast()))
        }
        #expect(throws: RADIUSPacketError.tooShort(19)) { try RADIUSPacket(parsing: Array(bytes.prefix(19))) }
        var short = bytes
        short[3] = 19
        #expect(throws: RADIUSPacketError.lengthOutOfRange(19)) { try RADIUSPacket(parsing: short) }
        var long = bytes
        (long[2], long[3]) = (0x10, 0x01)
        #expect(throws: RADIUSPacketError.lengthOutOfRange(4097)) { try RADIUSPacket(parsing: long) }
    }

    @Test("an attribute shorter than 2 octets, or running past the Length, and the packet is refused")
    func attributeFraming() {
        var zero = Self.packet([(1, Array("bob".utf8))])
        zero[21] = 0
        #expect(throws: RADIUSPacketError.attributeLength(type: 1, length: 0)) { try RADIUSPacket(parsing: zero) }
        var past = Self.packet([(1, Array("bob".utf8))])
        past[21] = 6
        #expect(throws: RADIUSPacketError.attributeTruncated(offset: 20)) { try RADIUSPacket(parsing: past) }
        var lone = Self.packet([(1, Array("bob".utf8))]) + [18]
        lone[3] += 1
        #expect(throws: RADIUSPacketError.attributeTruncated(offset: 25)) { try RADIUSPacket(parsing: lone) }
    }

    @Test("each attribute type's length is what its RFC defines",
          arguments: [(UInt8(2), 15), (2, 17), (2, 144), (2, 0), (80, 15), (80, 17), (4, 3), (4, 5), (5, 2), (6, 8), (95, 4), (1, 0), (24, 0), (32, 0)])
    func attributeLengths(type: UInt8, count: Int) {
        let bytes = Self.packet([(type, Array(repeating: 0x41, count: count))])
        #expect(throws: RADIUSPacketError.attributeLength(type: type, length: count + 2)) { try RADIUSPacket(parsing: bytes) }
    }

    @Test("the lengths the RFCs allow are read", arguments: [(UInt8(2), 16), (2, 128), (80, 16), (4, 4), (95, 16), (1, 253), (26, 0)])
    func allowedLengths(type: UInt8, count: Int) throws {
        let packet = try RADIUSPacket(parsing: Self.packet([(type, Array(repeating: 0x41, count: count))]))
        #expect(packet.first(type)?.count == count)
    }

    @Test("text that is not UTF-8 reads as nil, not as a string with replacements")
    func textIsUTF8() throws {
        let packet = try RADIUSPacket(parsing: Self.packet([(1, [0x61, 0xff, 0x62]), (18, Array("Grüße".utf8))]))
        #expect(packet.text(RADIUSAttribute.userName) == nil && packet.text(RADIUSAttribute.replyMessage) == "Grüße")
    }

    @Test("no input traps: 20,000 random packets, and every prefix and one-octet change of a real one")
    func noInputTraps() {
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<20_000 {
            let count = Int.random(in: 0...300, using: &generator)
            var bytes = (0..<count).map { _ in UInt8.random(in: 0...255, using: &generator) }
            if bytes.count >= 4 { (bytes[2], bytes[3]) = (UInt8(bytes.count >> 8), UInt8(bytes.count & 0xff)) }
            if let packet = try? RADIUSPacket(parsing: bytes) { #expect(packet.encoded() == Array(bytes.prefix(packet.encoded().count))) }
        }
        let real = Self.packet([(1, Array("alice".utf8)), (2, Array(repeating: 9, count: 16)), (80, Array(repeating: 1, count: 16))])
        for end in 0...real.count { _ = try? RADIUSPacket(parsing: Array(real.prefix(end))) }
        for index in real.indices {
            for value in [UInt8(0), 1, 2, 0x7f, 0xff] {
                var changed = real
                changed[index] = value
                _ = try? RADIUSPacket(parsing: changed)
            }
        }
    }
}
