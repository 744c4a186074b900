/// A page of resources (RFC 7644 §3.4.2): the answer to a query and to `/Schemas` and
/// `/ResourceTypes`.
///
/// ```swift
/// SCIMListResponse(totalResults: 1, page: page, resources: [user.json(baseURL: base)]).json
/// ```
public struct SCIMListResponse: Sendable, Hashable {
    public static let schema = "urn:ietf:params:scim:api:messages:2.0:ListResponse"

    public var totalResults: Int
    /// 1-based, as the request's `startIndex`.
    public var startIndex: Int
    public var resources: [SCIMJSON]

    public init(totalResults: Int, startIndex: Int = 1, resources: [SCIMJSON]) {
        self.totalResults = totalResults
        self.startIndex = startIndex
        self.resources = resources
    }

    public init(totalResults: Int, page: SCIMPage, resources: [SCIMJSON]) {
        self.init(totalResults: totalResults, startIndex: page.startIndex, resources: resources)
    }

    public var json: SCIMJSON {
        [
            "schemas": [.string(Self.schema)], "totalResults": .integer(Int64(totalResults)),
            "startIndex": .integer(Int64(startIndex)), "itemsPerPage": .integer(Int64(resources.count)),
            "Resources": .array(resources),
        ]
    }
}
