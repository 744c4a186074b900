import Foundation

/// A query of a resource type, from GET's parameters or from a POST to `.search` (RFC 7644
/// §3.4.2, §3.4.3): the filter, the page and the attributes to return. Sorting is not offered
/// (`sort.supported` is false), so `sortBy` and `sortOrder` are ignored, as RFC 7644 §3.4.2.3
/// lets a provider that does not sort do.
///
/// ```swift
/// let query = try SCIMQuery(filter: #"userName eq "bjensen""#, startIndex: "1", count: "10",
///                           attributes: nil, excludedAttributes: nil, maximumCount: 200)
/// let lookup = try SCIMStoreQuery(users: query.filter)
/// ```
public struct SCIMQuery: Sendable, Hashable {
    public static let searchRequestSchema = "urn:ietf:params:scim:api:messages:2.0:SearchRequest"

    public var filter: SCIMFilter?
    public var page: SCIMPage
    public var projection: SCIMProjection

    /// The query parameters of a GET, each nil when absent.
    public init(filter: String?, startIndex: String?, count: String?, attributes: String?, excludedAttributes: String?,
                maximumCount: Int) throws(SCIMError) {
        self.filter = try filter.map { text throws(SCIMError) in try SCIMFilter(parsing: text) }
        page = try SCIMPage(startIndex: startIndex, count: count, maximumCount: maximumCount)
        projection = try SCIMProjection(attributes: attributes, excludedAttributes: excludedAttributes)
    }

    /// The body of a POST to `.search`.
    public init(searchRequest data: Data, maximumCount: Int) throws(SCIMError) {
        let json = try SCIMJSON(parsing: data)
        let reader = try ResourceReader(json)
        guard json[caseInsensitive: "schemas"]?.arrayValue?.contains(where: {
            $0.stringValue?.caseInsensitiveCompare(Self.searchRequestSchema) == .orderedSame
        }) == true else {
            throw .invalidSyntax("schemas must list \(Self.searchRequestSchema).")
        }
        filter = try reader.string("filter").map { text throws(SCIMError) in try SCIMFilter(parsing: text) }
        page = SCIMPage(startIndex: try reader.integer("startIndex"), count: try reader.integer("count"), maximumCount: maximumCount)
        projection = try SCIMProjection(attributes: try reader.strings("attributes")?.map { $0[...] },
                                        excludedAttributes: try reader.strings("excludedAttributes")?.map { $0[...] })
    }
}
