import Foundation

/// Stricter passkey rules for the members of one group, in a tenant's `passkeys.group_rules`:
/// `{"group": "<id>", "allowed_aaguids": […], "denied_aaguids": […], "attestation_required": true,
/// "device_bound_only": true, "user_verification_required": true}`. The admin API takes the
/// group by name or id and keeps the id; a rule can only add to the tenant's rules.
public struct PasskeyGroupRule: Codable, Sendable, Equatable {
    public var group: String
    /// When not empty, only these models, and only those the tenant allows too.
    public var allowedAAGUIDs: [String] = []
    public var deniedAAGUIDs: [String] = []
    public var attestationRequired = false
    public var deviceBoundOnly = false
    public var userVerificationRequired = false

    public init(group: String) {
        self.group = group
    }

    enum CodingKeys: String, CodingKey {
        case group
        case allowedAAGUIDs = "allowed_aaguids"
        case deniedAAGUIDs = "denied_aaguids"
        case attestationRequired = "attestation_required"
        case deviceBoundOnly = "device_bound_only"
        case userVerificationRequired = "user_verification_required"
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        group = try container.decode(String.self, forKey: .group)
        allowedAAGUIDs = try container.decodeIfPresent([String].self, forKey: .allowedAAGUIDs) ?? []
        deniedAAGUIDs = try container.decodeIfPresent([String].self, forKey: .deniedAAGUIDs) ?? []
        attestationRequired = try container.decodeIfPresent(Bool.self, forKey: .attestationRequired) ?? false
        deviceBoundOnly = try container.decodeIfPresent(Bool.self, forKey: .deviceBoundOnly) ?? false
        userVerificationRequired = try container.decodeIfPresent(Bool.self, forKey: .userVerificationRequired) ?? false
    }
}

/// The passkey rules one user's registrations are held to (`PasskeySettings.rules(for:)`), and
/// what they find wrong with a passkey: at registration, where a finding refuses it, and later,
/// where the console lists the passkeys that a changed policy or a revoked model no longer allows.
struct PasskeyRules: Sendable, Equatable {
    /// The models allowed; nil: any.
    var allowed: Set<String>?
    var denied: Set<String>
    var attestationRequired: Bool
    var deviceBoundOnly: Bool
    var userVerificationRequired: Bool
    /// The groups whose rules were added.
    var groups: [String] = []

    /// What about a passkey of model `aaguid` breaks these rules or the metadata's status, in
    /// words for the user and the console; empty: none.
    func findings(
        aaguid: String, backupEligible: Bool, attestationTrusted: Bool, userVerified: Bool,
        metadata: AuthenticatorMetadataEntry?, at date: Date
    ) -> [String] {
        let model = AuthenticatorMetadataEntry.modelName(metadata, aaguid: aaguid)
        var findings: [String] = []
        if let status = metadata?.latestStatus(at: date), status.refusesRegistration {
            findings.append("the FIDO Alliance's metadata reports \(model) as \(status.status)")
        }
        if denied.contains(aaguid) {
            findings.append("its model, \(model), is denied")
        } else if let allowed, !allowed.contains(aaguid) {
            findings.append("its model, \(model), is not among the allowed models")
        }
        if deviceBoundOnly, backupEligible { findings.append("it may be synced, and only device-bound passkeys are allowed") }
        if attestationRequired, !attestationTrusted {
            findings.append("its attestation is not trusted, and trusted attestation is required")
        }
        if userVerificationRequired, !userVerified {
            findings.append("it did not verify its user, and user verification is required")
        }
        return findings
    }
}
