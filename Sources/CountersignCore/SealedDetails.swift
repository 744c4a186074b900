import Crypto
#if canImport(CryptoKit)
// CryptoKit does not declare its types Sendable in the iOS 17 and 18 SDKs (docs/sdk.md).
@preconcurrency import CryptoKit
#endif
import Foundation

/// Request details sealed to one device's HPKE key (RFC 9180 base mode, a suite of `HPKESuite`).
///
/// The HPKE `info` names the protocol and the device, and the additional data names the request,
/// so a ciphertext sealed for one device or one request cannot be passed off as another's.
///
/// ```swift
/// let sealed = try SealedDetails.seal(plaintext, to: deviceKey, deviceID: "dev_…", requestID: "txn_…")
/// ```
public struct SealedDetails: Codable, Sendable, Equatable {
    /// The suite's name (`HPKESuite.name`).
    public var suite: String
    /// The encapsulated key, base64url.
    public var encapsulatedKey: String
    /// The AES-256-GCM ciphertext and tag, base64url.
    public var ciphertext: String

    public init(suite: String, encapsulatedKey: String, ciphertext: String) {
        self.suite = suite
        self.encapsulatedKey = encapsulatedKey
        self.ciphertext = ciphertext
    }

    enum CodingKeys: String, CodingKey {
        case suite, ciphertext
        case encapsulatedKey = "enc"
    }

    /// `countersign/v1/details` ‖ 0x00 ‖ device id.
    public static func info(deviceID: String) -> Data {
        Data("countersign/v1/details".utf8) + Data([0]) + Data(deviceID.utf8)
    }

    /// The request id, UTF-8.
    public static func additionalData(requestID: String) -> Data {
        Data(requestID.utf8)
    }

    /// A device's key to seal to, with its suite.
    public enum RecipientKey: Sendable {
        case p256(P256.KeyAgreement.PublicKey)
        /// The raw X-Wing public key (1216 bytes); raw, since the key type exists on Apple
        /// platforms only from macOS 26 and iOS 26.
        case xwing(Data)

        public var suite: HPKESuite {
            switch self {
            case .p256: .p256
            case .xwing: .xwing
            }
        }
    }

    /// Seals `plaintext` (canonical `TransactionDetails` bytes) to a device.
    public static func seal(
        _ plaintext: Data, to key: P256.KeyAgreement.PublicKey, deviceID: String, requestID: String
    ) throws -> SealedDetails {
        try seal(plaintext, to: .p256(key), deviceID: deviceID, requestID: requestID)
    }

    /// Seals `plaintext` to a device's key of either suite; X-Wing throws `HPKESuite.Unavailable`
    /// where the platform lacks it, and an error for bytes that are no X-Wing key.
    public static func seal(_ plaintext: Data, to key: RecipientKey, deviceID: String, requestID: String) throws -> SealedDetails {
        let info = info(deviceID: deviceID)
        let aad = additionalData(requestID: requestID)
        let (enc, ciphertext): (Data, Data)
        switch key {
        // Two branches: HPKE's sender takes a Diffie-Hellman key and a KEM key through two
        // initialisers of their own.
        case .p256(let key):
            var sender = try HPKE.Sender(recipientKey: key, ciphersuite: HPKESuite.countersign, info: info)
            ciphertext = try sender.seal(plaintext, authenticating: aad)
            enc = sender.encapsulatedKey
        case .xwing(let raw):
            #if !canImport(CryptoKit) || (compiler(>=6.2) && !COUNTERSIGN_CRYPTOKIT_WITHOUT_XWING)
            guard #available(macOS 26, iOS 26, *) else { throw HPKESuite.Unavailable(suite: .xwing) }
            var sender = try HPKE.Sender(
                recipientKey: try XWingMLKEM768X25519.PublicKey(rawRepresentation: raw), ciphersuite: HPKESuite.xwingCiphersuite,
                info: info)
            ciphertext = try sender.seal(plaintext, authenticating: aad)
            enc = sender.encapsulatedKey
            #else
            _ = raw
            throw HPKESuite.Unavailable(suite: .xwing)
            #endif
        }
        return SealedDetails(
            suite: key.suite.name, encapsulatedKey: enc.base64URLEncodedString, ciphertext: ciphertext.base64URLEncodedString)
    }

    /// The suite the details were sealed with; nil for one this version does not know.
    public var hpkeSuite: HPKESuite? { HPKESuite(rawValue: suite) }

    /// The decoded encapsulated key and ciphertext, checking that the suite is known.
    public func parts() throws(ApprovalMessageError) -> (encapsulatedKey: Data, ciphertext: Data) {
        guard hpkeSuite != nil else { throw .malformed("unsupported HPKE suite \(suite)") }
        guard let enc = Data(base64URLEncoded: encapsulatedKey), let sealed = Data(base64URLEncoded: ciphertext) else {
            throw .malformed("the sealed details are not base64url")
        }
        return (enc, sealed)
    }
}

/// One undecided request addressed to a device, as its inbox, its live stream and
/// `GET /device/v1/requests/{id}` return it: identifiers and times in the clear, the details
/// sealed to this device.
public struct PendingRequestEnvelope: Codable, Sendable, Equatable {
    public var id: String
    public var createdAt: Date
    public var expiresAt: Date
    public var details: SealedDetails

    public init(id: String, createdAt: Date, expiresAt: Date, details: SealedDetails) {
        self.id = id
        self.createdAt = createdAt
        self.expiresAt = expiresAt
        self.details = details
    }

    enum CodingKeys: String, CodingKey {
        case id, details
        case createdAt = "created_at"
        case expiresAt = "expires_at"
    }
}

/// `GET /device/v1/requests`: the device's undecided, unexpired requests, newest first.
public struct PendingRequestList: Codable, Sendable, Equatable {
    public var requests: [PendingRequestEnvelope]

    public init(requests: [PendingRequestEnvelope]) {
        self.requests = requests
    }
}

/// The events of the live stream (`GET /device/v1/requests/stream`, Server-Sent Events).
public enum RequestStreamEvent {
    /// `data` is a `PendingRequestEnvelope`: a new request, or one pending when the stream opened.
    public static let request = "request"
    /// `data` is a `RequestClosed`: a request left the inbox (answered, possibly on another device).
    public static let closed = "closed"
    /// `data` is a `SecurityNoticeList.Item`: something was just done to the user's account (a
    /// device or passkey added, a recovery code or pass used).
    public static let notice = "notice"
}

/// A request that is no longer pending, and why.
public struct RequestClosed: Codable, Sendable, Equatable {
    public var id: String
    /// `approved`, `denied` or `expired`.
    public var status: String

    public init(id: String, status: String) {
        self.id = id
        self.status = status
    }
}
