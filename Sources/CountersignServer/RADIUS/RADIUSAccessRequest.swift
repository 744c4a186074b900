import CountersignRADIUS
import Foundation

/// An Access-Request as the RADIUS server acts on it (RFC 2865 §4.1), read from a packet with the
/// shared secret of the RADIUS client it came from. In order:
///
/// 1. it is an Access-Request (other codes are not this reader's);
/// 2. it carries exactly one Message-Authenticator, valid under the secret (RFC 3579 §3.2; required
///    of every request, the BlastRADIUS mitigation) — otherwise it is dropped unanswered, as
///    RFC 2865 §3 says of a request that does not authenticate;
/// 3. User-Name, User-Password, State, NAS-IP-Address, NAS-Identifier and Calling-Station-Id appear
///    at most once each (RFC 2865 §5.44);
/// 4. it names its NAS: NAS-IP-Address or NAS-Identifier (RFC 2865 §4.1, a MUST that Countersign
///    enforces, so that the phone can say which gateway asks);
/// 5. it names its user in UTF-8 (User-Name, RFC 2865 §5.1);
/// 6. it carries a password (PAP) or a State to continue a challenge; CHAP-Password is refused,
///    since a push needs the password in no form and a passcode cannot be checked against CHAP.
///
/// Failures from step 3 on are answered with an Access-Reject whose Reply-Message says why: the
/// request authenticated, so its sender is the configured client and may be told.
struct RADIUSAccessRequest: Sendable, Equatable {
    let identifier: UInt8
    let requestAuthenticator: [UInt8]
    let userName: String
    /// The un-hidden User-Password; nil when the request carries a State instead.
    let password: [UInt8]?
    /// The State of an Access-Challenge this request answers.
    let state: [UInt8]?
    let nasIdentifier: String?
    let nasIPAddress: [UInt8]?
    let callingStationID: String?
    let calledStationID: String?
    /// Service-Type (RFC 2865 §5.6) by its name, `Framed-User` for a VPN, say.
    let serviceType: String?

    static let chapPassword: UInt8 = 3
    static let onceOnly: [UInt8] = [
        RADIUSAttribute.userName, RADIUSAttribute.userPassword, RADIUSAttribute.state, RADIUSAttribute.nasIPAddress,
        RADIUSAttribute.nasIdentifier, RADIUSAttribute.callingStationID, RADIUSAttribute.calledStationID,
        RADIUSAttribute.serviceType,
    ]

    /// The Service-Type values of RFC 2865 §5.6 by number.
    static let serviceTypes: [UInt32: String] = [
        1: "Login-User", 2: "Framed-User", 3: "Callback-Login-User", 4: "Callback-Framed-User", 5: "Outbound-User",
        6: "Administrative-User", 7: "NAS-Prompt-User", 8: "Authenticate-Only", 9: "Callback-NAS-Prompt",
        10: "Call-Check", 11: "Callback-Administrative",
    ]

    init(_ packet: RADIUSPacket, secret: [UInt8]) throws(RADIUSRequestRefusal) {
        guard packet.code == RADIUSPacket.Code.accessRequest.rawValue else { throw .drop(.notAccessRequest) }
        guard packet.first(RADIUSAttribute.messageAuthenticator) != nil else { throw .drop(.missingMessageAuthenticator) }
        guard RADIUSAuthenticators.messageAuthenticatorIsValid(packet, secret: secret) else {
            throw .drop(.invalidMessageAuthenticator)
        }
        if let repeated = Self.onceOnly.first(where: { packet.all($0).count > 1 }) {
            throw .reject(.repeatedAttribute(repeated))
        }
        nasIdentifier = packet.text(RADIUSAttribute.nasIdentifier)
        nasIPAddress = packet.first(RADIUSAttribute.nasIPAddress)
        guard nasIdentifier != nil || nasIPAddress != nil else { throw .reject(.missingNASIdentity) }
        guard let userName = packet.text(RADIUSAttribute.userName) else {
            throw .reject(packet.first(RADIUSAttribute.userName) == nil ? .missingUserName : .userNameNotText)
        }
        guard packet.first(Self.chapPassword) == nil else { throw .reject(.chapUnsupported) }
        password = RADIUSAuthenticators.userPassword(of: packet, secret: secret)
        state = packet.first(RADIUSAttribute.state)
        guard password != nil || state != nil else { throw .reject(.missingCredential) }
        self.userName = userName
        identifier = packet.identifier
        requestAuthenticator = packet.authenticator
        callingStationID = packet.text(RADIUSAttribute.callingStationID)
        calledStationID = packet.text(RADIUSAttribute.calledStationID)
        serviceType = packet.first(RADIUSAttribute.serviceType).map { octets in
            let number = octets.reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
            return Self.serviceTypes[number] ?? String(number)
        }
    }
}

/// Why an Access-Request is not acted on: dropped unanswered (it did not authenticate), or
/// rejected with a Reply-Message (it did, and is malformed).
enum RADIUSRequestRefusal: Error, Sendable, Equatable {
    case drop(Drop)
    case reject(Reject)

    enum Drop: String, Sendable, Equatable {
        case notAccessRequest = "not_access_request"
        case missingMessageAuthenticator = "missing_message_authenticator"
        case invalidMessageAuthenticator = "invalid_message_authenticator"
    }

    enum Reject: Sendable, Equatable {
        case repeatedAttribute(UInt8)
        case missingNASIdentity
        case missingUserName
        case userNameNotText
        case chapUnsupported
        case missingCredential

        /// The Reply-Message of the Access-Reject.
        var replyMessage: String {
            switch self {
            case .repeatedAttribute(let type): "The request carries attribute \(type) more than once."
            case .missingNASIdentity: "The request names no NAS: send NAS-Identifier or NAS-IP-Address."
            case .missingUserName: "The request names no user: send User-Name."
            case .userNameNotText: "User-Name is not UTF-8 text."
            case .chapUnsupported: "CHAP is not supported: send the password with PAP."
            case .missingCredential: "The request carries neither User-Password nor State."
            }
        }
    }
}
