import CountersignWebAuthn
import Foundation
import X509

/// A tenant's passkey rules, kept in its policy under `passkeys`. Every member has a default,
/// so a tenant that sets nothing gets passkeys for the server's own origin, user verification
/// preferred, no attestation asked for, and cloned credentials refused.
public struct PasskeySettings: Codable, Sendable, Equatable {
    /// Whether users may register and sign in with passkeys.
    public var enabled = true
    /// The RP ID; nil: the host of the server's public URL.
    public var rpID: String?
    /// The name authenticators show; nil: the tenant's display name.
    public var rpName: String?
    /// Origins besides the server's own that ceremonies may run at: other web origins whose
    /// host is the RP ID or below it, and Android app origins (`android:apk-key-hash:…`).
    public var origins: [String] = []
    /// Top-level origins under which a ceremony may run in a cross-origin iframe.
    public var topOrigins: [String] = []
    var userVerificationRequirement: UserVerificationRequirement = .preferred
    var attestationConveyance: AttestationConveyance = .none
    /// Whether authenticators without trusted attestation (`none`, self, or a certificate
    /// path to no configured root) may register.
    public var allowUnattested = true
    var signCountRegressionAction: SignCountRegressionAction = .reject
    /// PEM certificates that attestation certificate paths may end at.
    public var attestationRoots: [String] = []
    /// The authenticator models (AAGUIDs) that may register a passkey; empty: any model.
    public var allowedAAGUIDs: [String] = []
    /// The authenticator models that may not.
    public var deniedAAGUIDs: [String] = []
    /// Whether only device-bound passkeys may register: a passkey that may be synced
    /// (backup-eligible, as password managers and phone platforms make them) is refused.
    public var deviceBoundOnly = false
    /// Stricter rules for the members of some groups (`PasskeyGroupRule`).
    public var groupRules: [PasskeyGroupRule] = []
    /// The most groups `group_rules` names, and the most AAGUIDs one list holds.
    static let maximumGroupRules = 50
    static let maximumAAGUIDs = 500

    public init() {}

    public var userVerification: String { userVerificationRequirement.rawValue }
    public var attestation: String { attestationConveyance.rawValue }
    public var signCountRegression: String { signCountRegressionAction.rawValue }

    enum CodingKeys: String, CodingKey {
        case enabled, origins
        case rpID = "rp_id"
        case rpName = "rp_name"
        case topOrigins = "top_origins"
        case userVerificationRequirement = "user_verification"
        case attestationConveyance = "attestation"
        case allowUnattested = "allow_unattested"
        case signCountRegressionAction = "sign_count_regression"
        case attestationRoots = "attestation_roots"
        case allowedAAGUIDs = "allowed_aaguids"
        case deniedAAGUIDs = "denied_aaguids"
        case deviceBoundOnly = "device_bound_only"
        case groupRules = "group_rules"
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        enabled = try container.decodeIfPresent(Bool.self, forKey: .enabled) ?? true
        rpID = try container.decodeIfPresent(String.self, forKey: .rpID)
        rpName = try container.decodeIfPresent(String.self, forKey: .rpName)
        origins = try container.decodeIfPresent([String].self, forKey: .origins) ?? []
        topOrigins = try container.decodeIfPresent([String].self, forKey: .topOrigins) ?? []
        userVerificationRequirement = try container.decodeIfPresent(UserVerificationRequirement.self, forKey: .userVerificationRequirement)
            ?? .preferred
        attestationConveyance = try container.decodeIfPresent(AttestationConveyance.self, forKey: .attestationConveyance) ?? .none
        allowUnattested = try container.decodeIfPresent(Bool.self, forKey: .allowUnattested) ?? true
        signCountRegressionAction = try container.decodeIfPresent(SignCountRegressionAction.self, forKey: .signCountRegressionAction)
            ?? .reject
        attestationRoots = try container.decodeIfPresent([String].self, forKey: .attestationRoots) ?? []
        allowedAAGUIDs = try container.decodeIfPresent([String].self, forKey: .allowedAAGUIDs) ?? []
        deniedAAGUIDs = try container.decodeIfPresent([String].self, forKey: .deniedAAGUIDs) ?? []
        deviceBoundOnly = try container.decodeIfPresent(Bool.self, forKey: .deviceBoundOnly) ?? false
        groupRules = try container.decodeIfPresent([PasskeyGroupRule].self, forKey: .groupRules) ?? []
    }

