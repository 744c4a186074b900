import Foundation

/// Ends a refresh token family: the family, every token of it, and the unexpired access tokens
/// issued with them, recorded in the tenant's audit log. Two causes: the client asked
/// (`POST /revoke`), or a used token came back, which means that two parties hold tokens of
/// the grant and the server cannot tell which is the client (RFC 9700, the OAuth 2.0 Security
/// Best Current Practice, §4.14): all of them stop working, and the user must approve again.
/// A reuse found while a token is being rotated is revoked within that rotation's transaction
/// (`RefreshTokenStore.rotate`).
struct RefreshTokenFamilyRevocation: Sendable {
    enum Cause: String, Sendable {
        case revocationRequest = "revocation_request"
        case reuse = "reuse"

        var action: String {
            switch self {
            case .revocationRequest: "refresh_token.revoked"
            case .reuse: "refresh_token.reused"
            }
        }
    }

    let store: any RefreshTokenFamilyRevocationStore

    /// Revokes `family` in a transaction of its own; a family revoked already is left as it is
    /// and not recorded twice.
    func revoke(_ family: RefreshTokenFamily, cause: Cause, client: Client, at date: Date) async throws {
        try await store.revoke(family, cause: cause, byClient: client.id, at: date)
    }
}
