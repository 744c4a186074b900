import Foundation

/// The directory form as typed (or as stored), with the message beside each refused field,
/// keyed by the API's member name (`groups.filter`). The bind password is never put back into a
/// page: left empty, the stored one is kept.
struct ConsoleDirectoryForm: Sendable {
    var kind = Directory.Kind.activeDirectory.rawValue
    var servers = "", security = Directory.Security.ldaps.rawValue, caCertificate = "", bindDN = "", bindPassword = ""
    var userBaseDN = "", userFilter = "", connectTimeout = "", operationTimeout = ""
    var username = "", displayName = "", email = "", id = "", memberOf = ""
    var groupsEnabled = true, groupBaseDN = "", groupFilter = "", groupName = "", groupMember = ""
    var membership = "", nested = true
    var pageSize = "", syncInterval = "", justInTime = true
    /// The API's refusal, by the member it names; `""` for one that names none.
    var errors: [String: String] = [:]

    /// A tenant's first directory: the first kind, with its defaults filled in.
    init() {
        fill(defaultsOf: .activeDirectory)
        connectTimeout = String(Directory.defaultConnectTimeoutSeconds)
        operationTimeout = String(Directory.defaultOperationTimeoutSeconds)
        pageSize = String(Directory.defaultPageSize)
        syncInterval = "60"
    }

    /// The fields that default to the kind's, set to `kind`'s defaults.
    mutating func fill(defaultsOf kind: Directory.Kind) {
        let defaults = Directory.defaults(for: kind)
        self.kind = kind.rawValue
        userFilter = defaults.userFilter
        (username, displayName, email, id, memberOf) = (
            defaults.attributes.username, defaults.attributes.displayName, defaults.attributes.email,
            defaults.attributes.id, defaults.attributes.memberOf)
        (groupFilter, groupName, groupMember, membership) = (
            defaults.groups.filter, defaults.groups.nameAttribute, defaults.groups.memberAttribute,
            defaults.groups.membership.rawValue)
    }

    init(_ form: FormParameters) {
        func text(_ name: String) -> String { form[name] ?? "" }
        kind = text("kind")
        servers = text("servers")
        security = text("security")
        caCertificate = text("ca_certificate")
        bindDN = text("bind_dn")
        bindPassword = text("bind_password")
        userBaseDN = text("user_base_dn")
        userFilter = text("user_filter")
        connectTimeout = text("connect_timeout_seconds")
        operationTimeout = text("operation_timeout_seconds")
        (username, displayName, email, id, memberOf) = (
            text("username_attribute"), text("display_name_attribute"), text("email_attribute"), text("id_attribute"),
            text("member_of_attribute"))
        // A checkbox left clear is not sent.
        groupsEnabled = form["groups_enabled"] == "yes"
        nested = form["groups_nested"] == "yes"
        justInTime = form["just_in_time"] == "yes"
        (groupBaseDN, groupFilter, groupName, groupMember, membership) = (
            text("group_base_dn"), text("group_filter"), text("group_name_attribute"), text("group_member_attribute"),
            text("group_membership"))
        pageSize = text("page_size")
        syncInterval = text("sync_interval_minutes")
    }

    init(stored directory: [String: Any]) {
        func number(_ key: String) -> String { (directory[key] as? Int).map(String.init) ?? "" }
        kind = directory["kind"] as? String ?? ""
        servers = (directory["servers"] as? [String] ?? []).joined(separator: "\n")
        security = directory["security"] as? String ?? ""
        caCertificate = directory["ca_certificate"] as? String ?? ""
        bindDN = directory["bind_dn"] as? String ?? ""
        userBaseDN = directory["user_base_dn"] as? String ?? ""
        userFilter = directory["user_filter"] as? String ?? ""
        connectTimeout = number("connect_timeout_seconds")
        operationTimeout = number("operation_timeout_seconds")
        let attributes = directory["attributes"] as? [String: Any] ?? [:]
        (username, displayName, email, id, memberOf) = (
            attributes["username"] as? String ?? "", attributes["display_name"] as? String ?? "",
            attributes["email"] as? String ?? "", attributes["id"] as? String ?? "", attributes["member_of"] as? String ?? "")
        let groups = directory["groups"] as? [String: Any] ?? [:]
        groupsEnabled = groups["enabled"] as? Bool ?? true
        nested = groups["nested"] as? Bool ?? true
        (groupBaseDN, groupFilter, groupName, groupMember, membership) = (
            groups["base_dn"] as? String ?? "", groups["filter"] as? String ?? "", groups["name_attribute"] as? String ?? "",
            groups["member_attribute"] as? String ?? "", groups["membership"] as? String ?? "")
        pageSize = number("page_size")
        syncInterval = number("sync_interval_minutes")
        justInTime = directory["just_in_time"] as? Bool ?? true
    }

