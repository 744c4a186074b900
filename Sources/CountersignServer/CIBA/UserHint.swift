import Foundation

/// Who the request is for (CIBA §7.1): exactly one of `login_hint`, `id_token_hint` and
/// `login_hint_token`.
///
/// - `login_hint`: the user's id or, failing that, username in the tenant.
/// - `id_token_hint`: an ID token this tenant issued to this client (see `IDTokenHint`).
/// - `login_hint_token`: a JWT the client signed, naming the user (see `LoginHintToken`).
enum UserHint: Sendable, Equatable {
    case loginHint(String)
    case idTokenHint(String)
    case loginHintToken(String)

    init(_ parameters: some RequestParameters) throws {
        let given = ["login_hint", "id_token_hint", "login_hint_token"].filter { parameters.contains($0) }
        guard given.count <= 1 else { throw BackchannelAuthenticationError.severalHints }
        if let loginHint = parameters["login_hint"] {
            self = .loginHint(loginHint)
        } else if let idTokenHint = parameters["id_token_hint"] {
            self = .idTokenHint(idTokenHint)
        } else if let token = parameters["login_hint_token"] {
            self = .loginHintToken(token)
        } else {
            throw BackchannelAuthenticationError.missingHint
        }
    }
}

/// Finds the user a hint names, within the tenant.
struct UserHintResolver: Sendable {
    let store: any UserHintStore
    let signingKeys: TokenSigningKeys
    let now: @Sendable () -> Date

    func user(for hint: UserHint, client: Client, issuer: Issuer) async throws -> User {
        let found: User?
        switch hint {
        case .loginHint(let hint):
            found = try await user(named: hint, tenantID: issuer.tenant.id)
        case .idTokenHint(let token):
            let keys = try await signingKeys.keySet(for: issuer.tenant)
            let subject = try await IDTokenHint(token, keys: keys, issuer: issuer.identifier, clientID: client.id).subject
            found = try await store.user(id: subject, tenantID: issuer.tenant.id)
        case .loginHintToken(let token):
            switch try await LoginHintToken(token, client: client, issuer: issuer.identifier, at: now()).subject {
            case .loginHint(let hint):
                found = try await user(named: hint, tenantID: issuer.tenant.id)
            case .userID(let id):
                found = try await store.user(id: id, tenantID: issuer.tenant.id)
            }
        }
        guard let found else { throw BackchannelAuthenticationError.unknownUser }
        // A client for some groups only (`allowed_groups`) asks for their members alone.
        if !client.allowedGroups.isEmpty,
           try await store.groupIDs(userID: found.id).isDisjoint(with: client.allowedGroups) {
            throw BackchannelAuthenticationError.userNotAllowed
        }
        return found
    }

    /// A user by id, or failing that by username.
    private func user(named hint: String, tenantID: String) async throws -> User? {
        try await store.user(idOrUsername: hint, tenantID: tenantID)
    }
}