    /// Throws the first member that cannot work, naming it. Without an RP ID of the tenant's
    /// own, origins are checked against the one the server at `publicOrigin` uses. An RP ID of
    /// its own must be one browsers accept there (`RelyingPartyIDScope`), by the `suffixes` of
    /// the system's Public Suffix List.
    /// With `metadata`, the server loads FIDO metadata, whose roots attestation may end at
    /// without roots of the tenant's own.
    func validated(
        publicOrigin: String, metadata: Bool = false,
        suffixes: @autoclosure () -> PublicSuffixList? = PublicSuffixList.system
    ) throws(AdminError) -> PasskeySettings {
        let effectiveRPID = rpID ?? Self.ownRPID(publicOrigin)
        if let rpID {
            guard Self.isHostName(rpID) else {
                throw .invalidField("passkeys.rp_id", "must be a lower-case domain name without scheme, port or path")
            }
            do {
                try RelyingPartyIDScope.check(rpID, host: Self.ownRPID(publicOrigin), suffixes: suffixes())
            } catch {
                throw .invalidField("passkeys.rp_id", error.message)
            }
        }
        if let rpName, rpName.isEmpty || rpName.count > 100 {
            throw .invalidField("passkeys.rp_name", "must be 1 to 100 characters")
        }
        for origin in origins {
            guard Self.isAppOrigin(origin) || Self.webOriginHost(origin) != nil else {
                throw .invalidField("passkeys.origins", "\(origin) is neither an https origin nor android:apk-key-hash:<base64url>")
            }
            if let host = Self.webOriginHost(origin), !Self.host(host, isWithin: effectiveRPID) {
                throw .invalidField("passkeys.origins", "the host of \(origin) is not \(effectiveRPID) or below it")
            }
        }
        for origin in topOrigins where Self.webOriginHost(origin) == nil {
            throw .invalidField("passkeys.top_origins", "\(origin) is not an https origin")
        }
        if !allowUnattested, attestationConveyance == .none {
            throw .invalidField("passkeys.allow_unattested", "cannot be false while attestation is \"none\"")
        }
        if !allowUnattested, attestationRoots.isEmpty, !metadata {
            throw .invalidField(
                "passkeys.attestation_roots",
                "must name at least one root when unattested authenticators are refused, unless the server loads FIDO metadata")
        }
        for (index, pem) in attestationRoots.enumerated() where (try? Certificate(pemEncoded: pem)) == nil {
            throw .invalidField("passkeys.attestation_roots", "entry \(index) is not a PEM certificate")
        }
        var settings = self
        settings.allowedAAGUIDs = try Self.aaguids(allowedAAGUIDs, field: "passkeys.allowed_aaguids")
        settings.deniedAAGUIDs = try Self.aaguids(deniedAAGUIDs, field: "passkeys.denied_aaguids")
        guard groupRules.count <= Self.maximumGroupRules else {
            throw .invalidField("passkeys.group_rules", "name at most \(Self.maximumGroupRules) groups")
        }
        settings.groupRules = try groupRules.map { rule throws(AdminError) in
            var rule = rule
            rule.allowedAAGUIDs = try Self.aaguids(rule.allowedAAGUIDs, field: "passkeys.group_rules.allowed_aaguids")
            rule.deniedAAGUIDs = try Self.aaguids(rule.deniedAAGUIDs, field: "passkeys.group_rules.denied_aaguids")
            if rule.attestationRequired, attestationConveyance == .none, attestationRoots.isEmpty, !metadata {
                throw .invalidField(
                    "passkeys.group_rules", "the rule of \(rule.group) requires attestation, which needs attestation_roots or FIDO metadata")
            }
            return rule
        }
        return settings
    }

    /// `list` as lower-case UUIDs, each once, or the field's error.
    static func aaguids(_ list: [String], field: String) throws(AdminError) -> [String] {
        guard list.count <= maximumAAGUIDs else { throw .invalidField(field, "name at most \(maximumAAGUIDs) AAGUIDs") }
        var seen: [String] = []
        for text in list {
            guard let aaguid = MetadataDate.normalizedAAGUID(text) else {
                throw .invalidField(field, "\"\(text)\" is not an AAGUID (a UUID such as cb69481e-8ff7-4039-93ec-0a2729a154a8)")
            }
            if !seen.contains(aaguid) { seen.append(aaguid) }
        }
        return seen
    }

