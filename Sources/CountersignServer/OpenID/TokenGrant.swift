import Foundation

/// What the tokens of one approval state about the user and how they authenticated. The tokens
/// of the CIBA grant and those of every refresh of it state the same `sub`, `auth_time`, `acr`
/// and `amr` (OpenID Connect Core §12.2): a refresh is not a new authentication.
struct TokenGrant: Sendable, Equatable {
    let clientID: String
    let userID: String
    /// The scope of the tokens to issue, in the order the client asked for it.
    let scope: [String]
    /// When the user decided on the device.
    let authTime: Date
    let context: AuthenticationContext
    /// The RFC 9396 details the user approved; every token of the grant states them.
    var authorizationDetails: AuthorizationDetails? = nil
    /// The code flow's `nonce`, stated in the ID token of the code's redemption only
    /// (OpenID Connect Core §3.1.3.6); a refresh's ID token has none (§12.2).
    var nonce: String? = nil
}

extension TokenGrant {
    /// The grant of an approved request; `date` stands in for a decision time that is missing.
    init(of transaction: ApprovalTransaction, at date: Date) {
        self.init(clientID: transaction.clientID, userID: transaction.userID, scope: transaction.scope,
                  authTime: transaction.decidedAt ?? date, context: AuthenticationContext(of: transaction),
                  authorizationDetails: transaction.authorizationDetails)
    }

    /// The grant of a refresh token's family, issuing `scope` and `authorizationDetails` (the
    /// family's, or a part of them).
    init(of family: RefreshTokenFamily, scope: [String], authorizationDetails: AuthorizationDetails?) {
        self.init(clientID: family.clientID, userID: family.userID, scope: scope, authTime: family.authTime,
                  context: AuthenticationContext(acr: family.acr, amr: family.amr),
                  authorizationDetails: authorizationDetails)
    }
}
