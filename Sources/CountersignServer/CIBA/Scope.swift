/// The `scope` of an authentication request (CIBA §7.1): required, it must contain `openid`
/// (an ID token is what CIBA delivers), and every value must be one the administrator allowed
/// the client, `openid` included. Order does not matter and repeats count once.
struct Scope: Sendable, Equatable {
    static let openID = "openid"

    let values: [String]

    init(_ raw: String?, allowedFor client: Client) throws {
        guard let raw else { throw BackchannelAuthenticationError.missingScope }
        guard let values = ScopeToken.list(raw) else { throw BackchannelAuthenticationError.malformedScope }
        // Decision 1 of the standards checklist: a missing openid is invalid_scope.
        guard values.contains(Self.openID) else { throw BackchannelAuthenticationError.scopeWithoutOpenID }
        if let refused = values.first(where: { !client.scopes.contains($0) }) {
            throw BackchannelAuthenticationError.scopeNotAllowed(refused)
        }
        self.values = values
    }
}
