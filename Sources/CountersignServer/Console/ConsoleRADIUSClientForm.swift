import Foundation

/// The RADIUS client form as typed (or as stored, to edit), with the message beside each
/// refused field. The shared secret is never put back into a page: a refused form asks for it
/// again.
struct ConsoleRADIUSClientForm: Sendable {
    /// One group's reply attributes as a form's lines give them, grouped by group.
    struct GroupReply: Sendable, Equatable {
        let group: String
        var attributes: [Attribute]
    }
    struct Attribute: Sendable, Equatable {
        let name: String, value: String
    }

    var name = "", networks = "", mode = RADIUSClient.Mode.push.rawValue, waitSeconds = String(RADIUSClient.defaultWaitSeconds)
    var stripRealm = false, stripDomain = false
    var unenrolledUsers = RADIUSClient.UnenrolledUsers.reject.rawValue, replyAttributes = "", secret = ""
    var directoryPassword = false
    /// Group ids.
    var allowedGroups: [String] = []
    /// `GROUP: Name=Value` lines.
    var groupReplies = ""
    var nameError: String?, networksError: String?, modeError: String?, waitError: String?, stripError: String?
    var unenrolledError: String?, replyError: String?, secretError: String?, error: String?
    var directoryPasswordError: String?, allowedGroupsError: String?, groupRepliesError: String?

    static let empty = ConsoleRADIUSClientForm()

    init() {}

    init(_ form: FormParameters) {
        name = form["name"] ?? ""
        networks = form["networks"] ?? ""
        mode = form["mode"] ?? RADIUSClient.Mode.push.rawValue
        waitSeconds = form["wait_seconds"] ?? ""
        // A checkbox left clear is not sent.
        stripRealm = form["strip_realm"] == "yes"
        stripDomain = form["strip_domain"] == "yes"
        unenrolledUsers = form["unenrolled_users"] ?? RADIUSClient.UnenrolledUsers.reject.rawValue
        replyAttributes = form["reply_attributes"] ?? ""
        secret = form["secret"] ?? ""
        directoryPassword = form["directory_password"] == "yes"
        allowedGroups = ConsoleGroupNames.chosen(in: form)
        groupReplies = form["group_reply_attributes"] ?? ""
    }

    /// The client as the API answers it, its groups named by `groups`.
    init(_ client: [String: Any], groups: ConsoleGroupNames) {
        name = client["name"] as? String ?? ""
        networks = (client["networks"] as? [String] ?? []).joined(separator: "\n")
        mode = client["mode"] as? String ?? RADIUSClient.Mode.push.rawValue
        waitSeconds = (client["wait_seconds"] as? Int).map(String.init) ?? ""
        stripRealm = client["strip_realm"] as? Bool ?? false
        stripDomain = client["strip_domain"] as? Bool ?? false
        unenrolledUsers = client["unenrolled_users"] as? String ?? RADIUSClient.UnenrolledUsers.reject.rawValue
        replyAttributes = Self.attributes(client["reply_attributes"]).map { "\($0.name)=\($0.value)" }.joined(separator: "\n")
        directoryPassword = client["directory_password"] as? Bool ?? false
        allowedGroups = client["allowed_groups"] as? [String] ?? []
        groupReplies = (client["group_reply_attributes"] as? [[String: Any]] ?? []).flatMap { reply in
            let group = groups.reference(to: reply["group"] as? String ?? "")
            return Self.attributes(reply["attributes"]).map { ConsoleGroupLine(group: group, rest: "\($0.name)=\($0.value)").text }
        }.joined(separator: "\n")
    }

    static func attributes(_ json: Any?) -> [Attribute] {
        (json as? [[String: Any]] ?? []).map { Attribute(name: $0["name"] as? String ?? "", value: $0["value"] as? String ?? "") }
    }

    /// A reply attribute line, `Name=Value`, split at the first `=`; a line without one is a
    /// name without a value, which the API refuses.
    static func attribute(_ line: String) -> Attribute {
        guard let equals = line.firstIndex(of: "=") else { return Attribute(name: line, value: "") }
        return Attribute(name: line[..<equals].trimmingCharacters(in: .whitespaces),
                         value: line[line.index(after: equals)...].trimmingCharacters(in: .whitespaces))
    }

    /// The `GROUP: Name=Value` lines grouped by group, in the order each group is first named;
    /// nil when a line has no group before its attribute.
    static func groupReplies(_ text: String) -> [GroupReply]? {
        var replies: [GroupReply] = []
        for line in ConsoleClientForm.lines(text) {
            guard let split = ConsoleGroupLine(line, restBefore: "=") else { return nil }
            let attribute = attribute(split.rest)
            if let index = replies.firstIndex(where: { $0.group == split.group }) {
                replies[index].attributes.append(attribute)
            } else {
                replies.append(GroupReply(group: split.group, attributes: [attribute]))
            }
        }
        return replies
    }

