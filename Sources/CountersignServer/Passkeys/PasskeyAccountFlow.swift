import CountersignCore
import CountersignWebAuthn
import Foundation

/// The passkeys of the account page: add one (the page's script asks for creation options,
/// runs `navigator.credentials.create()` and posts the credential), rename and remove.
/// Adding and removing need a sign-in of the last ten minutes, as adding or removing a phone
/// does (`AccountFlow.freshSignIn`); the ceremony belongs to the session that started it.
struct PasskeyAccountFlow: Sendable {
    let account: AccountFlow
    let passkeys: PasskeyService

    typealias Visit = AccountFlow.Visit

    struct Options: Encodable {
        let ceremony: String
        let publicKey: PublicKeyCredentialCreationOptionsJSON
    }

    /// What the script posts after `create()`.
    struct Registration: Decodable {
        var csrf: String
        var ceremony: String
        var credential: RegistrationResponseJSON
    }

    struct Done: Encodable {
        let redirect: String
    }

    /// `POST /account/passkeys/options` (form: `csrf`, `name`): creation options for the user.
    func options(_ form: FormParameters, _ visit: Visit) async throws -> PageAnswer {
        let signedIn = try await freshlySignedIn(csrf: form["csrf"], visit)
        var name: String?
        if let typed = form["name"], !typed.trimmingCharacters(in: .whitespaces).isEmpty {
            guard let valid = DeviceName.validate(typed) else {
                throw AccountScriptError.invalidName(RenameRefusal(deviceID: "", typed: typed, thing: "passkey").message)
            }
            name = valid
        }
        let (ceremony, options) = try await passkeys.registrationOptions(
            for: signedIn.user, tenant: visit.tenant, binding: binding(signedIn), name: name)
        return try .json(Options(ceremony: ceremony, publicKey: options))
    }

    /// `POST /account/passkeys` (JSON): verifies the registration and stores the passkey.
    func add(_ registration: Registration, _ visit: Visit) async throws -> PageAnswer {
        let signedIn = try await freshlySignedIn(csrf: registration.csrf, visit)
        _ = try await passkeys.register(
            ceremony: registration.ceremony, response: registration.credential, tenant: visit.tenant,
            binding: binding(signedIn), actor: "user:\(signedIn.user.id)")
        return try .json(Done(redirect: account.signIn.base(visit) + "/account"))
    }

    /// `GET /account/passkeys/sign-in-again`: the sign-in that makes the session fresh enough
    /// to add a passkey, coming back to the account page.
    func signInAgain(_ visit: Visit) async throws -> PageAnswer {
        let user = try await account.signedIn(visit)?.user
        return try await account.signIn.beginAccountSignIn(visit, loginHint: user?.username)
    }

    /// `POST /account/passkeys/{id}/rename`.
    func rename(passkeyID: String, _ form: FormParameters, _ visit: Visit) async throws -> PageAnswer {
        guard let signedIn = try await account.fullyAuthorized(form, visit) else { return account.backToAccount(visit) }
        let passkey = try await own(passkeyID, of: signedIn, visit)
        let typed = form["name"] ?? ""
        guard let name = DeviceName.validate(typed) else {
            return try await account.accountPage(
                signedIn, visit, refusal: RenameRefusal(deviceID: passkey.id, typed: typed, thing: "passkey"),
                status: .badRequest)
        }
        try await account.passkeys.rename(passkey, to: name, actor: "user:\(signedIn.user.id)", at: account.now())
        return account.backToAccount(visit)
    }

    /// `POST /account/passkeys/{id}/remove`.
    func remove(passkeyID: String, _ form: FormParameters, _ visit: Visit) async throws -> PageAnswer {
        guard let signedIn = try await account.fullyAuthorized(form, visit) else { return account.backToAccount(visit) }
        let passkey = try await own(passkeyID, of: signedIn, visit)
        guard account.isFresh(signedIn) else {
            return try await account.signIn.beginAccountSignIn(visit, loginHint: signedIn.user.username)
        }
        guard try await account.passkeys.delete(passkey, actor: "user:\(signedIn.user.id)", at: account.now()) else {
            throw AccountError.unknownPasskey
        }
        return account.backToAccount(visit)
    }

    // MARK: - Parts

    private func freshlySignedIn(csrf: String?, _ visit: Visit) async throws -> AccountFlow.SignedIn {
        guard let signedIn = try await account.authorized(csrf: csrf, visit) else {
            throw AccountScriptError.signedOut(account.signIn.base(visit) + "/account")
        }
        guard account.isFresh(signedIn) else {
            throw AccountScriptError.staleSignIn(account.signIn.base(visit) + "/account/passkeys/sign-in-again")
        }
        return signedIn
    }

    private func own(_ id: String, of signedIn: AccountFlow.SignedIn, _ visit: Visit) async throws -> Passkey {
        guard let passkey = try await account.passkeys.passkey(id: id, tenantID: visit.tenant.id),
              passkey.userID == signedIn.user.id else {
            throw AccountError.unknownPasskey
        }
        return passkey
    }

    /// A ceremony of the account page belongs to the session that started it.
    private func binding(_ signedIn: AccountFlow.SignedIn) -> String {
        "session:" + signedIn.session.id
    }
}
