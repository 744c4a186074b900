import CountersignRADIUS
import Crypto
import Foundation
import Testing
@testable import CountersignServer

/// The Access-Request as the server acts on it (`RADIUSAccessRequest`): what is dropped unanswered
/// and what is rejected with a reason, each rule of RFC 2865 §4.1 and §5.44 and RFC 3579 §3.2, on
/// requests signed here as a client signs them (the same computations pyrad's requests verify
/// against in `RADIUSPeerTests`).
@Suite("RADIUS Access-Requests")
struct RADIUSAccessRequestTests {
    static let secret = Array("s3cret-shared".utf8)
    static let authenticator: [UInt8] = (0..<16).map { UInt8($0 * 7 + 3) }

    /// A request with `attributes` after its Message-Authenticator (unless left out), signed with
    /// `secret`: HMAC-MD5 over the packet with the Message-Authenticator's value zeroed.
    static func request(_ attributes: [RADIUSAttribute], code: RADIUSPacket.Code = .accessRequest,
                        messageAuthenticator: Bool = true, secret: [UInt8] = secret) -> RADIUSPacket {
        let zero = RADIUSAttribute(type: RADIUSAttribute.messageAuthenticator, value: Array(repeating: 0, count: 16))
        var packet = RADIUSPacket(code, identifier: 9, authenticator: authenticator,
                                  attributes: (messageAuthenticator ? [zero] : []) + attributes)
        if messageAuthenticator {
            packet.attributes[0].value = Array(HMAC<Insecure.MD5>.authenticationCode(
                for: packet.encoded(), using: SymmetricKey(data: secret)))
        }
        return packet
    }

    /// User-Password hidden as RFC 2865 §5.2 says.
    static func hidden(_ password: String) -> RADIUSAttribute {
        var padded = Array(password.utf8)
        padded += Array(repeating: 0, count: (16 - padded.count % 16) % 16)
        var hidden: [UInt8] = []
        var previous = authenticator
        for start in stride(from: 0, to: padded.count, by: 16) {
            let mask = Array(Insecure.MD5.hash(data: secret + previous))
            let chunk = zip(padded[start..<(start + 16)], mask).map { $0 ^ $1 }
            hidden += chunk
            previous = chunk
        }
        return RADIUSAttribute(type: RADIUSAttribute.userPassword, value: hidden)
    }

    static let userName = RADIUSAttribute(type: RADIUSAttribute.userName, text: "alice")
    static let nas = RADIUSAttribute(type: RADIUSAttribute.nasIdentifier, text: "vpn-gw-1")
    static let station = RADIUSAttribute(type: RADIUSAttribute.callingStationID, text: "203.0.113.9")

    static func refusal(_ packet: RADIUSPacket) -> RADIUSRequestRefusal? {
        do {
            _ = try RADIUSAccessRequest(packet, secret: secret)
            return nil
        } catch {
            return error
        }
    }

    @Test("a PAP request: its user, NAS, station and password, and the identifier and authenticator that key its retransmissions")
    func papRequest() throws {
        let request = try RADIUSAccessRequest(
            Self.request([Self.userName, Self.hidden("correct horse"), Self.nas, Self.station]), secret: Self.secret)
        #expect(request.userName == "alice" && request.password == Array("correct horse".utf8) && request.state == nil)
        #expect(request.nasIdentifier == "vpn-gw-1" && request.callingStationID == "203.0.113.9")
        #expect(request.identifier == 9 && request.requestAuthenticator == Self.authenticator)
        let byAddress = try RADIUSAccessRequest(
            Self.request([Self.userName, Self.hidden("x"), RADIUSAttribute(type: RADIUSAttribute.nasIPAddress, value: [192, 0, 2, 1])]),
            secret: Self.secret)
        #expect(byAddress.nasIPAddress == [192, 0, 2, 1] && byAddress.nasIdentifier == nil)
        let continuing = try RADIUSAccessRequest(
            Self.request([Self.userName, Self.nas, RADIUSAttribute(type: RADIUSAttribute.state, value: [1, 2, 3])]), secret: Self.secret)
        #expect(continuing.password == nil && continuing.state == [1, 2, 3])
    }

    @Test("dropped unanswered: another code, no Message-Authenticator, one under another secret, or one that does not match")
    func dropped() {
        let attributes = [Self.userName, Self.hidden("pw"), Self.nas]
        #expect(Self.refusal(Self.request(attributes, code: .statusServer)) == .drop(.notAccessRequest))
        #expect(Self.refusal(Self.request(attributes, messageAuthenticator: false)) == .drop(.missingMessageAuthenticator))
        #expect(Self.refusal(Self.request(attributes, secret: Array("other".utf8))) == .drop(.invalidMessageAuthenticator))
        var changed = Self.request(attributes)
        changed.attributes[1] = RADIUSAttribute(type: RADIUSAttribute.userName, text: "mallory")
        #expect(Self.refusal(changed) == .drop(.invalidMessageAuthenticator))
    }

    @Test("rejected with a reason: a repeated attribute, no NAS, no user, a user that is not text, CHAP, or no credential")
    func rejected() {
        let repeated = Self.refusal(Self.request([Self.userName, Self.userName, Self.hidden("pw"), Self.nas]))
        #expect(repeated == .reject(.repeatedAttribute(RADIUSAttribute.userName)))
        #expect(Self.refusal(Self.request([Self.userName, Self.hidden("pw")])) == .reject(.missingNASIdentity))
        #expect(Self.refusal(Self.request([Self.hidden("pw"), Self.nas])) == .reject(.missingUserName))
        #expect(Self.refusal(Self.request([RADIUSAttribute(type: RADIUSAttribute.userName, value: [0x61, 0xff]), Self.hidden("pw"), Self.nas]))
                == .reject(.userNameNotText))
        #expect(Self.refusal(Self.request([Self.userName, RADIUSAttribute(type: 3, value: Array(repeating: 1, count: 17)), Self.nas]))
                == .reject(.chapUnsupported))
        #expect(Self.refusal(Self.request([Self.userName, Self.nas])) == .reject(.missingCredential))
        #expect(RADIUSRequestRefusal.Reject.chapUnsupported.replyMessage == "CHAP is not supported: send the password with PAP.")
    }
}
