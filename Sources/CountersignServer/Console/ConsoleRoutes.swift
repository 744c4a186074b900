import Foundation
import Hummingbird

/// The console below each tenant's base (`/console`, `/t/<slug>/console`), server-rendered:
///
/// - `GET /console`: the dashboard, or the sign-in (`ConsoleFlow`) without a session;
///   `GET /console/callback` ends the sign-in; `POST /console/sign-out`;
/// - `GET|POST /console/users`, `GET /console/users/{id}` and the user's actions, their console
///   role among them (`POST /console/users/{id}/console-role`) (`ConsoleUsers`);
/// - `GET|POST /console/groups`, `GET|POST /console/groups/{id}`, its `/delete`, `/members` and
///   `/members/{user}/remove` (`ConsoleGroups`);
/// - `GET|POST /console/clients`, `GET|POST /console/clients/{id}`, its `/secret` and `/delete`
///   (`ConsoleClients`);
/// - `GET|POST /console/radius-clients`, `GET|POST /console/radius-clients/{id}`, its `/secret` and
///   `/delete` (`ConsoleRADIUSClients`);
/// - `GET|POST /console/directory`, its `/test`, `/preview`, `/sync` and `/delete`
/// - `GET|POST /console/mail`, its `/test` and `/delete`
///   (`ConsoleDirectory`);
/// - `GET /console/devices?push=`, `POST /console/devices/{id}/remove` (`ConsoleDevices`);
/// - `GET /console/passkeys?cursor=`, `POST /console/passkeys/{user}/{passkey}/revoke` (`ConsolePasskeys`);
/// - `GET|POST /console/policies`, a webhook's `POST /console/policies/webhooks/{purpose}` and its
///   `/delete` (`ConsolePolicies`);
/// - `GET /console/push?status=`, setting an APNs token key, an APNs certificate (`/push/apns-certificate`)
///   or an FCM account, removing one, and `GET /console/requests/{id}`, one request's deliveries
///   (`ConsolePush`);
/// - `GET /console/audit` and `GET /console/audit/export?format=csv|jsonl` (`ConsoleAudit`).
///
/// A page asked for without a session starts the sign-in; a form posted without one, or
/// without the session's CSRF token, is refused with 403 and changes nothing.
struct ConsoleRoutes: Sendable {
    let flow: ConsoleFlow
    let users: ConsoleUsers
    let audit: ConsoleAudit
    let groups: ConsoleGroups
    let clients: ConsoleClients
    let radiusClients: ConsoleRADIUSClients
    let directory: ConsoleDirectory
    let mail: ConsoleMail
    let push: ConsolePush
    let devices: ConsoleDevices
    let passkeys: ConsolePasskeys
    let policies: ConsolePolicies

    /// Each section works through the one flow: its sign-in, session and administration calls.
    init(flow: ConsoleFlow) {
        self.flow = flow
        users = ConsoleUsers(flow: flow)
        audit = ConsoleAudit(flow: flow)
        groups = ConsoleGroups(flow: flow)
        clients = ConsoleClients(flow: flow)
        radiusClients = ConsoleRADIUSClients(flow: flow)
        directory = ConsoleDirectory(flow: flow)
        mail = ConsoleMail(flow: flow)
        push = ConsolePush(flow: flow)
        devices = ConsoleDevices(flow: flow)
        passkeys = ConsolePasskeys(flow: flow)
        policies = ConsolePolicies(flow: flow)
    }

    typealias Visit = ConsoleFlow.Visit
    typealias Group = RouterGroup<CountersignRequestContext>

