import Crypto
import Foundation

/// The server's signed word that it no longer knows a device, sent with the 401
/// `unknown_device` and `device_deregistered` answers as the `deregistration` member of the
/// error body. A device erases an enrollment only on a notice that its server's key signed for
/// this device and for the very request it just sent (`jti`), so an answer forged on the way,
/// or replayed from an earlier request, cannot make it forget its keys.
public struct DeregistrationNotice: Codable, Sendable, Equatable {
    public static let type = "countersign-deregistration+jwt"

    public enum Status: String, Codable, Sendable {
        /// The server has no record of the device.
        case unknown
        /// The device was removed (by itself or an administrator).
        case deleted
    }

    /// Why a removed device was removed, so the app can tell its user.
    public enum Reason: String, Codable, Sendable {
        /// Too many wrong PINs in a row (the SDK's `userDeregistered`).
        case pinAttemptsExceeded = "pin_attempts_exceeded"
        /// The user was removed (the SDK's `userDisenrolled`).
        case userRemoved = "user_removed"
        /// The device was removed, by itself or an administrator (`deviceDeregistered`).
        case deviceRemoved = "device_removed"
    }

    public var deviceID: String
    public var status: Status
    /// For `deleted`: why, when the server recorded it.
    public var reason: Reason?
    /// The `jti` of the request being answered.
    public var requestNonce: String
    public var issuedAt: Int64

    public init(deviceID: String, status: Status, requestNonce: String, issuedAt: Int64, reason: Reason? = nil) {
        self.deviceID = deviceID
        self.status = status
        self.reason = reason
        self.requestNonce = requestNonce
        self.issuedAt = issuedAt
    }

    enum CodingKeys: String, CodingKey {
        case status, reason
        case deviceID = "device_id"
        case requestNonce = "jti"
        case issuedAt = "iat"
    }

    /// A reason this version does not know is read as none, so a server that adds reasons does
    /// not make older devices ignore the notice itself.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        deviceID = try container.decode(String.self, forKey: .deviceID)
        status = try container.decode(Status.self, forKey: .status)
        requestNonce = try container.decode(String.self, forKey: .requestNonce)
        issuedAt = try container.decode(Int64.self, forKey: .issuedAt)
        reason = (try? container.decodeIfPresent(String.self, forKey: .reason)).flatMap { $0 }.flatMap(Reason.init(rawValue:))
    }

    /// Signs the notice with the tenant's device-protocol key.
    public func sign(with key: some ES256Signer) throws -> String {
        try CompactJWS.sign(header: ["typ": .string(Self.type)], payload: try JSONValue(encoding: self).canonicalData,
                            signer: key).serialized
    }

    /// The notice in `text`, if `serverKey` signed it for `deviceID` and the request `nonce`.
    public static func verified(_ text: String, serverKey: ECPublicJWK, deviceID: String, nonce: String) -> DeregistrationNotice? {
        guard let jws = try? CompactJWS(parsing: text), jws.type == type,
              let key = try? serverKey.signingKey(), jws.isValid(for: key),
              !JSONValue.hasDuplicateMemberNames(jws.payload),
              let notice = try? JSONDecoder().decode(DeregistrationNotice.self, from: jws.payload),
              notice.deviceID == deviceID, notice.requestNonce == nonce else { return nil }
        return notice
    }
}
