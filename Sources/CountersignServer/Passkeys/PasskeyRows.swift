import Foundation

/// A `passkeys` row.
struct PasskeyRow: Decodable {
    static let columns = CodingKeys.allCases.map(\.rawValue).joined(separator: ", ")

    var id: String
    var tenantID: String
    var userID: String
    var credentialID: Data
    var publicKey: Data
    var algorithm: Int64
    var signCount: Int64
    var uvInitialized: Bool
    var backupEligible: Bool
    var backupState: Bool
    var transports: String
    var aaguid: Data
    var attestationFormat: String
    var attestationKind: String
    var attestationTrusted: Bool
    var attestationObject: Data
    var clientDataJSON: Data
    var name: String
    var createdAt: Date
    var lastUsedAt: Date?
    var cloneWarningAt: Date?

    enum CodingKeys: String, CodingKey, CaseIterable {
        case id, algorithm, transports, aaguid, name
        case tenantID = "tenant_id"
        case userID = "user_id"
        case credentialID = "credential_id"
        case publicKey = "public_key"
        case signCount = "sign_count"
        case uvInitialized = "uv_initialized"
        case backupEligible = "backup_eligible"
        case backupState = "backup_state"
        case attestationFormat = "attestation_format"
        case attestationKind = "attestation_kind"
        case attestationTrusted = "attestation_trusted"
        case attestationObject = "attestation_object"
        case clientDataJSON = "client_data_json"
        case createdAt = "created_at"
        case lastUsedAt = "last_used_at"
        case cloneWarningAt = "clone_warning_at"
    }

    func passkey() -> Passkey {
        Passkey(
            id: id, tenantID: tenantID, userID: userID, credentialID: credentialID, publicKey: publicKey, algorithm: algorithm,
            signCount: signCount, uvInitialized: uvInitialized, backupEligible: backupEligible, backupState: backupState,
            transports: transports.split(separator: " ").map(String.init), aaguid: aaguid,
            attestationFormat: attestationFormat, attestationKind: attestationKind, attestationTrusted: attestationTrusted,
            attestationObject: attestationObject, clientDataJSON: clientDataJSON, name: name, createdAt: createdAt,
            lastUsedAt: lastUsedAt, cloneWarningAt: cloneWarningAt)
    }
}

/// A `passkey_ceremonies` row.
struct PasskeyCeremonyRow: Decodable {
    static let columns = CodingKeys.allCases.map(\.rawValue).joined(separator: ", ")

    var tenantID: String
    var purpose: String
    var binding: String
    var userID: String?
    var challenge: Data
    var expectation: String
    var createdAt: Date
    var expiresAt: Date

    enum CodingKeys: String, CodingKey, CaseIterable {
        case purpose, binding, challenge, expectation
        case tenantID = "tenant_id"
        case userID = "user_id"
        case createdAt = "created_at"
        case expiresAt = "expires_at"
    }

    func ceremony() throws -> PasskeyCeremony {
        guard let purpose = PasskeyCeremony.Purpose(rawValue: purpose) else {
            throw StorageError.corrupt("passkey_ceremonies.purpose")
        }
        return PasskeyCeremony(
            tenantID: tenantID, purpose: purpose, binding: binding, userID: userID, challenge: challenge,
            expectation: try JSONDecoder().decode(PasskeyCeremony.Expectation.self, from: Data(expectation.utf8)),
            createdAt: createdAt, expiresAt: expiresAt)
    }
}
