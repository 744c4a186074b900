import Foundation

/// A resource's `meta` (RFC 7643 §3.1) as storage keeps it; `resourceType` and `location` follow
/// from the resource and the base URL, so they are written, not kept.
public struct SCIMMeta: Sendable, Hashable {
    public var created: Date
    public var lastModified: Date
    /// The resource's version, such as a revision counter; written as the weak ETag `W/"…"`.
    public var version: String

    public init(created: Date, lastModified: Date, version: String) {
        self.created = created
        self.lastModified = lastModified
        self.version = version
    }

    /// The `ETag` header and `meta.version`: weak, since two encodings of one version may differ in
    /// member order or projection (RFC 7644 §3.14).
    public var entityTag: String { "W/\"\(version)\"" }

    /// Whether an `If-Match` header (a list of entity tags, or `*`) names this version, compared
    /// weakly: SCIM versions are weak tags (RFC 7644 §3.14), which a strong comparison never
    /// matches, and clients send back the tag they were given, `W/` and all, or without it.
    ///
    /// ```swift
    /// meta.isMatched(byIfMatch: #"W/"3""#)  // true when version is "3"
    /// ```
    public func isMatched(byIfMatch header: String) -> Bool {
        header.split(separator: ",").contains { tag in
            var tag = tag.trimmingCharacters(in: .whitespaces)[...]
            if tag == "*" { return true }
            if tag.hasPrefix("W/") { tag = tag.dropFirst(2) }
            guard tag.count >= 2, tag.first == "\"", tag.last == "\"" else { return false }
            return tag.dropFirst().dropLast() == version[...]
        }
    }

    func json(resourceType: String, location: String) -> SCIMJSON {
        [
            "resourceType": .string(resourceType), "location": .string(location),
            "created": .string(Timestamp.text(created)), "lastModified": .string(Timestamp.text(lastModified)),
            "version": .string(entityTag),
        ]
    }
}