    func register(on routes: TenantRoutes) {
        let pages = routes.group("/console", surface: .console)
        pages.get("") { request, context in
            try await page(request, context) { session, visit in try await users.home(session, visit) }
        }
        pages.get("/callback") { request, context in
            try await flow.callback(try FormParameters.query(of: request), try visit(request, context))
        }
        pages.post("/sign-out") { request, context in
            try await flow.signOut(try await FormParameters.read(request), try visit(request, context))
        }

        getWithQuery(pages, "/users") { query, session, visit in try await users.list(query: query, session, visit) }
        post(pages, "/users") { _, form, session, visit in try await users.create(form, session, visit) }
        get(pages, "/users/{id}") { path, session, visit in try await users.show(userID: path.require("id"), session, visit) }
        post(pages, "/users/{id}/status") { path, form, session, visit in
            try await users.setStatus(userID: path.require("id"), form, session, visit)
        }
        post(pages, "/users/{id}/delete") { path, form, session, visit in
            try await users.delete(userID: path.require("id"), form, session, visit)
        }
        post(pages, "/users/{id}/factor-reset") { path, form, session, visit in
            try await users.resetFactors(userID: path.require("id"), form, session, visit)
        }
        post(pages, "/users/{id}/request-suppression/delete") { path, _, session, visit in
            try await users.liftSuppression(userID: path.require("id"), session, visit)
        }
        post(pages, "/users/{id}/user-code") { path, form, session, visit in
            try await users.setUserCode(userID: path.require("id"), form, session, visit)
        }
        post(pages, "/users/{id}/email") { path, form, session, visit in
            try await users.setEmail(userID: path.require("id"), form, session, visit)
        }
        post(pages, "/users/{id}/console-role") { path, form, session, visit in
            try await users.setConsoleRole(userID: path.require("id"), form, session, visit)
        }
        post(pages, "/users/{id}/recovery-codes/revoke") { path, _, session, visit in
            try await users.revokeRecoveryCodes(userID: path.require("id"), session, visit)
        }
        post(pages, "/users/{id}/access-passes") { path, form, session, visit in
            try await users.issueAccessPass(userID: path.require("id"), form, session, visit)
        }
        post(pages, "/users/{id}/access-passes/{pass}/revoke") { path, _, session, visit in
            try await users.revokeAccessPass(userID: path.require("id"), passID: path.require("pass"), session, visit)
        }
        post(pages, "/users/{id}/invitations") { path, form, session, visit in
            try await users.invite(userID: path.require("id"), form, session, visit)
        }
        post(pages, "/users/{id}/devices/{device}/remove") { path, _, session, visit in
            try await users.removeDevice(userID: path.require("id"), deviceID: path.require("device"), session, visit)
        }
        post(pages, "/users/{id}/passkeys/{passkey}/remove") { path, _, session, visit in
            try await users.removePasskey(userID: path.require("id"), passkeyID: path.require("passkey"), session, visit)
        }
        post(pages, "/users/{id}/remembered-browsers/{browser}/forget") { path, _, session, visit in
            try await users.forgetBrowser(userID: path.require("id"), browserID: path.require("browser"), session, visit)
        }

        getWithQuery(pages, "/groups") { query, session, visit in try await groups.list(query: query, session, visit) }
        post(pages, "/groups") { _, form, session, visit in try await groups.create(form, session, visit) }
        pages.get("/groups/{id}") { request, context in
            try await page(request, context) { session, visit in
                try await groups.show(groupID: context.parameters.require("id"), query: try FormParameters.query(of: request),
                                      session, visit)
            }
        }
        post(pages, "/groups/{id}") { path, form, session, visit in
            try await groups.rename(groupID: path.require("id"), form, session, visit)
        }
        post(pages, "/groups/{id}/delete") { path, form, session, visit in
            try await groups.delete(groupID: path.require("id"), form, session, visit)
        }
        post(pages, "/groups/{id}/members") { path, form, session, visit in
            try await groups.addMember(groupID: path.require("id"), form, session, visit)
        }
        post(pages, "/groups/{id}/members/{user}/remove") { path, _, session, visit in
            try await groups.removeMember(groupID: path.require("id"), userID: path.require("user"), session, visit)
        }

        getWithQuery(pages, "/devices") { query, session, visit in try await devices.list(query: query, session, visit) }
        post(pages, "/devices/{id}/remove") { path, form, session, visit in
            try await devices.remove(deviceID: path.require("id"), form, session, visit)
        }

        getWithQuery(pages, "/passkeys") { query, session, visit in try await passkeys.list(query: query, session, visit) }
        post(pages, "/passkeys/{user}/{passkey}/revoke") { path, _, session, visit in
            try await passkeys.revoke(userID: path.require("user"), passkeyID: path.require("passkey"), session, visit)
        }

        get(pages, "/clients") { _, session, visit in try await clients.list(session, visit) }
        post(pages, "/clients") { _, form, session, visit in try await clients.create(form, session, visit) }
        get(pages, "/clients/{id}") { path, session, visit in try await clients.show(clientID: path.require("id"), session, visit) }
        post(pages, "/clients/{id}") { path, form, session, visit in
            try await clients.update(clientID: path.require("id"), form, session, visit)
        }
        post(pages, "/clients/{id}/secret") { path, _, session, visit in
            try await clients.rotateSecret(clientID: path.require("id"), session, visit)
        }
        post(pages, "/clients/{id}/delete") { path, form, session, visit in
            try await clients.delete(clientID: path.require("id"), form, session, visit)
        }

        get(pages, "/radius-clients") { _, session, visit in try await radiusClients.list(session, visit) }
        post(pages, "/radius-clients") { _, form, session, visit in try await radiusClients.create(form, session, visit) }
        get(pages, "/radius-clients/{id}") { path, session, visit in
            try await radiusClients.show(clientID: path.require("id"), session, visit)
        }
        post(pages, "/radius-clients/{id}") { path, form, session, visit in
            try await radiusClients.update(clientID: path.require("id"), form, session, visit)
        }
        post(pages, "/radius-clients/{id}/secret") { path, _, session, visit in
            try await radiusClients.rotateSecret(clientID: path.require("id"), session, visit)
        }
        post(pages, "/radius-clients/{id}/delete") { path, form, session, visit in
            try await radiusClients.delete(clientID: path.require("id"), form, session, visit)
        }

        get(pages, "/mail") { _, session, visit in try await mail.page(session, visit) }
        post(pages, "/mail") { _, form, session, visit in try await mail.save(form, session, visit) }
        post(pages, "/mail/test") { _, form, session, visit in try await mail.test(form, session, visit) }
        post(pages, "/mail/delete") { _, form, session, visit in try await mail.delete(form, session, visit) }
        get(pages, "/directory") { _, session, visit in try await directory.page(session, visit) }
        post(pages, "/directory") { _, form, session, visit in try await directory.save(form, session, visit) }
        post(pages, "/directory/test") { _, _, session, visit in try await directory.test(session, visit) }
        post(pages, "/directory/preview") { _, _, session, visit in try await directory.sync(dryRun: true, session, visit) }
        post(pages, "/directory/sync") { _, _, session, visit in try await directory.sync(dryRun: false, session, visit) }
        post(pages, "/directory/delete") { _, form, session, visit in try await directory.delete(form, session, visit) }

        getWithQuery(pages, "/push") { query, session, visit in try await push.page(session, visit, query: query) }
        upload(pages, "/push/apns-token") { upload, session, visit in try await push.setAPNsToken(upload, session, visit) }
        upload(pages, "/push/apns-certificate") { upload, session, visit in try await push.setAPNsCertificate(upload, session, visit) }
        upload(pages, "/push/fcm") { upload, session, visit in try await push.setFCM(upload, session, visit) }
        post(pages, "/push/apns-token/delete") { _, _, session, visit in try await push.remove("apns-token", session, visit) }
        post(pages, "/push/fcm/delete") { _, _, session, visit in try await push.remove("fcm", session, visit) }
        post(pages, "/push/apns-certificates/{key}/delete") { path, _, session, visit in
            try await push.remove("apns-certificates/" + AuthorizationRedirect.encoded(path.require("key")), session, visit)
        }
        get(pages, "/requests/{id}") { path, session, visit in try await push.request(path.require("id"), session, visit) }

        get(pages, "/policies") { _, session, visit in try await policies.page(session, visit) }
        post(pages, "/policies") { _, form, session, visit in try await policies.savePolicy(form, session, visit) }
        post(pages, "/policies/webhooks/{purpose}") { path, form, session, visit in
            try await policies.setWebhook(path.require("purpose"), form, rotate: form["rotate_secret"] == "yes", session, visit)
        }
        post(pages, "/policies/webhooks/{purpose}/delete") { path, _, session, visit in
            try await policies.removeWebhook(path.require("purpose"), session, visit)
        }

        getWithQuery(pages, "/audit") { query, session, visit in try await audit.page(query, session, visit) }
        getWithQuery(pages, "/audit/export") { query, session, visit in try await audit.export(query, session, visit) }
    }