    /// The rules a registration of a member of `groupIDs` is held to: the tenant's, made
    /// stricter by each rule of those groups.
    func rules(for groupIDs: Set<String>) -> PasskeyRules {
        var rules = PasskeyRules(
            allowed: allowedAAGUIDs.isEmpty ? nil : Set(allowedAAGUIDs), denied: Set(deniedAAGUIDs),
            attestationRequired: !allowUnattested, deviceBoundOnly: deviceBoundOnly,
            userVerificationRequired: userVerificationRequirement == .required)
        for rule in groupRules where groupIDs.contains(rule.group) {
            if !rule.allowedAAGUIDs.isEmpty {
                rules.allowed = rules.allowed.map { $0.intersection(rule.allowedAAGUIDs) } ?? Set(rule.allowedAAGUIDs)
            }
            rules.denied.formUnion(rule.deniedAAGUIDs)
            rules.attestationRequired = rules.attestationRequired || rule.attestationRequired
            rules.deviceBoundOnly = rules.deviceBoundOnly || rule.deviceBoundOnly
            rules.userVerificationRequired = rules.userVerificationRequired || rule.userVerificationRequired
            rules.groups.append(rule.group)
        }
        return rules
    }

    /// The relying party of `tenant` served at `publicOrigin` (`https://host[:port]`). A server
    /// reached at a loopback address is a passkey relying party as `localhost`: browsers refuse
    /// an IP address as RP ID, and treat `http://localhost` as a secure context.
    func relyingParty(tenantName: String, publicOrigin: String) -> RelyingParty {
        var allowed = Set(origins)
        allowed.insert(publicOrigin)
        if Self.isLoopback(Self.serverHost(publicOrigin)), var local = URLComponents(string: publicOrigin) {
            local.host = "localhost"
            if let origin = local.string { allowed.insert(origin) }
        }
        return RelyingParty(
            id: rpID ?? Self.ownRPID(publicOrigin), name: rpName ?? tenantName, origins: allowed, topOrigins: Set(topOrigins),
            userVerification: userVerificationRequirement, attestation: attestationConveyance,
            allowUnattested: allowUnattested, signCountRegression: signCountRegressionAction,
            attestationRoots: attestationRoots.compactMap { try? Certificate(pemEncoded: $0) })
    }

    /// The RP ID a tenant without one of its own uses: the server's host, `localhost` for a
    /// loopback address.
    static func ownRPID(_ publicOrigin: String) -> String {
        let host = serverHost(publicOrigin)
        return isLoopback(host) ? "localhost" : host
    }

    static func serverHost(_ publicOrigin: String) -> String {
        webOriginHost(publicOrigin) ?? URL(string: publicOrigin)?.host ?? "localhost"
    }

    static func isLoopback(_ host: String) -> Bool {
        ["127.0.0.1", "[::1]", "::1"].contains(host)
    }

    static func isHostName(_ value: String) -> Bool {
        let labels = value.split(separator: ".", omittingEmptySubsequences: false)
        return !value.isEmpty && value.count <= 253 && labels.allSatisfy { label in
            !label.isEmpty && label.count <= 63 && !label.hasPrefix("-") && !label.hasSuffix("-")
                && label.allSatisfy { $0.isASCII && ($0.isLowercase || $0.isNumber || $0 == "-") }
        }
    }

    /// The host of an `https://host[:port]` origin (or `http://localhost` / loopback, where
    /// browsers treat plain http as secure), without path, query or user; in lower-case ASCII,
    /// an internationalized name in IDNA A-labels, as browsers compare it with an RP ID.
    static func webOriginHost(_ origin: String) -> String? {
        guard let components = URLComponents(string: origin), let host = components.encodedHost?.lowercased(), !host.isEmpty,
              components.path.isEmpty, components.query == nil, components.fragment == nil, components.user == nil
        else { return nil }
        switch components.scheme {
        case "https": return host
        case "http" where host == "localhost" || host == "127.0.0.1" || host == "[::1]" || host == "::1": return host
        default: return nil
        }
    }

    static func isAppOrigin(_ origin: String) -> Bool {
        let prefix = "android:apk-key-hash:"
        guard origin.hasPrefix(prefix) else { return false }
        return Base64URLBytes(base64URL: String(origin.dropFirst(prefix.count)))?.bytes.count == 32
    }

    static func host(_ host: String, isWithin rpID: String) -> Bool {
        host == rpID || host.hasSuffix("." + rpID)
    }
}
