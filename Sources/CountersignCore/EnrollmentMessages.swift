import Crypto
import Foundation

/// The platform a device says it runs on.
public enum DevicePlatform: String, Codable, Sendable, CaseIterable {
    case ios, ipados, macos, android, linux, windows, other
}

/// A push channel a device can be reached on.
public struct PushRegistration: Codable, Sendable, Equatable {
    public enum Provider: String, Codable, Sendable, CaseIterable {
        case apns, fcm
    }
    public var provider: Provider
    public var token: String

    public init(provider: Provider, token: String) {
        self.provider = provider
        self.token = token
    }

    /// Push tokens are opaque to us, but bounded: APNs tokens are 64 hex digits today and FCM
    /// registration tokens about 160 characters; 4096 leaves room without inviting abuse.
    public static let maximumTokenLength = 4096
}

/// What a device sends to enroll, as the payload of a JWS signed by the new signing key (whose
/// JWK is also in the JWS header), proving the device holds it. `POST <server>/device/v1/enrollments`
/// with `{"enrollment_request": "<jws>"}`.
public struct EnrollmentRequest: Codable, Sendable, Equatable {
    public static let type = "countersign-enrollment+jwt"

    /// The ticket from the enrollment URI; nil when an access token authorizes the enrollment.
    public var ticket: String?
    /// When the user's access token (scope `countersign:enroll`) authorizes the enrollment instead
    /// of a ticket: the base64url SHA-256 of that token (`ath`, as RFC 9449 §4.2 defines it), so
    /// that the proof is bound to the one token sent with it.
    public var accessTokenHash: String?
    /// The server URL from the enrollment URI; binds the proof to one server.
    public var audience: String
    public var issuedAt: Int64
    public var deviceName: String
    public var platform: DevicePlatform
    /// The ES256 key that signs every later request and every answer.
    public var signingKey: ECPublicJWK
    /// The P-256 HPKE key (suite `HPKESuite.p256`) that request details are sealed to.
    public var encryptionKey: ECPublicJWK
    /// Beside it, the device's X-Wing public key (1216 bytes, base64url): a device that sends
    /// one announces it can open `HPKESuite.xwing`, which the server then prefers where the
    /// tenant allows it. Absent: P-256 only.
    public var xwingKey: String?
    public var push: PushRegistration?
    /// The public key derived from the user's PIN (`pin` factor); the device keeps no copy.
    public var pinKey: ECPublicJWK?
    /// The key the platform releases only after a biometric check (`biometric` factor).
    public var biometricKey: ECPublicJWK?
    /// Asks for a TOTP seed for offline codes.
    public var totp: Bool?

    public init(ticket: String?, audience: String, issuedAt: Int64, deviceName: String, platform: DevicePlatform,
                signingKey: ECPublicJWK, encryptionKey: ECPublicJWK, push: PushRegistration?,
                pinKey: ECPublicJWK? = nil, biometricKey: ECPublicJWK? = nil, totp: Bool? = nil,
                accessTokenHash: String? = nil, xwingKey: String? = nil) {
        self.ticket = ticket
        self.accessTokenHash = accessTokenHash
        self.audience = audience
        self.issuedAt = issuedAt
        self.deviceName = deviceName
        self.platform = platform
        self.signingKey = signingKey
        self.encryptionKey = encryptionKey
        self.push = push
        self.pinKey = pinKey
        self.biometricKey = biometricKey
        self.totp = totp
        self.xwingKey = xwingKey
    }

    enum CodingKeys: String, CodingKey {
        case ticket, platform, push, totp
        case audience = "aud"
        case issuedAt = "iat"
        case deviceName = "device_name"
        case signingKey = "signing_key"
        case encryptionKey = "encryption_key"
        case pinKey = "pin_key"
        case biometricKey = "biometric_key"
        case accessTokenHash = "ath"
        case xwingKey = "xwing_key"
    }

    /// The `ath` of `accessToken`.
    public static func hash(accessToken: String) -> String {
        Data(SHA256.hash(data: Data(accessToken.utf8))).base64URLEncodedString
    }
}

/// The body of `POST /device/v1/enrollments`.
public struct EnrollmentSubmission: Codable, Sendable {
    public var enrollmentRequest: String
    public init(enrollmentRequest: String) { self.enrollmentRequest = enrollmentRequest }
    enum CodingKeys: String, CodingKey { case enrollmentRequest = "enrollment_request" }
}

/// The server's answer to an enrollment, as the payload of a JWS signed by the server's
/// device-protocol key (its JWK in the header). The device checks the key's thumbprint against
/// the URI's `fp` and `requestDigest` against the request it sent.
public struct EnrollmentReceipt: Codable, Sendable, Equatable {
    public static let type = "countersign-enrollment-receipt+jwt"

