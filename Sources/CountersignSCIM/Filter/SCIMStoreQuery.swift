/// What Countersign's storage answers of a filter: one indexed column compared for equality.
///
/// Identity providers filter to find one resource before they create or link it (Entra ID asks
/// `userName eq "…"` and `externalId eq "…"`, Okta `userName eq "…"`, both `displayName eq "…"`
/// for groups), so this is what storage answers with an index; any other filter is refused as
/// unsupported rather than answered by loading every resource. `SCIMFilter.matches` remains for a
/// server that chooses to evaluate more.
///
/// ```swift
/// let query = try SCIMStoreQuery(users: SCIMFilter(parsing: #"userName eq "bjensen@example.com""#))
/// // .userName(eq: "bjensen@example.com")
/// ```
public enum SCIMStoreQuery: Sendable, Hashable {
    /// No filter: every resource, paged.
    case all
    /// Compared exactly (`id` is caseExact).
    case id(eq: String)
    /// Compared exactly (`externalId` is caseExact, RFC 7643 §3.1).
    case externalId(eq: String)
    /// Compared without regard to case: `userName` is caseExact false (RFC 7643 §4.1.1).
    case userName(eq: String)
    /// Some e-mail address of the user equals this one, without regard to case.
    case emailValue(eq: String)
    /// Compared without regard to case (caseExact false).
    case displayName(eq: String)

    /// The query for a filter on `/Users`, or `.all` for none.
    public init(users filter: SCIMFilter?) throws(SCIMError) {
        guard let filter else {
            self = .all
            return
        }
        switch filter {
        case .compare(let path, .eq, .string(let value)) where SCIMResourceSchema.user.owns(path.schema):
            if let query = Self.common(path, value) {
                self = query
            } else if path.names("userName") {
                self = .userName(eq: value)
            } else if path.names("displayName") {
                self = .displayName(eq: value)
            } else if path.names("emails", "value") || path.names("emails") {
                self = .emailValue(eq: value)
            } else {
                throw Self.unsupported(filter, Self.userForms)
            }
        case .valuePath(let path, .compare(let inner, .eq, .string(let value)))
            where SCIMResourceSchema.user.owns(path.schema) && path.names("emails") && inner.names("value"):
            self = .emailValue(eq: value)
        default:
            throw Self.unsupported(filter, Self.userForms)
        }
    }

    /// The query for a filter on `/Groups`, or `.all` for none.
    public init(groups filter: SCIMFilter?) throws(SCIMError) {
        guard let filter else {
            self = .all
            return
        }
        guard case .compare(let path, .eq, .string(let value)) = filter, SCIMResourceSchema.group.owns(path.schema) else {
            throw Self.unsupported(filter, Self.groupForms)
        }
        if let query = Self.common(path, value) {
            self = query
        } else if path.names("displayName") {
            self = .displayName(eq: value)
        } else {
            throw Self.unsupported(filter, Self.groupForms)
        }
    }

    private static func common(_ path: SCIMAttributePath, _ value: String) -> SCIMStoreQuery? {
        if path.names("id") { return .id(eq: value) }
        if path.names("externalId") { return .externalId(eq: value) }
        return nil
    }

    static let userForms = #"userName eq "…", externalId eq "…", id eq "…", displayName eq "…", emails.value eq "…" or emails[value eq "…"]"#
    static let groupForms = #"displayName eq "…", externalId eq "…" or id eq "…""#

    private static func unsupported(_ filter: SCIMFilter, _ forms: String) -> SCIMError {
        .unsupportedFilter("Countersign cannot answer the filter \(filter); it answers one comparison of the forms \(forms).")
    }
}
