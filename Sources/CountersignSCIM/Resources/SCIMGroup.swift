import Foundation

/// A group as SCIM carries it (RFC 7643 §4.2). Members are users, named by their ids.
///
/// ```swift
/// let group = try SCIMGroup(decoding: body)
/// ```
public struct SCIMGroup: Sendable, Hashable {
    public var id: String?
    public var externalId: String?
    public var displayName: String
    /// All members, or none when storage did not load them for a PATCH (`SCIMGroupPatch`).
    public var members: [SCIMMember]
    public var meta: SCIMMeta?

    public init(id: String? = nil, externalId: String? = nil, displayName: String, members: [SCIMMember] = [], meta: SCIMMeta? = nil) {
        self.id = id
        self.externalId = externalId
        self.displayName = displayName
        self.members = members
        self.meta = meta
    }

    /// Reads a POST or PUT body; `displayName` is required, `id` and `meta` are ignored.
    public init(decoding data: Data) throws(SCIMError) {
        try self.init(json: SCIMJSON(parsing: data))
    }

    public init(json: SCIMJSON) throws(SCIMError) {
        let reader = try ResourceReader(json)
        displayName = try reader.requiredString("displayName")
        externalId = try reader.string("externalId")
        members = []
        var seen: Set<String> = []
        for member in try reader.objects("members") {
            let value = try member.requiredString("value")
            // A member listed twice is one member.
            if seen.insert(value).inserted { members.append(SCIMMember(value: value, display: try member.string("display"))) }
        }
    }

    /// The group as a response carries it; `members` may be left out (`excludedAttributes=members`)
    /// with `SCIMProjection`.
    public func json(baseURL: String) -> SCIMJSON {
        var json: [String: SCIMJSON] = [
            "schemas": [.string(SCIMResourceSchema.groupID)], "displayName": .string(displayName),
            "members": .array(members.map { $0.json(baseURL: baseURL) }),
        ]
        if let id { json["id"] = .string(id) }
        if let externalId { json["externalId"] = .string(externalId) }
        if let id, let meta { json["meta"] = meta.json(resourceType: "Group", location: "\(baseURL)/Groups/\(id)") }
        return .object(json)
    }
}

public struct SCIMMember: Sendable, Hashable {
    /// The member user's id.
    public var value: String
    /// The user's displayName (or userName), as storage fills it in; read-only.
    public var display: String?

    public init(value: String, display: String? = nil) {
        self.value = value
        self.display = display
    }

    func json(baseURL: String) -> SCIMJSON {
        var members: [String: SCIMJSON] = ["value": .string(value), "$ref": .string("\(baseURL)/Users/\(value)"), "type": "User"]
        if let display { members["display"] = .string(display) }
        return .object(members)
    }
}
