import CountersignCBOR
import CountersignWebAuthn
import Foundation

/// A registered passkey: the credential record of WebAuthn Level 3 §7.1 step 29, its user, and
/// what the account page and the admin API show of it.
struct Passkey: Sendable, Equatable {
    var id: String
    var tenantID: String
    var userID: String
    var credentialID: Data
    /// The credential public key as COSE_Key CBOR.
    var publicKey: Data
    var algorithm: Int64
    var signCount: Int64
    var uvInitialized: Bool
    var backupEligible: Bool
    var backupState: Bool
    var transports: [String]
    var aaguid: Data
    var attestationFormat: String
    var attestationKind: String
    var attestationTrusted: Bool
    /// The attestation object and client data of the registration, kept so that attestation
    /// can be judged again later (§7.1 step 29, optional members).
    var attestationObject: Data
    var clientDataJSON: Data
    var name: String
    var createdAt: Date
    var lastUsedAt: Date?
    /// When the signature counter last failed to increase: the credential may be cloned.
    var cloneWarningAt: Date?

    /// `hwk` for a key bound to one authenticator, `swk` for one that may be synced
    /// (backup-eligible), per RFC 8176.
    var keyMethod: String { backupEligible ? "swk" : "hwk" }

    /// The record the authentication ceremony checks an assertion against.
    func credentialRecord(userHandle: Data) throws -> CredentialRecord {
        CredentialRecord(
            credentialID: Array(credentialID), userHandle: Array(userHandle),
            publicKey: try COSEKey(CBORDecoding.value(Array(publicKey))), signCount: UInt32(clamping: signCount),
            backupEligible: backupEligible)
    }

    /// The AAGUID as a UUID string, as authenticator metadata names models.
    var aaguidString: String { MetadataDate.aaguidString(Array(aaguid)) }
}

/// One issued challenge (§13.4.3): single use, short-lived, bound to the browser that asked
/// for it, with what the verification must expect.
struct PasskeyCeremony: Sendable, Equatable {
    enum Purpose: String, Sendable, Codable {
        case registration, authentication
    }

    /// What the options promised, which the response is checked against.
    struct Expectation: Codable, Sendable, Equatable {
        var userVerification: UserVerificationRequirement
        /// Registration: the algorithms offered.
        var algorithms: [Int64]?
        /// Authentication: the credential IDs allowed (base64url); empty for usernameless.
        var allowCredentials: [String]?
        /// Authentication: the sign-in of the hosted page it serves (the hash of the attempt's
        /// handle, in base64url).
        var attempt: String?
        /// Registration: the name the user gave the passkey.
        var name: String?

        enum CodingKeys: String, CodingKey {
            case algorithms, attempt, name
            case userVerification = "user_verification"
            case allowCredentials = "allow_credentials"
        }
    }

    var tenantID: String
    var purpose: Purpose
    /// The browser (a hash of its `countersign-browser` cookie) or session it belongs to.
    var binding: String
    /// The user the ceremony is for, when known beforehand.
    var userID: String?
    var challenge: Data
    var expectation: Expectation
    var createdAt: Date
    var expiresAt: Date
}

/// Reads one CBOR item for records already verified once, where a failure means damaged
/// storage rather than bad input.
enum CBORDecoding {
    static func value(_ bytes: [UInt8]) throws -> CountersignCBOR.CBORValue {
        try CountersignCBOR.CBORDecoder().decode(bytes)
    }
}
