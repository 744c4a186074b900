/// Where a PATCH operation applies (RFC 7644 §3.5.2): `active`, `name.givenName`,
/// `emails[type eq "work"].value`, `members[value eq "2819c223"]`.
public struct SCIMPatchPath: Sendable, Hashable, CustomStringConvertible {
    /// The attribute, without a sub-attribute (that is `subAttribute`, before or after a filter).
    public var attribute: SCIMAttributePath
    /// Which values of a multi-valued attribute the operation applies to.
    public var filter: SCIMFilter?
    public var subAttribute: String?

    public init(attribute: SCIMAttributePath, filter: SCIMFilter? = nil, subAttribute: String? = nil) {
        self.attribute = attribute
        self.filter = filter
        self.subAttribute = subAttribute
    }

    /// Parses a path, or throws `SCIMError.invalidPath` naming the byte where it went wrong.
    public init(parsing text: String) throws(SCIMError) {
        self = try FilterParser.patchPath(text)
    }

    public var description: String {
        var text = attribute.description
        if let filter { text += "[\(filter)]" }
        if let subAttribute { text += "." + subAttribute }
        return text
    }
}
