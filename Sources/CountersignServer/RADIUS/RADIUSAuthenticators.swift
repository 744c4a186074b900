import CountersignRADIUS
import Crypto
import Foundation

/// What a RADIUS packet proves with the shared secret of the client that sent it: the
/// Message-Authenticator of RFC 3579 §3.2 (HMAC-MD5 over the whole packet), the hidden
/// User-Password of RFC 2865 §5.2, and the Response Authenticator of RFC 2865 §3. MD5 is what
/// the protocol defines; nothing else in Countersign uses it.
///
/// Every Access-Request must carry a valid Message-Authenticator, and every response carries one
/// as its first attribute (the BlastRADIUS mitigation, CVE-2024-3596): a request without it is
/// dropped before its password is looked at.
enum RADIUSAuthenticators {
    /// Whether `packet` carries exactly one Message-Authenticator, and it is the HMAC-MD5 under
    /// `secret` of the packet with its own value zeroed. For a request, the packet's authenticator
    /// is its Request Authenticator, as sent.
    static func messageAuthenticatorIsValid(_ packet: RADIUSPacket, secret: [UInt8]) -> Bool {
        let values = packet.all(RADIUSAttribute.messageAuthenticator)
        guard values.count == 1, let received = values.first else { return false }
        let expected = messageAuthenticator(of: zeroingMessageAuthenticator(packet), secret: secret)
        return received.count == expected.count
            && zip(received, expected).reduce(UInt8(0)) { $0 | ($1.0 ^ $1.1) } == 0
    }

    /// The User-Password of a request, un-hidden (RFC 2865 §5.2), with the padding NULs taken off;
    /// nil when the request has none.
    static func userPassword(of request: RADIUSPacket, secret: [UInt8]) -> [UInt8]? {
        guard let hidden = request.first(RADIUSAttribute.userPassword) else { return nil }
        var password: [UInt8] = []
        password.reserveCapacity(hidden.count)
        var previous = request.authenticator
        for start in stride(from: 0, to: hidden.count, by: 16) {
            let chunk = Array(hidden[start..<(start + 16)])
            let mask = Array(Insecure.MD5.hash(data: secret + previous))
            password += zip(chunk, mask).map { $0 ^ $1 }
            previous = chunk
        }
        while password.last == 0 { password.removeLast() }
        return password
    }

    /// The octets of a response to `request`: Message-Authenticator first (computed, as RFC 3579
    /// §3.2 says, with the Request Authenticator in the header), then `attributes`, and the
    /// Response Authenticator over all of it (RFC 2865 §3).
    static func response(_ code: RADIUSPacket.Code, to request: RADIUSPacket, attributes: [RADIUSAttribute],
                         secret: [UInt8]) -> [UInt8] {
        var packet = RADIUSPacket(
            code, identifier: request.identifier, authenticator: request.authenticator,
            attributes: [RADIUSAttribute(type: RADIUSAttribute.messageAuthenticator, value: Array(repeating: 0, count: 16))]
                + attributes)
        packet.attributes[0].value = messageAuthenticator(of: packet, secret: secret)
        var bytes = packet.encoded()
        let responseAuthenticator = Insecure.MD5.hash(data: bytes + secret)
        bytes.replaceSubrange(4..<20, with: Array(responseAuthenticator))
        return bytes
    }

    /// HMAC-MD5 under `secret` of the packet's octets as they stand.
    private static func messageAuthenticator(of packet: RADIUSPacket, secret: [UInt8]) -> [UInt8] {
        Array(HMAC<Insecure.MD5>.authenticationCode(for: packet.encoded(), using: SymmetricKey(data: secret)))
    }

    private static func zeroingMessageAuthenticator(_ packet: RADIUSPacket) -> RADIUSPacket {
        var zeroed = packet
        for index in zeroed.attributes.indices where zeroed.attributes[index].type == RADIUSAttribute.messageAuthenticator {
            zeroed.attributes[index].value = Array(repeating: 0, count: 16)
        }
        return zeroed
    }
}
