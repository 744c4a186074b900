/// A RADIUS packet (RFC 2865 §3), read strictly and written back byte for byte: the code, the
/// identifier, the 16-octet authenticator and the attributes in the order they came. Reading
/// checks only what the packet's own framing and each attribute's defined length say; what a
/// packet means (its authenticators, the shared secret, which attributes a request must carry)
/// is the server's (`CountersignServer/RADIUS`). Nothing here allocates more than the bytes it
/// was given, and no input makes it trap: it is the part a network peer controls, and is fuzzed
/// (`Fuzz/`).
public struct RADIUSPacket: Sendable, Equatable {
    /// The codes this server reads or writes (RFC 2865 §3, RFC 5997 for Status-Server).
    public enum Code: UInt8, Sendable {
        case accessRequest = 1
        case accessAccept = 2
        case accessReject = 3
        case accessChallenge = 11
        case statusServer = 12
    }

    /// The smallest and largest packets RFC 2865 §3 allows.
    public static let headerLength = 20
    public static let maximumLength = 4096

    /// The code as it came; `Code(rawValue:)` names the ones this server knows.
    public var code: UInt8
    public var identifier: UInt8
    /// The Request Authenticator of a request, the Response Authenticator of a response.
    public var authenticator: [UInt8]
    public var attributes: [RADIUSAttribute]

    public init(code: UInt8, identifier: UInt8, authenticator: [UInt8], attributes: [RADIUSAttribute]) {
        precondition(authenticator.count == 16, "an authenticator is 16 octets")
        self.code = code
        self.identifier = identifier
        self.authenticator = authenticator
        self.attributes = attributes
    }

    public init(_ code: Code, identifier: UInt8, authenticator: [UInt8], attributes: [RADIUSAttribute]) {
        self.init(code: code.rawValue, identifier: identifier, authenticator: authenticator, attributes: attributes)
    }

    /// Reads a packet. Octets after the packet's Length are padding and ignored (RFC 2865 §3);
    /// fewer octets than its Length, or a Length outside 20–4096, and it is no packet.
    public init(parsing bytes: [UInt8]) throws(RADIUSPacketError) {
        guard bytes.count >= Self.headerLength else { throw .tooShort(bytes.count) }
        let length = Int(bytes[2]) << 8 | Int(bytes[3])
        guard (Self.headerLength...Self.maximumLength).contains(length) else { throw .lengthOutOfRange(length) }
        guard bytes.count >= length else { throw .truncated(declared: length, received: bytes.count) }
        code = bytes[0]
        identifier = bytes[1]
        authenticator = Array(bytes[4..<20])
        var attributes: [RADIUSAttribute] = []
        var offset = Self.headerLength
        while offset < length {
            guard length - offset >= 2 else { throw .attributeTruncated(offset: offset) }
            let type = bytes[offset]
            let attributeLength = Int(bytes[offset + 1])
            guard attributeLength >= 2 else { throw .attributeLength(type: type, length: attributeLength) }
            guard offset + attributeLength <= length else { throw .attributeTruncated(offset: offset) }
            let value = Array(bytes[(offset + 2)..<(offset + attributeLength)])
            try RADIUSAttribute.check(type: type, value: value)
            attributes.append(RADIUSAttribute(type: type, value: value))
            offset += attributeLength
        }
        self.attributes = attributes
    }

    /// The packet's octets, its Length computed. The attributes must fit in 4096 octets (a
    /// response is built from values the server bounds).
    public func encoded() -> [UInt8] {
        var bytes: [UInt8] = [code, identifier, 0, 0]
        bytes += authenticator
        for attribute in attributes {
            bytes.append(attribute.type)
            bytes.append(UInt8(attribute.value.count + 2))
            bytes += attribute.value
        }
        precondition(bytes.count <= Self.maximumLength, "a RADIUS packet is at most 4096 octets")
        bytes[2] = UInt8(bytes.count >> 8)
        bytes[3] = UInt8(bytes.count & 0xff)
        return bytes
    }

    /// The value of the first attribute of `type`.
    public func first(_ type: UInt8) -> [UInt8]? {
        attributes.first { $0.type == type }?.value
    }

    /// The values of every attribute of `type`, in order.
    public func all(_ type: UInt8) -> [[UInt8]] {
        attributes.filter { $0.type == type }.map(\.value)
    }

    /// The first attribute of `type` as text: UTF-8, as RFC 2865 §5 defines text; nil if absent
    /// or not UTF-8.
    public func text(_ type: UInt8) -> String? {
        first(type).flatMap { String(validating: $0, as: UTF8.self) }
    }
}

/// One attribute: its type and value (the Length octet is the value's count plus 2).
public struct RADIUSAttribute: Sendable, Equatable {
    public var type: UInt8
    public var value: [UInt8]

    public init(type: UInt8, value: [UInt8]) {
        precondition(value.count <= 253, "an attribute's value is at most 253 octets")
        self.type = type
        self.value = value
    }

    public init(type: UInt8, text: String) {
        self.init(type: type, value: Array(text.utf8))
    }

    // The attribute types this server reads or writes (RFC 2865 §5, RFC 3579 §3.2, RFC 3162).
    public static let userName: UInt8 = 1
    public static let userPassword: UInt8 = 2
    public static let nasIPAddress: UInt8 = 4
    public static let nasPort: UInt8 = 5
    public static let serviceType: UInt8 = 6
    public static let filterID: UInt8 = 11
    public static let replyMessage: UInt8 = 18
    public static let state: UInt8 = 24
    public static let `class`: UInt8 = 25
    public static let calledStationID: UInt8 = 30
    public static let callingStationID: UInt8 = 31
    public static let nasIdentifier: UInt8 = 32
    public static let proxyState: UInt8 = 33
    public static let messageAuthenticator: UInt8 = 80
    public static let nasIPv6Address: UInt8 = 95

    /// The value lengths RFC 2865 §5, RFC 3579 §3.2 and RFC 3162 §2.1 define for the types
    /// above; other types only need to fit the packet. A text or string attribute is never
    /// empty (RFC 2865 §5: its length is at least 3).
    static func check(type: UInt8, value: [UInt8]) throws(RADIUSPacketError) {
        let count = value.count
        let valid = switch type {
        case userPassword: (16...128).contains(count) && count % 16 == 0
        case nasIPAddress, nasPort, serviceType: count == 4
        case messageAuthenticator, nasIPv6Address: count == 16
        case userName, filterID, replyMessage, state, `class`, calledStationID, callingStationID, nasIdentifier, proxyState:
            count >= 1
        default: true
        }
        guard valid else { throw .attributeLength(type: type, length: count + 2) }
    }
}

/// Why octets are no RADIUS packet. A server drops such a packet without an answer (RFC 2865
/// §3, §5) and counts it.
public enum RADIUSPacketError: Error, Sendable, Equatable {
    /// Fewer than the 20 octets of a header.
    case tooShort(Int)
    /// A Length field below 20 or above 4096.
    case lengthOutOfRange(Int)
    /// Fewer octets than the Length field says.
    case truncated(declared: Int, received: Int)
    /// An attribute that runs past the packet's Length.
    case attributeTruncated(offset: Int)
    /// An attribute whose Length is below 2, or not what its type defines.
    case attributeLength(type: UInt8, length: Int)
}
