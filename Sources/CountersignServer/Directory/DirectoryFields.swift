import CountersignCore
import CountersignLDAP
import Foundation
import X509

/// The body of `PUT …/directory`: the whole directory, each member absent taking its default
/// (the kind's, for the filter, the attributes and the groups). `bind_password` is required
/// when the tenant has no directory yet and kept when absent otherwise. An explicit `null` is
/// refused rather than read as absent.
struct DirectoryFields: Decodable, Sendable {
    struct AttributeFields: Decodable, Sendable {
        var username: String?
        var displayName: String?
        var email: String?
        var id: String?
        var memberOf: String?

        enum CodingKeys: String, CodingKey, CaseIterable {
            case username, email, id
            case displayName = "display_name"
            case memberOf = "member_of"
        }

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            try DirectoryFields.refuseNulls(container)
            username = try container.decodeIfPresent(String.self, forKey: .username)
            displayName = try container.decodeIfPresent(String.self, forKey: .displayName)
            email = try container.decodeIfPresent(String.self, forKey: .email)
            id = try container.decodeIfPresent(String.self, forKey: .id)
            memberOf = try container.decodeIfPresent(String.self, forKey: .memberOf)
        }
    }

    struct GroupFields: Decodable, Sendable {
        var enabled: Bool?
        var baseDN: String?
        var filter: String?
        var nameAttribute: String?
        var memberAttribute: String?
        var membership: String?
        var nested: Bool?

        enum CodingKeys: String, CodingKey, CaseIterable {
            case enabled, filter, membership, nested
            case baseDN = "base_dn"
            case nameAttribute = "name_attribute"
            case memberAttribute = "member_attribute"
        }

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            try DirectoryFields.refuseNulls(container)
            enabled = try container.decodeIfPresent(Bool.self, forKey: .enabled)
            baseDN = try container.decodeIfPresent(String.self, forKey: .baseDN)
            filter = try container.decodeIfPresent(String.self, forKey: .filter)
            nameAttribute = try container.decodeIfPresent(String.self, forKey: .nameAttribute)
            memberAttribute = try container.decodeIfPresent(String.self, forKey: .memberAttribute)
            membership = try container.decodeIfPresent(String.self, forKey: .membership)
            nested = try container.decodeIfPresent(Bool.self, forKey: .nested)
        }
    }

    var kind: String?
    var servers: [String]?
    var security: String?
    var caCertificate: String?
    var bindDN: String?
    var bindPassword: String?
    var connectTimeoutSeconds: Int?
    var operationTimeoutSeconds: Int?
    var userBaseDN: String?
    var userFilter: String?
    var attributes: AttributeFields?
    var groups: GroupFields?
    var pageSize: Int?
    var syncIntervalMinutes: Int?
    var justInTime: Bool?

    enum CodingKeys: String, CodingKey, CaseIterable {
        case kind, servers, security, attributes, groups
        case caCertificate = "ca_certificate"
        case bindDN = "bind_dn"
        case bindPassword = "bind_password"
        case connectTimeoutSeconds = "connect_timeout_seconds"
        case operationTimeoutSeconds = "operation_timeout_seconds"
        case userBaseDN = "user_base_dn"
        case userFilter = "user_filter"
        case pageSize = "page_size"
        case syncIntervalMinutes = "sync_interval_minutes"
        case justInTime = "just_in_time"
    }

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        try Self.refuseNulls(container)
        kind = try container.decodeIfPresent(String.self, forKey: .kind)
        servers = try container.decodeIfPresent([String].self, forKey: .servers)
        security = try container.decodeIfPresent(String.self, forKey: .security)
        caCertificate = try container.decodeIfPresent(String.self, forKey: .caCertificate)
        bindDN = try container.decodeIfPresent(String.self, forKey: .bindDN)
        bindPassword = try container.decodeIfPresent(String.self, forKey: .bindPassword)
        connectTimeoutSeconds = try container.decodeIfPresent(Int.self, forKey: .connectTimeoutSeconds)
        operationTimeoutSeconds = try container.decodeIfPresent(Int.self, forKey: .operationTimeoutSeconds)
        userBaseDN = try container.decodeIfPresent(String.self, forKey: .userBaseDN)
        userFilter = try container.decodeIfPresent(String.self, forKey: .userFilter)
        attributes = try container.decodeIfPresent(AttributeFields.self, forKey: .attributes)
        groups = try container.decodeIfPresent(GroupFields.self, forKey: .groups)
        pageSize = try container.decodeIfPresent(Int.self, forKey: .pageSize)
        syncIntervalMinutes = try container.decodeIfPresent(Int.self, forKey: .syncIntervalMinutes)
        justInTime = try container.decodeIfPresent(Bool.self, forKey: .justInTime)
    }

    fileprivate static func refuseNulls<Key: CodingKey & CaseIterable>(_ container: KeyedDecodingContainer<Key>) throws {
        for key in Key.allCases where container.contains(key) {
            guard try container.decodeNil(forKey: key) else { continue }
            throw DecodingError.valueNotFound(
                String.self, .init(codingPath: container.codingPath + [key], debugDescription: "null"))
        }
    }

    /// The most servers a directory lists: they are tried in order, each up to the connect timeout.
    static let maximumServers = 8

    /// The directory these fields describe for `tenantID`, checked, at `date` (created then
    /// unless `existing` says otherwise), and the service account's password when one was given.
    /// Each refusal is `AdminError.invalidField` naming the member (`groups.filter`) and why.
    func directory(tenantID: String, existing: Directory?, at date: Date) throws(AdminError) -> (Directory, password: String?) {
        guard let kindName = kind else { throw .missingField("kind") }
        let kind: Directory.Kind = try Self.choice(kindName, "kind")
        let defaults = Directory.defaults(for: kind)
        guard let servers, !servers.isEmpty else { throw .missingField("servers") }
        guard servers.count <= Self.maximumServers else {
            throw .invalidField("servers", "at most \(Self.maximumServers) servers")
        }
        let security: Directory.Security = try security.map { raw throws(AdminError) in try Self.choice(raw, "security") } ?? .ldaps
        guard let bindDN else { throw .missingField("bind_dn") }
        guard let userBaseDN else { throw .missingField("user_base_dn") }
        if existing == nil, bindPassword == nil { throw .missingField("bind_password") }
        if let bindPassword, bindPassword.isEmpty || bindPassword.utf8.count > 1_024 {
            throw .invalidField("bind_password", "must be 1 to 1024 bytes (an empty password would bind anonymously)")
        }
        let attributes = self.attributes
        let groupFields = self.groups
        var directory = Directory(
            tenantID: tenantID, kind: kind, servers: servers, security: security,
            caCertificate: try Self.certificates(caCertificate), bindDN: try Self.dn(bindDN, "bind_dn"),
            connectTimeoutSeconds: try Self.number(connectTimeoutSeconds, "connect_timeout_seconds", 1...60)
                ?? Directory.defaultConnectTimeoutSeconds,
            operationTimeoutSeconds: try Self.number(operationTimeoutSeconds, "operation_timeout_seconds", 1...600)
                ?? Directory.defaultOperationTimeoutSeconds,
            userBaseDN: try Self.dn(userBaseDN, "user_base_dn"),
            userFilter: try userFilter.map { raw throws(AdminError) in try Self.filter(raw, "user_filter") } ?? defaults.userFilter,
            attributes: Directory.Attributes(
                username: try Self.attribute(attributes?.username, "attributes.username") ?? defaults.attributes.username,
                displayName: try Self.attribute(attributes?.displayName, "attributes.display_name")
                    ?? defaults.attributes.displayName,
                email: try Self.attribute(attributes?.email, "attributes.email") ?? defaults.attributes.email,
                id: try Self.attribute(attributes?.id, "attributes.id") ?? defaults.attributes.id,
                memberOf: try Self.attribute(attributes?.memberOf, "attributes.member_of") ?? defaults.attributes.memberOf),
            groups: Directory.Groups(
                enabled: groupFields?.enabled ?? defaults.groups.enabled,
                baseDN: try groupFields?.baseDN.map { raw throws(AdminError) in try Self.dn(raw, "groups.base_dn") },
                filter: try groupFields?.filter.map { raw throws(AdminError) in try Self.filter(raw, "groups.filter") }
                    ?? defaults.groups.filter,
                nameAttribute: try Self.attribute(groupFields?.nameAttribute, "groups.name_attribute")
                    ?? defaults.groups.nameAttribute,
                memberAttribute: try Self.attribute(groupFields?.memberAttribute, "groups.member_attribute")
                    ?? defaults.groups.memberAttribute,
                membership: try groupFields?.membership.map { raw throws(AdminError) in try Self.choice(raw, "groups.membership") }
                    ?? defaults.groups.membership,
                nested: groupFields?.nested ?? defaults.groups.nested),
            pageSize: try Self.number(pageSize, "page_size", 1...1_000) ?? Directory.defaultPageSize,
            syncIntervalMinutes: try Self.number(syncIntervalMinutes, "sync_interval_minutes", 0...10_080) ?? 60,
            justInTime: justInTime ?? true, createdAt: existing?.createdAt ?? date, updatedAt: date)
        if (1..<5).contains(directory.syncIntervalMinutes) {
            throw .invalidField("sync_interval_minutes", "must be 0 (on demand only) or from 5 to 10080")
        }
        do {
            _ = try directory.ldapConfiguration(password: bindPassword ?? "unchanged")
        } catch {
            throw .invalidField("servers", "\(error)")
        }
        if security == .plain {
            for server in servers {
                guard let address = try? LDAPServerAddress(parsing: server), Self.isLoopback(address.host) else {
                    throw .invalidField("security", "plain sends passwords unencrypted, so it is allowed only when every server is on this host's loopback interface (127.0.0.1, ::1, localhost); use ldaps or starttls")
                }
            }
        }
        if directory.caCertificate != nil, security == .plain {
            throw .invalidField("ca_certificate", "is used for ldaps and starttls only")
        }
        // The stored password goes only where it was given for: whoever may change the settings
        // must not be able to send it to a server of their own by changing the servers alone.
        if let existing, bindPassword == nil,
           existing.servers != directory.servers || existing.security != directory.security
            || existing.bindDN != directory.bindDN
            || Self.comparable(existing.caCertificate) != Self.comparable(directory.caCertificate) {
            throw .invalidField("bind_password", "is required again when servers, security, ca_certificate or bind_dn change: the stored password is sent only to the servers it was given for")
        }
        directory.tenantID = tenantID
        return (directory, bindPassword)
    }

    /// PEM text as compared: a browser sends a textarea's lines with CRLF, and a file ends in a
    /// newline, and neither is a different CA.
    private static func comparable(_ pem: String?) -> String? {
        pem.map { $0.replacingOccurrences(of: "\r\n", with: "\n").trimmingCharacters(in: .whitespacesAndNewlines) }
    }

    static func isLoopback(_ host: String) -> Bool {
        let bare = host.trimmingCharacters(in: CharacterSet(charactersIn: "[]"))
        if bare == "localhost" || bare == "::1" { return true }
        let parts = bare.split(separator: ".", omittingEmptySubsequences: false)
        return parts.count == 4 && parts[0] == "127" && parts.allSatisfy { UInt8($0) != nil }
    }

    private static func choice<Choice: RawRepresentable<String> & CaseIterable>(
        _ raw: String, _ field: String
    ) throws(AdminError) -> Choice {
        guard let choice = Choice(rawValue: raw) else {
            throw .invalidField(field, "must be one of \(Choice.allCases.map(\.rawValue).joined(separator: ", "))")
        }
        return choice
    }

    private static func number(_ value: Int?, _ field: String, _ range: ClosedRange<Int>) throws(AdminError) -> Int? {
        guard let value else { return nil }
        guard range.contains(value) else {
            throw .invalidField(field, "must be from \(range.lowerBound) to \(range.upperBound)")
        }
        return value
    }

    /// A DN: readable as RFC 4514 says, not empty, at most 1024 bytes.
    private static func dn(_ raw: String, _ field: String) throws(AdminError) -> String {
        guard !raw.isEmpty, raw.utf8.count <= 1_024, !raw.unicodeScalars.contains(where: { $0.value < 0x20 }) else {
            throw .invalidField(field, "must be a distinguished name such as ou=People,dc=example,dc=com (at most 1024 bytes)")
        }
        do {
            guard try !DistinguishedName(parsing: raw).rdns.isEmpty else {
                throw AdminError.invalidField(field, "must not be empty")
            }
        } catch let error as DistinguishedNameError {
            throw .invalidField(field, "is not a distinguished name (RFC 4514): \(error)")
        } catch {
            throw .invalidField(field, "is not a distinguished name")
        }
        return raw
    }

    /// A search filter: in parentheses, the parentheses balanced outside escapes, at most 2048
    /// bytes. The directory checks the rest and its refusal names the filter.
    private static func filter(_ raw: String, _ field: String) throws(AdminError) -> String {
        var depth = 0
        var balanced = raw.hasPrefix("(") && raw.hasSuffix(")") && raw.utf8.count <= 2_048
        for scalar in raw.unicodeScalars where balanced {
            if scalar.value < 0x20 { balanced = false }
            if scalar == "(" { depth += 1 }
            if scalar == ")" {
                depth -= 1
                if depth < 0 { balanced = false }
            }
        }
        guard balanced, depth == 0 else {
            throw .invalidField(field, "must be an LDAP filter in parentheses, such as (objectClass=inetOrgPerson) (RFC 4515, at most 2048 bytes)")
        }
        return raw
    }

    /// An attribute description: a name (letter, then letters, digits and hyphens) or an OID.
    private static func attribute(_ raw: String?, _ field: String) throws(AdminError) -> String? {
        guard let raw else { return nil }
        // A descriptor starts with a letter, a numeric OID with a digit (RFC 4512 §1.4).
        let allowed = raw.utf8.allSatisfy { byte in
            (0x30...0x39).contains(byte) || (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte) || byte == 0x2D
                || byte == 0x2E
        }
        let name = allowed && raw.first.map { $0.isLetter || $0.isNumber } == true
        guard name, (1...128).contains(raw.utf8.count) else {
            throw .invalidField(field, "must be an attribute name such as uid or sAMAccountName")
        }
        return raw
    }

    /// PEM certificates, each readable.
    static func certificates(_ raw: String?) throws(AdminError) -> String? {
        guard let raw else { return nil }
        let blocks = raw.components(separatedBy: "-----END CERTIFICATE-----").dropLast()
        guard !blocks.isEmpty, raw.utf8.count <= 65_536 else {
            throw .invalidField("ca_certificate", "must be one or more PEM certificates (-----BEGIN CERTIFICATE-----)")
        }
        for block in blocks {
            do {
                _ = try Certificate(pemEncoded: block + "-----END CERTIFICATE-----")
            } catch {
                throw .invalidField("ca_certificate", "holds a certificate that cannot be read: \(error)")
            }
        }
        return raw
    }
}
