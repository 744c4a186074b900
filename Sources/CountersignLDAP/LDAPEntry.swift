/// One entry a search returned: its DN and the attributes asked for, values as the octets the
/// directory sent (an `objectGUID` is binary; most others are UTF-8).
///
/// Attribute names are case-insensitive in LDAP (`memberOf`, `memberof`, `MEMBEROF` are one
/// attribute, and servers echo the case they store, not the case asked for), so lookups here
/// ignore case.
///
/// ```swift
/// let mail = entry.string("mail")                     // first value, if UTF-8
/// let groups = entry.strings("memberOf")              // every UTF-8 value
/// let id = entry.objectID                             // objectGUID or entryUUID
/// ```
public struct LDAPEntry: Sendable, Hashable {
    public let dn: String
    /// The attributes under the names the directory sent.
    public let attributes: [String: [[UInt8]]]

    public init(dn: String, attributes: [String: [[UInt8]]]) {
        self.dn = dn
        self.attributes = attributes
    }

    /// The values of attribute `name`, whatever its case; empty when the entry has none.
    public func values(_ name: String) -> [[UInt8]] {
        if let exact = attributes[name] { return exact }
        let wanted = Self.folded(name)
        return attributes.first { Self.folded($0.key) == wanted }?.value ?? []
    }

    /// The values of attribute `name` that are UTF-8, as text.
    public func strings(_ name: String) -> [String] {
        values(name).compactMap { String(validating: $0, as: UTF8.self) }
    }

    /// The first value of attribute `name`, if it is UTF-8.
    public func string(_ name: String) -> String? {
        values(name).first.flatMap { String(validating: $0, as: UTF8.self) }
    }

    /// The entry's id for life: its `objectGUID` (Active Directory) or else its `entryUUID`
    /// (OpenLDAP, 389), when the search asked for it.
    public var objectID: DirectoryObjectID? {
        if let guid = values("objectGUID").first { return DirectoryObjectID(objectGUID: guid) }
        return string("entryUUID").flatMap { DirectoryObjectID(entryUUID: $0) }
    }

    /// Attribute names are ASCII (RFC 4512 §1.4), so ASCII case folding is the whole of it.
    private static func folded(_ name: String) -> [UInt8] {
        name.utf8.map { (0x41...0x5A).contains($0) ? $0 + 0x20 : $0 }
    }
}
