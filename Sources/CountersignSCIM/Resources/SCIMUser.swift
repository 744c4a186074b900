import Foundation

/// A user as SCIM carries it (RFC 7643 §4.1), with the attributes Countersign keeps.
///
/// ```swift
/// let user = try SCIMUser(decoding: body)                     // POST or PUT
/// let response = user.json(baseURL: "https://id.example.com/scim/v2")
/// ```
public struct SCIMUser: Sendable, Hashable {
    /// Countersign's id; nil for a user not yet created.
    public var id: String?
    public var externalId: String?
    public var userName: String
    public var name: SCIMName?
    public var displayName: String?
    public var emails: [SCIMEmail]
    /// Absent in a request means active, as a newly provisioned user is.
    public var active: Bool
    /// Read-only: membership changes through the groups' `members` (RFC 7643 §4.1.2).
    public var groups: [SCIMGroupReference]
    public var meta: SCIMMeta?

    public init(id: String? = nil, externalId: String? = nil, userName: String, name: SCIMName? = nil, displayName: String? = nil,
                emails: [SCIMEmail] = [], active: Bool = true, groups: [SCIMGroupReference] = [], meta: SCIMMeta? = nil) {
        self.id = id
        self.externalId = externalId
        self.userName = userName
        self.name = name
        self.displayName = displayName
        self.emails = emails
        self.active = active
        self.groups = groups
        self.meta = meta
    }

    /// Reads a POST or PUT body. `id`, `meta` and `groups` are read-only and ignored, as are
    /// attributes Countersign does not keep (RFC 7644 §3.3); `userName` is required.
    public init(decoding data: Data) throws(SCIMError) {
        try self.init(json: SCIMJSON(parsing: data))
    }

    public init(json: SCIMJSON) throws(SCIMError) {
        let reader = try ResourceReader(json)
        userName = try reader.requiredString("userName")
        externalId = try reader.string("externalId")
        displayName = try reader.string("displayName")
        active = try reader.bool("active") ?? true
        if let name = try reader.object("name") {
            let read = SCIMName(formatted: try name.string("formatted"), familyName: try name.string("familyName"),
                                givenName: try name.string("givenName"))
            // A name with no part is no name, so that it reads back as it is written (without one).
            self.name = read == SCIMName() ? nil : read
        }
        emails = []
        for email in try reader.objects("emails") {
            emails.append(SCIMEmail(value: try email.requiredString("value"), type: try email.string("type"), primary: try email.bool("primary")))
        }
        guard emails.filter({ $0.primary == true }).count <= 1 else {
            throw .invalidValue("At most one of emails may be primary.")
        }
        groups = []
    }

    /// The user as a response carries it, with `meta` and references under `baseURL` (the SCIM
    /// base, such as `https://id.example.com/scim/v2`).
    public func json(baseURL: String) -> SCIMJSON {
        var members: [String: SCIMJSON] = [
            "schemas": [.string(SCIMResourceSchema.userID)], "userName": .string(userName), "active": .bool(active),
        ]
        if let id { members["id"] = .string(id) }
        if let externalId { members["externalId"] = .string(externalId) }
        if let displayName { members["displayName"] = .string(displayName) }
        if let name, name != SCIMName() { members["name"] = name.json }
        if !emails.isEmpty { members["emails"] = .array(emails.map(\.json)) }
        if !groups.isEmpty { members["groups"] = .array(groups.map { $0.json(baseURL: baseURL) }) }
        if let id, let meta { members["meta"] = meta.json(resourceType: "User", location: "\(baseURL)/Users/\(id)") }
        return .object(members)
    }
}

public struct SCIMName: Sendable, Hashable {
    public var formatted: String?
    public var familyName: String?
    public var givenName: String?

    public init(formatted: String? = nil, familyName: String? = nil, givenName: String? = nil) {
        self.formatted = formatted
        self.familyName = familyName
        self.givenName = givenName
    }

    var json: SCIMJSON {
        var members: [String: SCIMJSON] = [:]
        if let formatted { members["formatted"] = .string(formatted) }
        if let familyName { members["familyName"] = .string(familyName) }
        if let givenName { members["givenName"] = .string(givenName) }
        return .object(members)
    }
}

public struct SCIMEmail: Sendable, Hashable {
    public var value: String
    /// `work`, `home`, `other`, or what the provider sends.
    public var type: String?
    /// Kept as sent: nil and false both mean not primary, but a client that sent `false` reads it back.
    public var primary: Bool?

    public init(value: String, type: String? = nil, primary: Bool? = nil) {
        self.value = value
        self.type = type
        self.primary = primary
    }

    var json: SCIMJSON {
        var members: [String: SCIMJSON] = ["value": .string(value)]
        if let type { members["type"] = .string(type) }
        if let primary { members["primary"] = .bool(primary) }
        return .object(members)
    }
}

/// A group a user belongs to, as the user's read-only `groups` lists it.
public struct SCIMGroupReference: Sendable, Hashable {
    public var value: String
    public var display: String?

    public init(value: String, display: String? = nil) {
        self.value = value
        self.display = display
    }

    func json(baseURL: String) -> SCIMJSON {
        var members: [String: SCIMJSON] = ["value": .string(value), "$ref": .string("\(baseURL)/Groups/\(value)")]
        if let display { members["display"] = .string(display) }
        return .object(members)
    }
}
