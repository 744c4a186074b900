extension SCIMUser {
    /// The user after a PATCH (RFC 7644 §3.5.2). `id`, `meta` and `groups` are read-only and
    /// stay as they were; the result is checked as a PUT body would be, so a patch cannot leave
    /// the user without a `userName` or with a value of the wrong type.
    ///
    /// ```swift
    /// let deactivated = try user.applying(SCIMPatchRequest(parsing: Data(#"""
    ///     {"schemas":["urn:ietf:params:scim:api:messages:2.0:PatchOp"],
    ///      "Operations":[{"op":"replace","value":{"active":false}}]}
    ///     """#.utf8)))
    /// ```
    public func applying(_ patch: SCIMPatchRequest) throws(SCIMError) -> SCIMUser {
        var application = PatchApplication(schema: .user, resource: json(baseURL: "").objectValue ?? [:])
        for operation in patch.operations {
            try application.apply(operation)
        }
        var user = try SCIMUser(json: .object(application.resource))
        user.id = id
        user.meta = meta
        user.groups = groups
        return user
    }
}