    public var deviceID: String
    public var tenant: String
    public var server: String
    public var user: EnrolledUser
    public var deviceName: String
    public var platform: DevicePlatform
    /// base64url SHA-256 of the enrollment request JWS, as sent.
    public var requestDigest: String
    public var issuedAt: Int64
    /// `TOTPEnrollment.digest()` of the TOTP seed sent beside the receipt, when one was sent.
    public var totpDigest: String?
    /// The device that vouched for this one: set when it enrolled with a handover ticket
    /// (`POST /device/v1/handovers`), and it waits for that device's approval.
    public var vouchedBy: String?

    public init(deviceID: String, tenant: String, server: String, user: EnrolledUser, deviceName: String,
                platform: DevicePlatform, requestDigest: String, issuedAt: Int64, totpDigest: String? = nil,
                vouchedBy: String? = nil) {
        self.vouchedBy = vouchedBy
        self.deviceID = deviceID
        self.tenant = tenant
        self.server = server
        self.user = user
        self.deviceName = deviceName
        self.platform = platform
        self.requestDigest = requestDigest
        self.issuedAt = issuedAt
        self.totpDigest = totpDigest
    }

    enum CodingKeys: String, CodingKey {
        case tenant, server, user, platform
        case deviceID = "device_id"
        case deviceName = "device_name"
        case requestDigest = "request_sha256"
        case issuedAt = "iat"
        case totpDigest = "totp_sha256"
        case vouchedBy = "vouched_by"
    }
}

/// `GET <server>/device/v1/server-key`: the tenant's device-protocol key. A device compares its
/// thumbprint with the enrollment URI's `fp` before it sends the ticket, so a mismatched URI
/// spends no ticket; the signed receipt remains the proof.
public struct ServerKeyResponse: Codable, Sendable, Equatable {
    public var key: ECPublicJWK
    public init(key: ECPublicJWK) { self.key = key }
}

/// The body of a successful enrollment: `{"enrollment_receipt": "<jws>"}`, and the TOTP seed
/// when the device asked for one and the tenant offers them.
public struct EnrollmentResponse: Codable, Sendable {
    public var enrollmentReceipt: String
    public var totp: TOTPEnrollment?
    /// The device certificate: the tenant's token-signing key binding this device's keys to the
    /// user, so that an approval receipt verifies with the tenant's JWKS alone.
    public var deviceCertificate: String?
    /// Set when the device enrolled with a handover ticket: it shows `number` until the device
    /// that vouched for it approves.
    public var handover: PendingHandover?
    public init(enrollmentReceipt: String, totp: TOTPEnrollment? = nil, deviceCertificate: String? = nil,
                handover: PendingHandover? = nil) {
        self.enrollmentReceipt = enrollmentReceipt
        self.totp = totp
        self.deviceCertificate = deviceCertificate
        self.handover = handover
    }
    enum CodingKeys: String, CodingKey {
        case totp, handover
        case enrollmentReceipt = "enrollment_receipt"
        case deviceCertificate = "device_certificate"
    }
}

/// What a device enrolled with a handover ticket shows until the device that vouched for it
/// approves: the number to pick there.
public struct PendingHandover: Codable, Sendable, Equatable {
    /// `hov_…`.
    public var id: String
    /// Two digits.
    public var number: String
    /// Until when the other device may approve.
    public var expiresAt: Date

    public init(id: String, number: String, expiresAt: Date) {
        self.id = id
        self.number = number
        self.expiresAt = expiresAt
    }

    enum CodingKeys: String, CodingKey {
        case id, number
        case expiresAt = "expires_at"
    }
}

/// `POST /device/v1/handovers`: a device asks for an enrollment URI for a new device of the same
/// user, which it will then approve.
public struct HandoverStart: Codable, Sendable, Equatable {
    /// Whether this device is removed once it approves the new one.
    public var retire: Bool?

    public init(retire: Bool? = nil) { self.retire = retire }
}

/// A handover as its device sees it: the answer to `POST /device/v1/handovers` (with the
/// enrollment URI, once) and to `GET /device/v1/handovers/<id>`.
public struct HandoverState: Codable, Sendable, Equatable {
    public enum Status: String, Codable, Sendable {
        /// No device has enrolled with the URI yet.
        case waiting
        /// A new device enrolled and shows a number: approve it with that number, or deny.
        case awaitingApproval = "awaiting_approval"
        case approved, denied, expired
    }

    /// The device that enrolled with the URI.
    public struct NewDevice: Codable, Sendable, Equatable {
        public var deviceID: String
        public var name: String
        public var platform: DevicePlatform

        public init(deviceID: String, name: String, platform: DevicePlatform) {
            self.deviceID = deviceID
            self.name = name
            self.platform = platform
        }

        enum CodingKeys: String, CodingKey {
            case name, platform
            case deviceID = "device_id"
        }
    }

