import Foundation

/// A resource type's core schema as Countersign keeps it: the attributes of RFC 7643 §4 it stores,
/// and none it would drop. Identity providers read `/Schemas` to learn what they can provision, so
/// promising `phoneNumbers` and losing them would be worse than not listing them.
public struct SCIMResourceSchema: Sendable {
    public var id: String
    public var name: String
    public var description: String
    /// The attributes of this schema, without the common ones (`id`, `externalId`, `meta`), which
    /// RFC 7643 §3.1 defines for every resource and §8.7.1 leaves out of the schema documents.
    public var attributes: [SCIMAttributeDefinition]

    /// The attribute named `name` (in any case), common ones included.
    public func attribute(_ name: String) -> SCIMAttributeDefinition? {
        (Self.common + attributes).first { $0.name.caseInsensitiveCompare(name) == .orderedSame }
    }

    /// Whether `schema`, if a path was qualified with one, is this schema's URN.
    func owns(_ schema: String?) -> Bool {
        schema.map { $0.caseInsensitiveCompare(id) == .orderedSame } ?? true
    }

    /// The definition of `path`'s attribute or sub-attribute, if this schema has it.
    func definition(of path: SCIMAttributePath) -> SCIMAttributeDefinition? {
        guard owns(path.schema), let attribute = attribute(path.name) else { return nil }
        guard let sub = path.subAttribute else { return attribute }
        return attribute.subAttribute(sub)
    }

    /// The schema as an entry of `/Schemas` (RFC 7643 §7), with its location under `baseURL`.
    public func json(baseURL: String) -> SCIMJSON {
        [
            "schemas": ["urn:ietf:params:scim:schemas:core:2.0:Schema"],
            "id": .string(id), "name": .string(name), "description": .string(description),
            "attributes": .array(attributes.map(\.json)),
            "meta": ["resourceType": "Schema", "location": .string("\(baseURL)/Schemas/\(id)")],
        ]
    }

    static let common: [SCIMAttributeDefinition] = [
        SCIMAttributeDefinition(name: "id", type: .string, description: "Countersign's identifier for the resource.",
                                caseExact: true, mutability: .readOnly, returned: .always, uniqueness: .server),
        SCIMAttributeDefinition(name: "externalId", type: .string, description: "The identity provider's identifier for the resource.",
                                caseExact: true),
        SCIMAttributeDefinition(name: "meta", type: .complex, description: "The resource's metadata.", mutability: .readOnly,
                                subAttributes: [
                                    SCIMAttributeDefinition(name: "resourceType", type: .string, description: "User or Group.",
                                                            caseExact: true, mutability: .readOnly),
                                    SCIMAttributeDefinition(name: "created", type: .dateTime, description: "When it was created.",
                                                            mutability: .readOnly),
                                    SCIMAttributeDefinition(name: "lastModified", type: .dateTime, description: "When it last changed.",
                                                            mutability: .readOnly),
                                    SCIMAttributeDefinition(name: "location", type: .reference, description: "Its URI.",
                                                            caseExact: true, mutability: .readOnly),
                                    SCIMAttributeDefinition(name: "version", type: .string, description: "Its weak ETag.",
                                                            caseExact: true, mutability: .readOnly),
                                ]),
    ]

    public static let userID = "urn:ietf:params:scim:schemas:core:2.0:User"
    public static let groupID = "urn:ietf:params:scim:schemas:core:2.0:Group"

    public static let user = SCIMResourceSchema(id: userID, name: "User", description: "A person who approves sign-ins with Countersign.", attributes: [
        SCIMAttributeDefinition(name: "userName", type: .string, description: "The name the user signs in with; unique without regard to case.",
                                required: true, uniqueness: .server),
        SCIMAttributeDefinition(name: "name", type: .complex, description: "The user's name.", subAttributes: [
            SCIMAttributeDefinition(name: "formatted", type: .string, description: "The full name, as displayed."),
            SCIMAttributeDefinition(name: "familyName", type: .string, description: "The family name."),
            SCIMAttributeDefinition(name: "givenName", type: .string, description: "The given name."),
        ]),
        SCIMAttributeDefinition(name: "displayName", type: .string, description: "The name shown to the user and to administrators."),
        // Required: every user is active or not. A request may leave it out (a new user is then
        // active), but it cannot be removed.
        SCIMAttributeDefinition(name: "active", type: .boolean, description: "Whether the user may sign in.", required: true),
        SCIMAttributeDefinition(name: "emails", type: .complex, multiValued: true, description: "The user's e-mail addresses.", subAttributes: [
            SCIMAttributeDefinition(name: "value", type: .string, description: "The address."),
            SCIMAttributeDefinition(name: "type", type: .string, description: "What the address is for.", canonicalValues: ["work", "home", "other"]),
            SCIMAttributeDefinition(name: "primary", type: .boolean, description: "Whether this is the user's main address."),
        ]),
        SCIMAttributeDefinition(name: "groups", type: .complex, multiValued: true,
                                description: "The groups the user belongs to; changed through the groups' members.",
                                mutability: .readOnly, subAttributes: [
                                    SCIMAttributeDefinition(name: "value", type: .string, description: "The group's id.",
                                                            caseExact: true, mutability: .readOnly),
                                    SCIMAttributeDefinition(name: "$ref", type: .reference, description: "The group's URI.",
                                                            caseExact: true, mutability: .readOnly, referenceTypes: ["Group"]),
                                    SCIMAttributeDefinition(name: "display", type: .string, description: "The group's displayName.",
                                                            mutability: .readOnly),
                                ]),
    ])

    public static let group = SCIMResourceSchema(id: groupID, name: "Group", description: "A group of Countersign users.", attributes: [
        SCIMAttributeDefinition(name: "displayName", type: .string, description: "The group's name.", required: true),
        SCIMAttributeDefinition(name: "members", type: .complex, multiValued: true, description: "The users in the group.", subAttributes: [
            SCIMAttributeDefinition(name: "value", type: .string, description: "The member's id.", caseExact: true, mutability: .immutable),
            SCIMAttributeDefinition(name: "$ref", type: .reference, description: "The member's URI.", caseExact: true,
                                    mutability: .immutable, referenceTypes: ["User"]),
            SCIMAttributeDefinition(name: "display", type: .string, description: "The member's displayName.", mutability: .readOnly),
            SCIMAttributeDefinition(name: "type", type: .string, description: "What the member is: always a user.",
                                    mutability: .immutable, canonicalValues: ["User"]),
        ]),
    ])
}
