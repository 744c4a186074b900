/// Who the request is for (CIBA §7.1): exactly one of `login_hint`, `id_token_hint` and
/// `login_hint_token`.
///
/// - `login_hint`: the user's id or, failing that, username in the tenant.
/// - `id_token_hint`: an ID token this tenant issued to this client (see `IDTokenHint`).
/// - `login_hint_token` is not supported: its format is defined by each deployment, and
///   Countersign defines none. It is refused with `invalid_request` rather than ignored, so
///   a client never believes it named a user it did not.
enum UserHint: Sendable, Equatable {
    case loginHint(String)
    case idTokenHint(String)

    init(_ form: FormParameters) throws {
        let given = ["login_hint", "id_token_hint", "login_hint_token"].filter(form.contains)
        guard given.count <= 1 else { throw BackchannelAuthenticationError.severalHints }
        if let loginHint = form["login_hint"] {
            self = .loginHint(loginHint)
        } else if let idTokenHint = form["id_token_hint"] {
            self = .idTokenHint(idTokenHint)
        } else if form.contains("login_hint_token") {
            throw BackchannelAuthenticationError.loginHintTokenUnsupported
        } else {
            throw BackchannelAuthenticationError.missingHint
        }
    }
}

/// Finds the user a hint names, within the tenant.
struct UserHintResolver: Sendable {
    let services: ServerServices

    func user(for hint: UserHint, client: Client, issuer: Issuer) async throws -> User {
        let users = services.repositories.users
        let tenantID = issuer.tenant.id
        let found: User?
        switch hint {
        case .loginHint(let hint):
            if let user = try await users.find(id: hint, tenantID: tenantID, on: services.database) {
                found = user
            } else {
                found = try await users.find(username: hint, tenantID: tenantID, on: services.database)
            }
        case .idTokenHint(let token):
            let keys = try await services.tokenSigningKeys.keySet(for: issuer.tenant)
            let subject = try IDTokenHint(token, keys: keys, issuer: issuer.identifier, clientID: client.id).subject
            found = try await users.find(id: subject, tenantID: tenantID, on: services.database)
        }
        guard let found else { throw BackchannelAuthenticationError.unknownUser }
        return found
    }
}
