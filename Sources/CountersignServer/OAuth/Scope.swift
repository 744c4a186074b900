/// The `scope` of a request for an ID token, at the backchannel authentication endpoint
/// (CIBA §7.1) and the authorization endpoint (OpenID Connect Core §3.1.2.1): required, it
/// must contain `openid` (an ID token is what both deliver), and every value must be one the
/// administrator allowed the client, `openid` included. Order does not matter and repeats
/// count once.
struct Scope: Sendable, Equatable {
    static let openID = "openid"

    let values: [String]

    /// `openid` alone: what a login that is not an OpenID Connect request (RADIUS, say) asks for.
    static let openIDOnly = Scope(values: [openID])

    private init(values: [String]) {
        self.values = values
    }

    init(_ raw: String?, allowedFor client: Client) throws(ScopeError) {
        guard let raw else { throw .missing }
        guard let values = ScopeToken.list(raw) else { throw .malformed }
        // Decision 1 of the standards checklist: a missing openid is invalid_scope.
        guard values.contains(Self.openID) else { throw .withoutOpenID }
        if let refused = values.first(where: { !client.scopes.contains($0) }) {
            throw .notAllowed(refused)
        }
        self.values = values
    }
}

/// Why a `scope` was refused; each case is one OAuth error, which each endpoint sends in its own
/// way (CIBA §13 in the answer, RFC 6749 §4.1.2.1 at the redirect URI).
enum ScopeError: OAuthFailure, Equatable {
    case missing
    case malformed
    case withoutOpenID
    case notAllowed(String)

    var oauthError: OAuthError {
        switch self {
        case .missing: OAuthError(.invalidRequest, "scope is required")
        case .malformed: OAuthError(.invalidScope, "scope must be space-separated scope tokens")
        case .withoutOpenID: OAuthError(.invalidScope, "scope must include openid")
        case .notAllowed(let scope): OAuthError(.invalidScope, "the client may not request scope \(scope)")
        }
    }
}