    /// The API's body. A field left empty is left out, so it takes its default (the kind's, for
    /// the filters and attributes), and an empty password keeps the stored one. A number that is
    /// not a whole number goes as the text typed, for the API to refuse beside the field.
    func json() -> [String: any Sendable] {
        func trimmed(_ text: String) -> String? {
            let value = text.trimmingCharacters(in: .whitespacesAndNewlines)
            return value.isEmpty ? nil : value
        }
        func number(_ text: String) -> (any Sendable)? {
            guard let value = trimmed(text) else { return nil }
            return Int(value).map { $0 as any Sendable } ?? value
        }
        var body: [String: any Sendable] = ["servers": ConsoleClientForm.lines(servers)]
        let texts: [(String, String)] = [
            ("kind", kind), ("security", security), ("bind_dn", bindDN), ("user_base_dn", userBaseDN), ("user_filter", userFilter),
        ]
        for case let (name, value?) in texts.map({ ($0.0, trimmed($0.1)) }) { body[name] = value }
        // A PEM block keeps its line breaks; only surrounding blank space goes.
        if let pem = trimmed(caCertificate) { body["ca_certificate"] = pem + "\n" }
        if !bindPassword.isEmpty { body["bind_password"] = bindPassword }
        let numbers: [(String, String)] = [
            ("connect_timeout_seconds", connectTimeout), ("operation_timeout_seconds", operationTimeout),
            ("page_size", pageSize), ("sync_interval_minutes", syncInterval),
        ]
        for case let (name, value?) in numbers.map({ ($0.0, number($0.1)) }) { body[name] = value }
        var attributes: [String: any Sendable] = [:]
        for case let (name, value?) in [("username", username), ("display_name", displayName), ("email", email), ("id", id),
                                        ("member_of", memberOf)].map({ ($0.0, trimmed($0.1)) }) {
            attributes[name] = value
        }
        body["attributes"] = attributes
        var groups: [String: any Sendable] = ["enabled": groupsEnabled, "nested": nested]
        for case let (name, value?) in [("base_dn", groupBaseDN), ("filter", groupFilter), ("name_attribute", groupName),
                                        ("member_attribute", groupMember), ("membership", membership)]
            .map({ ($0.0, trimmed($0.1)) }) {
            groups[name] = value
        }
        body["groups"] = groups
        body["just_in_time"] = justInTime
        return body
    }

    /// This form with the API's refusal beside the field it names, and the password cleared.
    func refused(_ answer: InProcessRouter.Answer) -> ConsoleDirectoryForm {
        var form = self
        form.bindPassword = ""
        let message = answer.errorDescription ?? "the directory could not be saved"
        // An element of a list is named by its index (`servers.[2]`): the list's field shows it.
        let field = ConsoleText.field(of: message)?.components(separatedBy: ".[").first ?? ""
        form.errors[field] = ConsoleText.sentence(message)
        return form
    }
}

/// The directory form as the template reads it: each field's value and the message beside it,
/// each select's options with the chosen one marked, and each kind's defaults for the page's
/// script (`console-directory.js`), which fills them in when the kind changes.
struct ConsoleDirectoryFields: Sendable {
    struct Option: Sendable { let value: String, label: String, selected: Bool }
    /// A text field that defaults to its kind's: its value, its defaults per kind, and its error.
    struct Field: Sendable {
        let name: String, label: String, value: String, fieldError: String?
        let activeDirectory: String, openLDAP: String
    }

    let configured: Bool
    let kinds: [Option], securities: [Option], memberships: [Option]
    let servers: String, caCertificate: String, bindDN: String, userBaseDN: String, groupBaseDN: String
    let connectTimeout: String, operationTimeout: String, pageSize: String, syncInterval: String
    let groupsEnabled: Bool, nested: Bool, justInTime: Bool
    let userFilter: Field, groupFilter: Field
    let attributes: [Field], groupAttributes: [Field]
    let membershipActiveDirectory: String, membershipOpenLDAP: String
    let kindError: String?, serversError: String?, securityError: String?, caError: String?, bindDNError: String?
    let bindPasswordError: String?, userBaseDNError: String?, timeoutError: String?, groupsError: String?
    let groupBaseDNError: String?, membershipError: String?, pageSizeError: String?, syncIntervalError: String?
    let justInTimeError: String?, error: String?

