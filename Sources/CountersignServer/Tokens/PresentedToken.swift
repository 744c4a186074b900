import CountersignCore

/// The `token` parameter of revocation and introspection, sorted by its form. Countersign's
/// access tokens are compact JWS and its refresh tokens opaque random strings, so the form tells
/// them apart; `token_type_hint` (RFC 7009 §2.1, RFC 7662 §2.1) is not needed and not read.
enum PresentedToken: Sendable {
    case jws(String)
    case opaque(String)

    init(_ form: FormParameters) throws(TokenManagementError) {
        guard let token = form["token"] else { throw .missingToken }
        self = TenantJWTHeader(of: token) != nil ? .jws(token) : .opaque(token)
    }
}
