import Foundation

/// `GET` and `POST /userinfo` (OpenID Connect Core §5.3): the user an access token was issued
/// for, to the bearer of the token. The token must be valid now (`AccessTokenVerifier`) and its
/// scope must include `openid`. Claims by scope:
///
/// - always `sub`;
/// - with `profile`: `preferred_username` (the username) and `name` (the display name, when
///   the user has one). Countersign holds no other profile data, so the other claims of §5.4
///   are never returned.
///
/// The claims are read when asked, so a renamed user is seen under the new name at once.
struct UserInfo: Encodable, Sendable, Equatable {
    /// The scope value that releases the user's names (OpenID Connect Core §5.4).
    static let profileScope = "profile"

    let sub: String
    let preferredUsername: String?
    let name: String?

    enum CodingKeys: String, CodingKey {
        case sub, name
        case preferredUsername = "preferred_username"
    }

    init(of user: User, scope: [String]) {
        sub = user.id
        let profile = scope.contains(Self.profileScope)
        preferredUsername = profile ? user.username : nil
        name = profile ? user.displayName : nil
    }
}