    init(_ form: ConsoleDirectoryForm, configured: Bool) {
        self.configured = configured
        let errors = form.errors
        var unplaced = errors
        func error(_ names: String...) -> String? {
            for name in names { if let message = unplaced.removeValue(forKey: name) { return message } }
            return nil
        }
        let ad = Directory.defaults(for: .activeDirectory), ldap = Directory.defaults(for: .openLDAP)
        kinds = Directory.Kind.allCases.map { kind in
            Option(value: kind.rawValue, label: kind == .activeDirectory ? "Active Directory" : "OpenLDAP",
                   selected: kind.rawValue == form.kind)
        }
        securities = Directory.Security.allCases.map { security in
            let label = switch security {
            case .ldaps: "ldaps: TLS from the start (ldaps://, port 636)"
            case .starttls: "starttls: upgraded with StartTLS (ldap://, port 389)"
            case .plain: "plain: no TLS (servers on this host only)"
            }
            return Option(value: security.rawValue, label: label, selected: security.rawValue == form.security)
        }
        memberships = Directory.Membership.allCases.map { membership in
            let label = membership == .memberOf ? "on each user (memberOf)" : "on each group (member)"
            return Option(value: membership.rawValue, label: label, selected: membership.rawValue == form.membership)
        }
        (membershipActiveDirectory, membershipOpenLDAP) = (ad.groups.membership.rawValue, ldap.groups.membership.rawValue)
        (servers, caCertificate, bindDN, userBaseDN, groupBaseDN) = (
            form.servers, form.caCertificate, form.bindDN, form.userBaseDN, form.groupBaseDN)
        (connectTimeout, operationTimeout, pageSize, syncInterval) = (
            form.connectTimeout, form.operationTimeout, form.pageSize, form.syncInterval)
        (groupsEnabled, nested, justInTime) = (form.groupsEnabled, form.nested, form.justInTime)
        func field(_ name: String, _ label: String, _ value: String, api: String, _ adValue: String, _ ldapValue: String) -> Field {
            Field(name: name, label: label, value: value, fieldError: error(api), activeDirectory: adValue, openLDAP: ldapValue)
        }
        userFilter = field("user_filter", "User filter", form.userFilter, api: "user_filter", ad.userFilter, ldap.userFilter)
        attributes = [
            field("username_attribute", "Username", form.username, api: "attributes.username",
                  ad.attributes.username, ldap.attributes.username),
            field("display_name_attribute", "Display name", form.displayName, api: "attributes.display_name",
                  ad.attributes.displayName, ldap.attributes.displayName),
            field("email_attribute", "E-mail address", form.email, api: "attributes.email", ad.attributes.email, ldap.attributes.email),
            field("id_attribute", "Stable id (kept by a rename)", form.id, api: "attributes.id", ad.attributes.id, ldap.attributes.id),
            field("member_of_attribute", "Groups on the user", form.memberOf, api: "attributes.member_of",
                  ad.attributes.memberOf, ldap.attributes.memberOf),
        ]
        groupFilter = field("group_filter", "Group filter", form.groupFilter, api: "groups.filter", ad.groups.filter, ldap.groups.filter)
        groupAttributes = [
            field("group_name_attribute", "Group name", form.groupName, api: "groups.name_attribute",
                  ad.groups.nameAttribute, ldap.groups.nameAttribute),
            field("group_member_attribute", "Group members", form.groupMember, api: "groups.member_attribute",
                  ad.groups.memberAttribute, ldap.groups.memberAttribute),
        ]
        kindError = error("kind")
        serversError = error("servers")
        securityError = error("security")
        caError = error("ca_certificate")
        bindDNError = error("bind_dn")
        bindPasswordError = error("bind_password")
        userBaseDNError = error("user_base_dn")
        timeoutError = error("connect_timeout_seconds", "operation_timeout_seconds")
        groupsError = error("groups", "groups.enabled", "groups.nested")
        groupBaseDNError = error("groups.base_dn")
        membershipError = error("groups.membership")
        pageSizeError = error("page_size")
        syncIntervalError = error("sync_interval_minutes")
        justInTimeError = error("just_in_time")
        self.error = unplaced.values.sorted().first
    }
}
