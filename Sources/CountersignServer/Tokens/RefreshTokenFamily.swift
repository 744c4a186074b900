import Foundation

/// The refresh tokens of one approval: a client that asked for `offline_access` gets one with
/// the tokens of the CIBA grant, and each use of it (`grant_type=refresh_token`) replaces it
/// with the next. The family records what every token of it restates, so that a refresh needs
/// neither the approval request (which is deleted in time) nor the user's presence.
///
/// Lifetimes: a family ends `absoluteLifetime` (30 days) after the approval, whatever happens;
/// each token also ends `idleLifetime` (14 days) after it was issued, so a client that stops
/// refreshing for two weeks must ask the user again. One lost token therefore grants at most
/// 30 days, and none after a fortnight of disuse.
struct RefreshTokenFamily: Sendable, Equatable {
    /// The scope value that asks for a refresh token (OpenID Connect Core §11).
    static let offlineAccessScope = "offline_access"
    static let absoluteLifetime: TimeInterval = 30 * 86_400
    static let idleLifetime: TimeInterval = 14 * 86_400

    let id: String
    let tenantID: String
    let clientID: String
    let userID: String
    /// The scope granted by the approval; no refresh issues more.
    let scope: [String]
    let authTime: Date
    let acr: String
    let amr: [String]
    let createdAt: Date
    let expiresAt: Date
    var revokedAt: Date?
    /// The RFC 9396 details of the approval; every refresh grants the same.
    var authorizationDetails: AuthorizationDetails? = nil

    /// Whether the approval of `grant` earns `client` a refresh token: it asked for
    /// `offline_access`, and its registration still allows that scope.
    static func isOffered(for grant: TokenGrant, to client: Client) -> Bool {
        grant.scope.contains(offlineAccessScope) && client.scopes.contains(offlineAccessScope)
    }
}

extension RefreshTokenFamily {
    /// A new family for the approval of `grant`.
    init(starting grant: TokenGrant, tenantID: String, at date: Date) {
        self.init(
            id: Identifier.make("rtf", at: date), tenantID: tenantID, clientID: grant.clientID, userID: grant.userID,
            scope: grant.scope, authTime: grant.authTime, acr: grant.context.acr, amr: grant.context.amr,
            createdAt: date, expiresAt: date.addingTimeInterval(Self.absoluteLifetime), revokedAt: nil,
            authorizationDetails: grant.authorizationDetails)
    }
}

/// One refresh token of a family, as stored: only the SHA-256 of its value is kept. A used
/// token stays, so that presenting it again is recognised as a replay.
struct RefreshToken: Sendable, Equatable {
    let id: String
    let familyID: String
    let tokenHash: Data
    let issuedAt: Date
    /// The idle expiry, never after the family's.
    let expiresAt: Date
    /// The `jti` and expiry of the access token issued with this refresh token.
    let accessTokenID: String
    let accessTokenExpiresAt: Date
    var usedAt: Date?
    var revokedAt: Date?

    /// Whether the token may no longer be used at `date`: its own expiry or its family's.
    func isExpired(at date: Date, in family: RefreshTokenFamily) -> Bool {
        date >= expiresAt || date >= family.expiresAt
    }
}

/// A refresh token about to be handed out: its value, shown once, and what to store for it.
struct NewRefreshToken: Sendable {
    /// The prefix marks the value as a Countersign refresh token for secret scanners.
    static let prefix = "csr_"

    let value: String
    let family: RefreshTokenFamily
    /// Whether `family` is new (the CIBA grant) rather than stored already (a refresh).
    let startsFamily: Bool

    init(in family: RefreshTokenFamily, startsFamily: Bool) {
        self.value = Secrets.generate(prefix: Self.prefix)
        self.family = family
        self.startsFamily = startsFamily
    }

    /// The stored form, once the access token issued beside it is known.
    func record(at date: Date, accessTokenID: String, accessTokenExpiresAt: Date) -> RefreshToken {
        RefreshToken(
            id: Identifier.make("rtk", at: date), familyID: family.id, tokenHash: Secrets.hash(value), issuedAt: date,
            expiresAt: min(date.addingTimeInterval(RefreshTokenFamily.idleLifetime), family.expiresAt),
            accessTokenID: accessTokenID, accessTokenExpiresAt: accessTokenExpiresAt, usedAt: nil, revokedAt: nil)
    }
}
