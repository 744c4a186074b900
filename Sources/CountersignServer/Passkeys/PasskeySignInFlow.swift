import CountersignCore
import CountersignWebAuthn
import Foundation
import Hummingbird

/// "Sign in with a passkey" on the hosted sign-in page: the page's script asks for request
/// options for its attempt, runs `navigator.credentials.get()`, and posts the credential back;
/// a verified assertion ends the attempt as an approval on the phone would, with the passkey's
/// `acr` and `amr`. The ceremony belongs to the browser that began the attempt.
struct PasskeySignInFlow: Sendable {
    let signIn: SignInFlow
    let passkeys: PasskeyService

    /// What the script posts after `get()`.
    struct Assertion: Decodable {
        var attempt: String
        var ceremony: String
        var credential: AuthenticationResponseJSON
    }

    struct Options: Encodable {
        let ceremony: String
        let publicKey: PublicKeyCredentialRequestOptionsJSON
    }

    struct Done: Encodable {
        let redirect: String
    }

    /// `POST /authorize/passkey/options`: usernameless request options for the form's attempt.
    /// A sign-in that a passkey without user verification could not answer (one that asks for
    /// the passkey class, or needs more than a confirmation) requires user verification,
    /// whatever the tenant prefers, so that the authenticator asks for it up front. A sign-in
    /// whose class the policy lets no passkey reach is refused (403 `access_denied`).
    func options(_ form: FormParameters, _ visit: SignInFlow.Visit) async throws -> PageAnswer {
        let (_, attempt) = try await signIn.openAttempt(form, visit)
        guard let client = try await signIn.client(of: attempt, visit) else {
            throw APIError.badRequest("the client of this sign-in no longer exists")
        }
        let requirement = SignInRequirement(acrValues: attempt.request.acrValues, client: client, policy: visit.tenant.policy)
        // With passkeys switched off the service's own refusal says so.
        guard requirement.passkey || !visit.tenant.policy.passkeys.enabled else { throw PasskeyError.notAccepted }
        let (ceremony, options) = try await passkeys.authenticationOptions(
            tenant: visit.tenant, binding: binding(attempt), attempt: attempt.handleHash.base64URLEncodedString,
            userVerification: requirement.presenceIsEnough ? nil : .required)
        return try .json(Options(ceremony: ceremony, publicKey: options))
    }

    /// `POST /authorize/passkey`: verifies the assertion and completes the sign-in, answering
    /// where the browser goes next.
    func finish(_ assertion: Assertion, _ visit: SignInFlow.Visit) async throws -> PageAnswer {
        let (_, attempt) = try await signIn.openAttempt(handle: assertion.attempt, visit)
        guard let client = try await signIn.client(of: attempt, visit) else {
            throw APIError.badRequest("the client of this sign-in no longer exists")
        }
        let requirement = SignInRequirement(acrValues: attempt.request.acrValues, client: client, policy: visit.tenant.policy)
        guard requirement.passkey || !visit.tenant.policy.passkeys.enabled else { throw PasskeyError.notAccepted }
        let result = try await passkeys.authenticate(
            ceremony: assertion.ceremony, response: assertion.credential, tenant: visit.tenant, binding: binding(attempt),
            attempt: attempt.handleHash.base64URLEncodedString,
            accepts: requirement.accepts(passkeyClass:))
        guard let user = try await signIn.store.user(id: result.userID, tenantID: visit.tenant.id) else {
            throw PasskeyError.accountDisabled
        }
        guard let done = try await signIn.complete(
            attempt, client: client, user: user, authTime: signIn.now(), context: result.context,
            authenticator: .passkey(result.passkey.id), visit)
        else { throw SignInError.completed }
        return try .json(Done(redirect: done.location), cookies: done.cookies)
    }

    /// A sign-in's ceremonies belong to the browser that began it: its mark's hash, as the
    /// attempt holds it.
    func binding(_ attempt: SignInAttempt) -> String {
        "browser:" + attempt.browserHash.base64URLEncodedString
    }
}

/// The JSON the passkey script posts. A body that is not the JSON form a ceremony expects (an
/// assertion posted for a registration, a member missing or not base64url) is a malformed
/// response in WebAuthn's terms, with the member named.
enum PasskeyRequestBody {
    static let limit = 64 * 1024

    static func decode<T: Decodable>(_ type: T.Type, from request: Request) async throws -> T {
        do {
            return try await request.decodeJSON(T.self, limit: limit)
        } catch let error as APIError where error.status == .badRequest {
            throw WebAuthnError.malformedResponse(error.message)
        }
    }
}