    /// A page at `path` that needs a session, given its path parameters.
    private func get(_ pages: Group, _ path: RouterPath,
                     _ body: @escaping @Sendable (Parameters, ConsoleSession, Visit) async throws -> PageAnswer) {
        pages.get(path) { request, context in
            try await page(request, context) { session, visit in try await body(context.parameters, session, visit) }
        }
    }

    /// A page at `path` that needs a session and reads its query: a malformed one is the 400 page
    /// (`FormError`).
    private func getWithQuery(_ pages: Group, _ path: RouterPath,
                              _ body: @escaping @Sendable (FormParameters, ConsoleSession, Visit) async throws -> PageAnswer) {
        pages.get(path) { request, context in
            try await page(request, context) { session, visit in
                try await body(try FormParameters.query(of: request), session, visit)
            }
        }
    }

    /// A form at `path` that needs a session and its CSRF token, given its path parameters.
    private func post(_ pages: Group, _ path: RouterPath,
                      _ body: @escaping @Sendable (Parameters, FormParameters, ConsoleSession, Visit) async throws -> PageAnswer) {
        pages.post(path) { request, context in
            try await upload(request, context) { form, session, visit in try await body(context.parameters, form.fields, session, visit) }
        }
    }

    /// A form at `path` that carries files.
    private func upload(_ pages: Group, _ path: RouterPath,
                        _ body: @escaping @Sendable (ConsoleForm, ConsoleSession, Visit) async throws -> PageAnswer) {
        pages.post(path) { request, context in try await upload(request, context, body) }
    }