    public var id: String
    public var status: Status
    public var retire: Bool
    public var expiresAt: Date
    /// Only in the answer to `POST /device/v1/handovers`: the URI (and QR code text) the new
    /// device enrolls with, once.
    public var enrollmentURI: String?
    public var newDevice: NewDevice?
    /// While `awaiting_approval`: three two-digit numbers, the one the new device shows among them.
    public var choices: [String]?

    public init(id: String, status: Status, retire: Bool, expiresAt: Date, enrollmentURI: String? = nil,
                newDevice: NewDevice? = nil, choices: [String]? = nil) {
        self.id = id
        self.status = status
        self.retire = retire
        self.expiresAt = expiresAt
        self.enrollmentURI = enrollmentURI
        self.newDevice = newDevice
        self.choices = choices
    }

    enum CodingKeys: String, CodingKey {
        case id, status, retire, choices
        case expiresAt = "expires_at"
        case enrollmentURI = "enrollment_uri"
        case newDevice = "new_device"
    }
}

/// `POST /device/v1/handovers/<id>/approve`: the number the new device shows.
public struct HandoverApproval: Codable, Sendable, Equatable {
    public var number: String

    public init(number: String) { self.number = number }
}

/// The user a device is enrolled for.
public struct EnrolledUser: Codable, Sendable, Equatable {
    public var id: String
    public var username: String
    public var displayName: String?

    public init(id: String, username: String, displayName: String?) {
        self.id = id
        self.username = username
        self.displayName = displayName
    }

    enum CodingKeys: String, CodingKey {
        case id, username
        case displayName = "display_name"
    }
}

/// `GET /device/v1/self`: the device's own enrollment as the server holds it.
public struct DeviceDescription: Codable, Sendable, Equatable {
    public var deviceID: String
    public var tenant: String
    public var user: EnrolledUser
    public var name: String
    public var platform: DevicePlatform
    public var status: String
    public var push: PushStatus?
    public var createdAt: Date
    public var lastSeenAt: Date?
    /// Which factor keys the server holds for this device.
    public var factors: EnrolledFactors?

    /// The factor keys and seeds registered for a device.
    public struct EnrolledFactors: Codable, Sendable, Equatable {
        public var pin: Bool
        public var biometric: Bool
        public var totp: Bool

        public init(pin: Bool, biometric: Bool, totp: Bool) {
            self.pin = pin
            self.biometric = biometric
            self.totp = totp
        }
    }

    /// The push channel as registered, with the token reduced to its last characters.
    public struct PushStatus: Codable, Sendable, Equatable {
        public var provider: PushRegistration.Provider
        public var tokenSuffix: String
        public var valid: Bool
        /// Why the push provider refused the token (`Unregistered`, `BadDeviceToken`,
        /// `UNREGISTERED`, …) when `valid` is false. The device keeps working through its inbox
        /// and live stream; registering a new token makes it valid again.
        public var error: String?

        public init(provider: PushRegistration.Provider, tokenSuffix: String, valid: Bool, error: String? = nil) {
            self.provider = provider
            self.tokenSuffix = tokenSuffix
            self.valid = valid
            self.error = error
        }

        enum CodingKeys: String, CodingKey {
            case provider, valid, error
            case tokenSuffix = "token_suffix"
        }
    }

    public init(deviceID: String, tenant: String, user: EnrolledUser, name: String, platform: DevicePlatform,
                status: String, push: PushStatus?, createdAt: Date, lastSeenAt: Date?, factors: EnrolledFactors? = nil) {
        self.deviceID = deviceID
        self.tenant = tenant
        self.user = user
        self.name = name
        self.platform = platform
        self.status = status
        self.push = push
        self.createdAt = createdAt
        self.lastSeenAt = lastSeenAt
        self.factors = factors
    }

    enum CodingKeys: String, CodingKey {
        case tenant, user, name, platform, status, push, factors
        case deviceID = "device_id"
        case createdAt = "created_at"
        case lastSeenAt = "last_seen_at"
    }
}

/// `PATCH /device/v1/self`.
public struct DeviceRename: Codable, Sendable {
    public var name: String
    public init(name: String) { self.name = name }
}

/// Device names: what a person sees in a list of their devices.
public enum DeviceName {
    /// In Unicode code points, which every platform counts alike (unlike user-perceived
    /// characters, which depend on the Unicode version, or UTF-16 units).
    public static let maximumLength = 64

    /// Trims white space and refuses empty or over-long names, and names with a character
    /// `NameCharacters` refuses (control characters, bidirectional overrides).
    public static func validate(_ raw: String) -> String? {
        let name = raw.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !name.isEmpty, name.unicodeScalars.count <= maximumLength, !NameCharacters.refuses(name) else { return nil }
        return name
    }
}
