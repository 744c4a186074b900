/// The id a directory gives an entry for its whole life, whatever it is renamed or moved to: the
/// key a user source keeps users and groups under, since DNs change.
///
/// Active Directory's `objectGUID` is 16 octets in Microsoft's GUID layout: the first three fields
/// little-endian, the last eight octets as they are. OpenLDAP's and 389's `entryUUID` (RFC 4530)
/// is the UUID's text. Both become the same canonical form, lowercase `8-4-4-4-12` hex, which for a
/// GUID is the text AD's own tools show (`Get-ADUser`'s `ObjectGUID`), so an administrator can
/// match the two.
///
/// ```swift
/// DirectoryObjectID(objectGUID: bytes)?.description  // "d8a32b8b-1111-2222-3333-444455556666"
/// DirectoryObjectID(entryUUID: "003FBA04-84EB-1041-9416-2572ED813760")?.description
///                                                     // "003fba04-84eb-1041-9416-2572ed813760"
/// ```
public struct DirectoryObjectID: Sendable, Hashable, CustomStringConvertible {
    /// The UUID's 16 octets in network order (RFC 9562), as its text reads.
    private let octets: [UInt8]

    /// An `objectGUID` value; nil unless it is exactly 16 octets.
    public init?(objectGUID value: [UInt8]) {
        guard value.count == 16 else { return nil }
        octets = [value[3], value[2], value[1], value[0], value[5], value[4], value[7], value[6]] + value[8...]
    }

    /// An `entryUUID` value, or the text of a GUID: 32 hex digits in groups of 8, 4, 4, 4 and 12
    /// joined by hyphens, either case; nil for anything else.
    public init?(entryUUID text: String) {
        let bytes = Array(text.utf8)
        guard bytes.count == 36 else { return nil }
        var octets: [UInt8] = []
        octets.reserveCapacity(16)
        var index = 0
        while index < 36 {
            if [8, 13, 18, 23].contains(index) {
                guard bytes[index] == UInt8(ascii: "-") else { return nil }
                index += 1
                continue
            }
            guard index + 1 < 36, let high = bytes[index].hexValue, let low = bytes[index + 1].hexValue else { return nil }
            octets.append(high << 4 | low)
            index += 2
        }
        self.octets = octets
    }

    /// The `objectGUID` octets of this id, to search AD for it (`LDAPFilter.equality(_:octets:)`).
    public var objectGUID: [UInt8] {
        [octets[3], octets[2], octets[1], octets[0], octets[5], octets[4], octets[7], octets[6]] + octets[8...]
    }

    /// Lowercase `xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx`.
    public var description: String {
        let digits = Array("0123456789abcdef".utf8)
        var text: [UInt8] = []
        text.reserveCapacity(36)
        for (index, octet) in octets.enumerated() {
            if [4, 6, 8, 10].contains(index) { text.append(UInt8(ascii: "-")) }
            text.append(digits[Int(octet >> 4)])
            text.append(digits[Int(octet & 0x0F)])
        }
        return String(decoding: text, as: UTF8.self)
    }
}
