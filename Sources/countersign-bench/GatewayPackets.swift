import CountersignRADIUS
import Crypto
import Foundation

/// RADIUS packets as a gateway writes them, for the load generator of `countersign-bench
/// radius`: Access-Requests with User-Password hidden under the shared secret (RFC 2865 §5.2) and
/// a Message-Authenticator first (RFC 3579 §3.2; Countersign drops a request without one), and
/// answers checked by their Response Authenticator (RFC 2865 §3). The server's half is
/// `RADIUSAuthenticators`; this one is written from the RFCs, as pyrad and radclient are, so that
/// the bench does not borrow the code it measures.
struct GatewayPackets: Sendable {
    let secret: [UInt8]

    /// A request ready to send, with the Request Authenticator its answer is checked against.
    struct Request: Sendable {
        let bytes: [UInt8]
        let authenticator: [UInt8]
    }

    /// The NAS the bench's requests name (RFC 2865 §4.1 asks for NAS-Identifier or NAS-IP-Address).
    static let nasIdentifier = "bench-gateway"

    func accessRequest(identifier: UInt8, userName: String, password: String, callingStation: String) -> Request {
        let authenticator = Self.randomAuthenticator()
        return signed(RADIUSPacket(.accessRequest, identifier: identifier, authenticator: authenticator, attributes: [
            RADIUSAttribute(type: RADIUSAttribute.userName, text: userName),
            RADIUSAttribute(type: RADIUSAttribute.userPassword, value: hide(Array(password.utf8), with: authenticator)),
            RADIUSAttribute(type: RADIUSAttribute.nasIdentifier, text: Self.nasIdentifier),
            RADIUSAttribute(type: RADIUSAttribute.callingStationID, text: callingStation),
        ]))
    }

    /// Status-Server (RFC 5997): authenticated and answered, but nothing looked up or stored.
    func statusServer(identifier: UInt8) -> Request {
        signed(RADIUSPacket(.statusServer, identifier: identifier, authenticator: Self.randomAuthenticator(), attributes: []))
    }

    /// Whether `answer` is a whole packet answering `request` under the secret: its Response
    /// Authenticator is MD5(Code, Identifier, Length, Request Authenticator, Attributes, Secret).
    func isAnswer(_ answer: ArraySlice<UInt8>, to request: Request) -> Bool {
        let start = answer.startIndex
        guard answer.count >= RADIUSPacket.headerLength,
              Int(answer[start + 2]) << 8 | Int(answer[start + 3]) == answer.count,
              answer[start + 1] == request.bytes[1] else { return false }
        var digest = Insecure.MD5()
        digest.update(data: answer[start..<(start + 4)])
        digest.update(data: request.authenticator)
        digest.update(data: answer[(start + 20)...])
        digest.update(data: secret)
        return digest.finalize().elementsEqual(answer[(start + 4)..<(start + 20)])
    }

    /// The packet with its Message-Authenticator, the HMAC-MD5 of the packet as sent with that
    /// attribute's value zeroed.
    private func signed(_ unsigned: RADIUSPacket) -> Request {
        var packet = unsigned
        packet.attributes.insert(
            RADIUSAttribute(type: RADIUSAttribute.messageAuthenticator, value: Array(repeating: 0, count: 16)), at: 0)
        packet.attributes[0].value = Array(
            HMAC<Insecure.MD5>.authenticationCode(for: packet.encoded(), using: SymmetricKey(data: secret)))
        return Request(bytes: packet.encoded(), authenticator: packet.authenticator)
    }

    /// RFC 2865 §5.2: the password padded with NULs to a multiple of 16 octets, each block XORed
    /// with MD5(secret + the previous hidden block), the Request Authenticator before the first.
    private func hide(_ password: [UInt8], with authenticator: [UInt8]) -> [UInt8] {
        let padded = password + Array(repeating: 0, count: max(16, (password.count + 15) / 16 * 16) - password.count)
        var hidden: [UInt8] = []
        var previous = authenticator
        for start in stride(from: 0, to: padded.count, by: 16) {
            let mask = Insecure.MD5.hash(data: secret + previous)
            previous = zip(padded[start..<(start + 16)], mask).map { $0 ^ $1 }
            hidden += previous
        }
        return hidden
    }

    /// A Request Authenticator: 16 octets from the system's random generator, never repeated in
    /// practice, so that no two requests of a run are duplicates of each other.
    private static func randomAuthenticator() -> [UInt8] {
        var generator = SystemRandomNumberGenerator()
        return (0..<16).map { _ in UInt8.random(in: .min ... .max, using: &generator) }
    }
}
