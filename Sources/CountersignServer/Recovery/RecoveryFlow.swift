import CountersignCore
import Foundation
import HTTPTypes

/// The sign-in without the phone, below each tenant's base (docs/recovery.md):
///
/// 1. `form` (`GET /account/recover`): the username and a field for a recovery code or a
///    temporary access pass, on an attempt of the account's own sign-in bound to this browser.
/// 2. `recover` (`POST /account/recover`): the check (`RecoveryService.check`); a right code
///    or pass opens a session for the account page alone, which offers a new phone or a passkey
///    and nothing else, and ends within 15 minutes.
///
/// A wrong code, an unknown username and a user without codes get the same answer, with the
/// tries left for that username; the field says why a malformed entry is not a code at all.
struct RecoveryFlow: Sendable {
    let signIn: SignInFlow
    let service: RecoveryService
    let users: @Sendable (_ username: String, _ tenantID: String) async throws -> User?

    typealias Visit = SignInFlow.Visit

    func form(_ parameters: FormParameters, _ visit: Visit) async throws -> PageAnswer {
        let (handle, cookie) = try await signIn.beginAttempt(
            signIn.accountRequest(visit), at: signIn.now(), visit)
        return .page("recover", RecoverPage(
            tenantName: visit.tenant.displayName, base: signIn.base(visit), attempt: handle,
            username: String((parameters["username"] ?? "").prefix(256))),
            cookies: cookie.map { [$0] } ?? [])
    }

    func recover(_ form: FormParameters, _ visit: Visit) async throws -> PageAnswer {
        let (handle, attempt) = try await signIn.openAttempt(form, visit)
        guard attempt.clientID == SignInFlow.accountClientID else { throw SignInError.unusable }
        let username = (form["username"] ?? "").trimmingCharacters(in: .whitespaces)
        let typed = form["code"] ?? ""
        func again(usernameError: String? = nil, codeError: String? = nil,
                   status: HTTPResponse.Status = .badRequest) -> PageAnswer {
            .page("recover", RecoverPage(
                tenantName: visit.tenant.displayName, base: signIn.base(visit), attempt: handle, username: username,
                usernameError: usernameError, codeError: codeError), status: status)
        }
        guard !username.isEmpty, username.count <= 256 else {
            return again(usernameError: username.isEmpty ? "Enter your username." : "A username is at most 256 characters.")
        }
        guard !typed.trimmingCharacters(in: .whitespaces).isEmpty else {
            return again(codeError: "Enter a recovery code or a temporary access pass.")
        }
        let user = try await users(username, visit.tenant.id)
        switch try await service.check(
            typed, username: username, user: user, tenantID: visit.tenant.id, address: visit.remoteAddress) {
        case .malformed:
            return again(codeError: "This is neither a recovery code (12 letters and digits, like 7kq2-m9xd-4hfp) nor a temporary access pass (16 of them).")
        case .refused(let left):
            return again(codeError: left == 0
                ? "The username or code is not right. No tries are left: wait 15 minutes before the next."
                : "The username or code is not right. \(left) \(left == 1 ? "try is" : "tries are") left.")
        case .throttled(let seconds):
            return again(codeError: "Too many wrong codes were tried for this username or from this network. Try again in \(SignInFlow.minutes(seconds)).",
                         status: .tooManyRequests)
        case .outsideNetworks:
            return again(codeError: "This temporary access pass cannot be used from the network you are on. Ask your administrator.",
                         status: .forbidden)
        case .signedIn(let authenticator, let context):
            guard let user, let client = try await signIn.client(of: attempt, visit) else { throw SignInError.unusable }
            guard let done = try await signIn.complete(
                attempt, client: client, user: user, authTime: signIn.now(), context: context,
                authenticator: authenticator, visit) else {
                throw SignInError.completed
            }
            return .redirect(to: done.location, cookies: done.cookies)
        }
    }
}

/// `recover`: the sign-in with a recovery code or a temporary access pass.
struct RecoverPage: PageModel {
    let title = "Sign in without your phone"
    let tenantName: String
    let script: String? = nil
    let base: String
    let attempt: String
    let username: String
    var usernameError: String? = nil
    var codeError: String? = nil
    /// Whether a username is filled in, so the code field takes the focus. (Mustache takes an
    /// empty string for true.)
    let hasUsername: Bool

    init(tenantName: String, base: String, attempt: String, username: String, usernameError: String? = nil,
         codeError: String? = nil) {
        (self.tenantName, self.base, self.attempt, self.username) = (tenantName, base, attempt, username)
        (self.usernameError, self.codeError) = (usernameError, codeError)
        hasUsername = !username.isEmpty
    }
}
