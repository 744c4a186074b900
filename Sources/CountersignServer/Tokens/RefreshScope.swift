/// The scope of the tokens a refresh issues (RFC 6749 §6). Without a `scope` parameter it is
/// the scope the approval granted; with one, any part of that scope, never more: the user
/// approved the grant's scope and nothing else. Values the administrator has since withdrawn
/// from the client are not issued again: asked for, they are refused; implied, left out.
struct RefreshScope: Sendable, Equatable {
    let values: [String]

    init(_ raw: String?, granted: [String], allowedFor client: Client) throws(TokenRequestError) {
        guard let raw else {
            values = granted.filter(client.scopes.contains)
            return
        }
        guard let requested = ScopeToken.list(raw) else { throw .malformedScope }
        if let extra = requested.first(where: { !granted.contains($0) }) { throw .scopeNotGranted(extra) }
        if let withdrawn = requested.first(where: { !client.scopes.contains($0) }) { throw .scopeNotAllowed(withdrawn) }
        values = requested
    }
}
