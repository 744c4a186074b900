import Foundation

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

/// The paging parameters of a query (RFC 7644 §3.4.2.4), read as the RFC says to forgive them:
/// a `startIndex` below 1 is 1, a negative `count` is 0, and a `count` above the server's
/// maximum is that maximum.
public struct SCIMPage: Sendable, Hashable {
    /// 1-based.
    public var startIndex: Int
    public var count: Int

    /// The 0-based offset storage skips.
    public var offset: Int { startIndex - 1 }

    /// `startIndex` and `count` as the query string gives them, nil when absent.
    ///
    /// ```swift
    /// let page = try SCIMPage(startIndex: "0", count: "500", maximumCount: 200)  // startIndex 1, count 200
    /// ```
    public init(startIndex: String?, count: String?, maximumCount: Int) throws(SCIMError) {
        let start = try Self.integer(startIndex, "startIndex") ?? 1
        let requested = try Self.integer(count, "count") ?? maximumCount
        self.startIndex = max(1, start)
        self.count = min(max(0, requested), maximumCount)
    }

    private static func integer(_ text: String?, _ name: String) throws(SCIMError) -> Int? {
        guard let text else { return nil }
        guard let value = Int(text.trimmingCharacters(in: .whitespaces)) else {
            // Beyond Int's range is no page anyone has; past the end is an empty one.
            if text.allSatisfy({ $0.isNumber }), !text.isEmpty { return Int.max / 2 }
            if text.hasPrefix("-"), text.dropFirst().allSatisfy({ $0.isNumber }), text.count > 1 { return Int.min / 2 }
            throw .invalidValue("\(name) must be an integer, not \"\(text)\".")
        }
        return value
    }
}
