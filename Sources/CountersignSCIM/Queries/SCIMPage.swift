import Foundation

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
        self.init(startIndex: try Self.integer(startIndex, "startIndex"), count: try Self.integer(count, "count"), maximumCount: maximumCount)
    }

    /// The same from a search request's integers.
    init(startIndex: Int?, count: Int?, maximumCount: Int) {
        self.startIndex = max(1, startIndex ?? 1)
        self.count = min(max(0, count ?? maximumCount), maximumCount)
    }

    private static func integer(_ text: String?, _ name: String) throws(SCIMError) -> Int? {
        guard let text else { return nil }
        guard let value = Int(text.trimmingCharacters(in: .whitespaces)) else {
            // Beyond Int's range is no page anyone has; past the end is an empty one.
            let digits = text.hasPrefix("-") ? text.dropFirst() : text[...]
            if !digits.isEmpty, digits.allSatisfy({ ("0"..."9").contains($0) }) { return text.hasPrefix("-") ? Int.min / 2 : Int.max / 2 }
            throw .invalidValue("\(name) must be an integer, not \"\(text)\".")
        }
        return value
    }
}