    /// The API's body; nil, with the field marked, when a group reply line cannot be read. A wait
    /// left empty is the default; a wait that is not a whole number goes as the text typed, for
    /// the API to refuse beside the field. The secret goes only on creation, and only when one
    /// was typed. Groups go by id from the boxes and by the name typed from the lines: the API
    /// resolves them and refuses a name of no group beside its field.
    ///
    /// An edit leaves out the settings that name other records (the directory, groups) where
    /// they are as `stored`: the API keeps them as they are, where sending them back would be
    /// refused once the directory is removed or a group deleted, though nobody changed them.
    /// Changed, the group reply lines of the groups `deleted` since (shown by id) are left out:
    /// they applied to nobody, and the API refuses an id of no group.
    mutating func json(creating: Bool, stored: ConsoleRADIUSClientForm? = nil,
                       deleted: Set<String> = []) -> [String: any Sendable]? {
        guard let replies = Self.groupReplies(groupReplies) else {
            groupRepliesError = "Write each line as GROUP: Name=Value, for example staff: Filter-Id=vpn-staff."
            return nil
        }
        let wait = waitSeconds.trimmingCharacters(in: .whitespaces)
        let waitValue: any Sendable
        if wait.isEmpty {
            waitValue = RADIUSClient.defaultWaitSeconds
        } else if let seconds = Int(wait) {
            waitValue = seconds
        } else {
            waitValue = wait
        }
        let attributes: [[String: any Sendable]] = ConsoleClientForm.lines(replyAttributes).map(Self.attribute).map(\.json)
        var body: [String: any Sendable] = [
            "name": name, "networks": ConsoleClientForm.lines(networks), "mode": mode, "wait_seconds": waitValue,
            "strip_realm": stripRealm, "strip_domain": stripDomain, "unenrolled_users": unenrolledUsers,
            "reply_attributes": attributes,
        ]
        if directoryPassword != stored?.directoryPassword { body["directory_password"] = directoryPassword }
        if Set(allowedGroups) != stored.map({ Set($0.allowedGroups) }) { body["allowed_groups"] = allowedGroups }
        if replies != stored.flatMap({ Self.groupReplies($0.groupReplies) }) {
            body["group_reply_attributes"] = replies.filter { !deleted.contains($0.group) }.map { reply -> [String: any Sendable] in
                ["group": reply.group, "attributes": reply.attributes.map(\.json)]
            }
        }
        if creating && !secret.isEmpty { body["secret"] = secret }
        return body
    }

    /// This form with the API's refusal beside its field, and the secret cleared.
    func refused(_ answer: InProcessRouter.Answer) -> ConsoleRADIUSClientForm {
        var form = self
        form.secret = ""
        let message = answer.errorDescription ?? "the RADIUS client could not be saved"
        let sentence = ConsoleText.sentence(message)
        // A network that overlaps another client's is a conflict (409), named by its network.
        let field = message.hasPrefix("network ") ? "networks" : ConsoleText.field(of: message)?.split(separator: "[").first.map(String.init)
        switch field {
        case "name": form.nameError = sentence
        case "networks": form.networksError = sentence
        case "mode": form.modeError = sentence
        case "wait_seconds": form.waitError = sentence
        case "strip_realm", "strip_domain": form.stripError = sentence
        case "unenrolled_users": form.unenrolledError = sentence
        case "reply_attributes": form.replyError = sentence
        case "directory_password": form.directoryPasswordError = sentence
        case "allowed_groups": form.allowedGroupsError = sentence
        case "group_reply_attributes": form.groupRepliesError = sentence
        case "secret": form.secretError = sentence
        default: form.error = sentence
        }
        return form
    }
}

extension ConsoleRADIUSClientForm.Attribute {
    var json: [String: any Sendable] { ["name": name, "value": value] }
}

/// The RADIUS client form as the template reads it: each select's options with the chosen one
/// marked, the tenant's groups as boxes; the secret field only when adding.
struct ConsoleRADIUSClientFields: Sendable {
    struct Option: Sendable { let value: String, label: String, selected: Bool }
    let creating: Bool
    let name: String, networks: String, waitSeconds: String, replyAttributes: String, groupReplies: String
    let stripRealm: Bool, stripDomain: Bool, directoryPassword: Bool
    let modes: [Option], unenrolledChoices: [Option]
    let groupChoices: [ConsoleGroupChoice]
    /// The tenant has more groups than the boxes list.
    let moreGroups: Bool
    let nameError: String?, networksError: String?, modeError: String?, waitError: String?, stripError: String?
    let unenrolledError: String?, replyError: String?, secretError: String?, error: String?
    let directoryPasswordError: String?, allowedGroupsError: String?, groupRepliesError: String?

    init(_ form: ConsoleRADIUSClientForm, groups: ConsoleGroupNames, creating: Bool) {
        self.creating = creating
        (name, networks, waitSeconds, replyAttributes) = (form.name, form.networks, form.waitSeconds, form.replyAttributes)
        (stripRealm, stripDomain, directoryPassword) = (form.stripRealm, form.stripDomain, form.directoryPassword)
        groupReplies = form.groupReplies
        groupChoices = groups.choices(form.allowedGroups)
        moreGroups = groups.truncated
        modes = RADIUSClient.Mode.allCases.map { mode in
            let label = switch mode {
            case .push: "push: approve on the phone"
            case .pushNumber: "push-number: pick the number shown by the gateway"
            case .passcode: "passcode: a one-time code as the password"
            case .auto: "auto: a code if typed, else a push"
            }
            return Option(value: mode.rawValue, label: label, selected: mode.rawValue == form.mode)
        }
        unenrolledChoices = RADIUSClient.UnenrolledUsers.allCases.map { choice in
            let label = switch choice {
            case .reject: "rejected"
            case .accept: "accepted (recorded in the audit log)"
            }
            return Option(value: choice.rawValue, label: label, selected: choice.rawValue == form.unenrolledUsers)
        }
        (nameError, networksError, modeError, waitError) = (form.nameError, form.networksError, form.modeError, form.waitError)
        (stripError, unenrolledError, replyError) = (form.stripError, form.unenrolledError, form.replyError)
        (secretError, error) = (form.secretError, form.error)
        (directoryPasswordError, allowedGroupsError, groupRepliesError)
            = (form.directoryPasswordError, form.allowedGroupsError, form.groupRepliesError)
    }
}
