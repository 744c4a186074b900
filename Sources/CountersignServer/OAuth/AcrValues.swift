/// `acr_values` (CIBA §7.1, OpenID Connect Core §3.1.2.1): the authentication context classes
/// the client would like, most preferred first, space-separated. They are voluntary (OpenID Connect Core §3.1.2.1): any
/// well-formed list is accepted, stored, shown on the device, and answered in the ID token's
/// `acr` (see `AuthenticationContext`). At most 10 values of at most 200 characters each.
struct AcrValues: Sendable, Equatable {
    static let maximumCount = 10
    static let maximumLength = 200

    let values: [String]

    init(_ raw: String) throws(AcrValuesError) {
        guard let values = ScopeToken.list(raw), values.count <= Self.maximumCount,
              values.allSatisfy({ $0.utf8.count <= Self.maximumLength }) else {
            throw .malformed
        }
        self.values = values
    }
}

/// Why `acr_values` was refused: one OAuth error.
enum AcrValuesError: OAuthFailure, Equatable {
    case malformed

    var oauthError: OAuthError {
        OAuthError(.invalidRequest,
                   "acr_values must be at most \(AcrValues.maximumCount) space-separated values of at most \(AcrValues.maximumLength) characters")
    }
}
