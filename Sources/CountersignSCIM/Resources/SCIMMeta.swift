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

    func json(resourceType: String, location: String) -> SCIMJSON {
        [
            "resourceType": .string(resourceType), "location": .string(location),
            "created": .string(Timestamp.text(created)), "lastModified": .string(Timestamp.text(lastModified)),
            "version": .string(entityTag),
        ]
    }
}
