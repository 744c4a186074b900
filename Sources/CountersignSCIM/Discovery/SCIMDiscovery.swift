/// The documents a SCIM client reads before it provisions (RFC 7644 §4): what the service
/// provider supports, which resource types it has and their schemas. Each says only what
/// Countersign does.
///
/// ```swift
/// let discovery = SCIMDiscovery(baseURL: "https://id.example.com/scim/v2", maximumResults: 200)
/// discovery.serviceProviderConfig  // GET /ServiceProviderConfig
/// ```
public struct SCIMDiscovery: Sendable {
    /// The SCIM base URL, without a trailing slash.
    public var baseURL: String
    /// The largest page a query returns (`filter.maxResults`, and `SCIMPage`'s maximum count).
    public var maximumResults: Int
    /// Where an administrator reads how to connect an identity provider.
    public var documentationURI: String?

    public init(baseURL: String, maximumResults: Int, documentationURI: String? = nil) {
        self.baseURL = baseURL.hasSuffix("/") ? String(baseURL.dropLast()) : baseURL
        self.maximumResults = maximumResults
        self.documentationURI = documentationURI
    }

    /// RFC 7643 §5: PATCH and filtering and ETags yes; bulk, sorting and password changes no
    /// (Countersign holds no passwords); bearer tokens for authentication.
    public var serviceProviderConfig: SCIMJSON {
        var json: SCIMJSON = [
            "schemas": ["urn:ietf:params:scim:schemas:core:2.0:ServiceProviderConfig"],
            "patch": ["supported": true],
            "bulk": ["supported": false, "maxOperations": 0, "maxPayloadSize": 0],
            "filter": ["supported": true, "maxResults": .integer(Int64(maximumResults))],
            "changePassword": ["supported": false],
            "sort": ["supported": false],
            "etag": ["supported": true],
            "authenticationSchemes": [[
                "type": "oauthbearertoken", "name": "OAuth Bearer Token", "primary": true,
                "description": "A bearer token an administrator creates for the identity provider (RFC 6750).",
                "specUri": "https://www.rfc-editor.org/rfc/rfc6750",
            ]],
            "meta": ["resourceType": "ServiceProviderConfig", "location": .string("\(baseURL)/ServiceProviderConfig")],
        ]
        if let documentationURI, case .object(var members) = json {
            members["documentationUri"] = .string(documentationURI)
            json = .object(members)
        }
        return json
    }

    /// RFC 7643 §6: Users and Groups, without schema extensions.
    public var resourceTypes: [SCIMJSON] {
        [
            resourceType(name: "User", endpoint: "/Users", schema: .user, description: "People who approve sign-ins."),
            resourceType(name: "Group", endpoint: "/Groups", schema: .group, description: "Groups of users."),
        ]
    }

    /// GET `/ResourceTypes`.
    public var resourceTypeList: SCIMJSON {
        SCIMListResponse(totalResults: resourceTypes.count, resources: resourceTypes).json
    }

    /// RFC 7643 §7: the User and Group schemas as Countersign keeps them.
    public var schemas: [SCIMJSON] {
        [SCIMResourceSchema.user.json(baseURL: baseURL), SCIMResourceSchema.group.json(baseURL: baseURL)]
    }

    /// GET `/Schemas`.
    public var schemaList: SCIMJSON {
        SCIMListResponse(totalResults: schemas.count, resources: schemas).json
    }

    private func resourceType(name: String, endpoint: String, schema: SCIMResourceSchema, description: String) -> SCIMJSON {
        [
            "schemas": ["urn:ietf:params:scim:schemas:core:2.0:ResourceType"],
            "id": .string(name), "name": .string(name), "endpoint": .string(endpoint), "description": .string(description),
            "schema": .string(schema.id), "schemaExtensions": [],
            "meta": ["resourceType": "ResourceType", "location": .string("\(baseURL)/ResourceTypes/\(name)")],
        ]
    }
}
