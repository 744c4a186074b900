#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// An IPv4 or IPv6 network in CIDR notation (`192.0.2.0/24`, `2001:db8::/32`; an address alone
/// is the network of that one address), as a RADIUS client's allowed sources are written.
/// Addresses are read by the C library's `inet_pton`; the host bits must be zero, so that what is
/// stored is what the administrator meant.
struct IPNetwork: Sendable, Hashable, CustomStringConvertible {
    /// 4 or 16 octets, host bits zero.
    let address: [UInt8]
    let prefixLength: Int

    init(_ text: String) throws(IPNetworkError) {
        let parts = text.split(separator: "/", maxSplits: 1, omittingEmptySubsequences: false)
        guard let address = Self.address(String(parts[0])) else { throw .notAnAddress(text) }
        // An IPv4-mapped IPv6 network (`::ffff:192.0.2.0/120`) is its IPv4 network.
        let mapped = address.count == 4 && parts[0].contains(":")
        let bits = mapped ? 128 : address.count * 8
        var prefixLength = address.count * 8
        if parts.count == 2 {
            let digits = parts[1]
            guard (1...3).contains(digits.count), digits.allSatisfy({ ("0"..."9").contains($0) }),
                  digits == "0" || digits.first != "0", let length = Int(digits),
                  ((mapped ? 96 : 0)...bits).contains(length)
            else { throw .badPrefixLength(text, maximum: bits) }
            prefixLength = mapped ? length - 96 : length
        }
        guard Self.masked(address, prefixLength) == address else { throw .hostBitsSet(text) }
        self.address = address
        self.prefixLength = prefixLength
    }

    /// The network of `prefixLength` bits that holds `address` (4 or 16 octets).
    init(containing address: [UInt8], prefixLength: Int) {
        self.address = Self.masked(address, prefixLength)
        self.prefixLength = prefixLength
    }

    /// The network a risk rule calls the request's (`RiskRule.Signal.newNetwork`): the /24 of an
    /// IPv4 address, the /48 of an IPv6 one; nil when `text` is no address.
    static func riskNetwork(of text: String) -> IPNetwork? {
        guard let address = address(text) else { return nil }
        return IPNetwork(containing: address, prefixLength: address.count == 4 ? 24 : 48)
    }

    /// The octets of an IPv4 or IPv6 address in text; nil when it is neither. An IPv4-mapped IPv6
    /// address (`::ffff:192.0.2.1`) is its IPv4 address, as a dual-stack socket reports one.
    static func address(_ text: String) -> [UInt8]? {
        var four = in_addr()
        if inet_pton(AF_INET, text, &four) == 1 {
            return withUnsafeBytes(of: &four) { Array($0) }
        }
        var six = in6_addr()
        guard inet_pton(AF_INET6, text, &six) == 1 else { return nil }
        let octets = withUnsafeBytes(of: &six) { Array($0) }
        if octets[0..<10].allSatisfy({ $0 == 0 }), octets[10] == 0xFF, octets[11] == 0xFF { return Array(octets[12...]) }
        return octets
    }

    /// Whether `address` (4 or 16 octets) is in this network.
    func contains(_ address: [UInt8]) -> Bool {
        address.count == self.address.count && Self.masked(address, prefixLength) == self.address
    }

    /// Whether the two networks share an address: one contains the other.
    func overlaps(_ other: IPNetwork) -> Bool {
        guard address.count == other.address.count else { return false }
        let shorter = min(prefixLength, other.prefixLength)
        return Self.masked(address, shorter) == Self.masked(other.address, shorter)
    }

    var description: String { "\(Self.addressText(address))/\(prefixLength)" }

    /// An address of 4 or 16 octets in its usual text.
    static func addressText(_ address: [UInt8]) -> String {
        guard address.count == 16 else { return address.map(String.init).joined(separator: ".") }
        var six = in6_addr()
        withUnsafeMutableBytes(of: &six) { $0.copyBytes(from: address) }
        var buffer = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN))
        inet_ntop(AF_INET6, &six, &buffer, socklen_t(buffer.count))
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    private static func masked(_ address: [UInt8], _ prefixLength: Int) -> [UInt8] {
        address.enumerated().map { index, octet in
            let kept = min(8, max(0, prefixLength - index * 8))
            return kept == 8 ? octet : octet & ~(UInt8(0xFF) >> kept)
        }
    }
}

enum IPNetworkError: Error, Sendable, Equatable, CustomStringConvertible {
    case notAnAddress(String)
    case badPrefixLength(String, maximum: Int)
    case hostBitsSet(String)

    var description: String {
        switch self {
        case .notAnAddress(let text): "\(text) is not an IPv4 or IPv6 address or network"
        case .badPrefixLength(let text, let maximum): "\(text) has a prefix length that is not 0 to \(maximum)"
        case .hostBitsSet(let text): "\(text) has host bits set; write the network's first address"
        }
    }
}

/// A network is written as its CIDR text (`192.0.2.0/24`).
extension IPNetwork: Encodable {
    func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(description)
    }
}