    private func visit(_ request: Request, _ context: CountersignRequestContext) throws -> ConsoleFlow.Visit {
        ConsoleFlow.Visit(issuer: try context.tenantIssuer(), request: request, context: context)
    }

    /// A page that needs a session: without one, or with one whose key was revoked (signed
    /// out elsewhere, or by an administrator), the sign-in starts and the cookie is forgotten.
    private func page(_ request: Request, _ context: CountersignRequestContext,
                      _ body: (ConsoleSession, ConsoleFlow.Visit) async throws -> PageAnswer) async throws -> PageAnswer {
        let visit = try visit(request, context)
        guard let session = flow.session(visit) else { return try await flow.signIn(visit) }
        do {
            return try await body(session, visit)
        } catch is ConsoleFlow.SessionRevoked {
            return try await flow.signIn(visit).setting([flow.cookies.cookie(flow.cookies.sessionName(for: visit.tenant), "", maxAge: 0)])
        }
    }

    /// A form that needs a session and its CSRF token, with the files it carries.
    private func upload(_ request: Request, _ context: CountersignRequestContext,
                        _ body: (ConsoleForm, ConsoleSession, ConsoleFlow.Visit) async throws -> PageAnswer) async throws -> PageAnswer {
        let visit = try visit(request, context)
        // The body is read only for a session: without one, nothing of it is parsed.
        guard let session = flow.session(visit) else {
            throw ConsoleRefusal(status: .forbidden, heading: "Not signed in",
                                 message: "Your console session has ended; nothing was changed. Sign in again.")
        }
        let form = try await ConsoleForm.read(request)
        guard flow.checkCSRF(form.fields, session) else {
            throw ConsoleRefusal(status: .forbidden, heading: "This form cannot be accepted",
                                 message: "The form did not come from this console session; nothing was changed.")
        }
        return try await signedOutIfRevoked(visit) { try await body(form, session, visit) }
    }

    /// A session whose key was revoked (signed out elsewhere, or by an administrator) is over:
    /// the console says so and forgets the cookie.
    private func signedOutIfRevoked(_ visit: ConsoleFlow.Visit, _ body: () async throws -> PageAnswer) async throws -> PageAnswer {
        do {
            return try await body()
        } catch is ConsoleFlow.SessionRevoked {
            throw ConsoleRefusal(
                status: .unauthorized, heading: "Session ended",
                message: "This console session was ended; nothing was changed. Sign in again.",
                cookies: [flow.cookies.cookie(flow.cookies.sessionName(for: visit.tenant), "", maxAge: 0)])
        }
    }
}
