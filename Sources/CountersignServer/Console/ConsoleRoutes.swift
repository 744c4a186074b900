import Foundation
import Hummingbird

/// The console below each tenant's base (`/console`, `/t/<slug>/console`), server-rendered:
///
/// - `GET /console`: the dashboard, or the sign-in (`ConsoleFlow`) without a session;
///   `GET /console/callback` ends the sign-in; `POST /console/sign-out`;
/// - `GET|POST /console/users`, `GET /console/users/{id}` and the user's actions
///   (`ConsoleUsers`);
/// - `GET|POST /console/clients`, `GET|POST /console/clients/{id}`, its `/secret` and `/delete`
///   (`ConsoleClients`);
/// - `GET /console/devices?push=`, `POST /console/devices/{id}/remove` (`ConsoleDevices`);
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
    let clients: ConsoleClients
    let push: ConsolePush
    let devices: ConsoleDevices
    let policies: ConsolePolicies

    /// Each section works through the one flow: its sign-in, session and administration calls.
    init(flow: ConsoleFlow) {
        self.flow = flow
        users = ConsoleUsers(flow: flow)
        audit = ConsoleAudit(flow: flow)
        clients = ConsoleClients(flow: flow)
        push = ConsolePush(flow: flow)
        devices = ConsoleDevices(flow: flow)
        policies = ConsolePolicies(flow: flow)
    }

    func register(on routes: TenantRoutes) {
        let pages = routes.group("/console", surface: .page)
        pages.get("") { request, context in
            let visit = try visit(request, context)
            guard let session = flow.session(visit) else { return try await flow.signIn(visit) }
            return try await users.home(session, visit)
        }
        pages.get("/callback") { request, context in
            let visit = try visit(request, context)
            return try await withQuery(request, visit) { query in try await flow.callback(query, visit) }
        }
        pages.post("/sign-out") { request, context in
            try await flow.signOut(try await FormParameters.read(request), try visit(request, context))
        }
        pages.get("/users") { request, context in
            try await page(request, context) { session, visit in
                try await withQuery(request, visit) { query in try await users.list(query: query, session, visit) }
            }
        }
        pages.get("/audit") { request, context in
            try await page(request, context) { session, visit in
                try await withQuery(request, visit) { query in try await audit.page(query, session, visit) }
            }
        }
        pages.get("/audit/export") { request, context in
            try await page(request, context) { session, visit in
                try await withQuery(request, visit) { query in try await audit.export(query, session, visit) }
            }
        }
        pages.get("/devices") { request, context in
            try await page(request, context) { session, visit in
                try await withQuery(request, visit) { query in try await devices.list(query: query, session, visit) }
            }
        }
        pages.post("/devices/{id}/remove") { request, context in
            let id = try context.parameters.require("id")
            return try await form(request, context) { form, session, visit in
                try await devices.remove(deviceID: id, form, session, visit)
            }
        }
        pages.get("/policies") { request, context in
            try await page(request, context) { session, visit in try await policies.page(session, visit) }
        }
        pages.post("/policies") { request, context in
            try await form(request, context) { form, session, visit in try await policies.savePolicy(form, session, visit) }
        }
        pages.post("/policies/webhooks/{purpose}") { request, context in
            let purpose = try context.parameters.require("purpose")
            return try await form(request, context) { form, session, visit in
                try await policies.setWebhook(purpose, form, rotate: form["rotate_secret"] == "yes", session, visit)
            }
        }
        pages.post("/policies/webhooks/{purpose}/delete") { request, context in
            let purpose = try context.parameters.require("purpose")
            return try await form(request, context) { _, session, visit in try await policies.removeWebhook(purpose, session, visit) }
        }
        pages.get("/push") { request, context in
            try await page(request, context) { session, visit in
                try await withQuery(request, visit) { query in try await push.page(session, visit, query: query) }
            }
        }
        pages.get("/requests/{id}") { request, context in
            let id = try context.parameters.require("id")
            return try await page(request, context) { session, visit in try await push.request(id, session, visit) }
        }
        pages.post("/push/apns-token") { request, context in
            try await upload(request, context) { form, session, visit in try await push.setAPNsToken(form, session, visit) }
        }
        pages.post("/push/apns-certificate") { request, context in
            try await upload(request, context) { form, session, visit in try await push.setAPNsCertificate(form, session, visit) }
        }
        pages.post("/push/fcm") { request, context in
            try await upload(request, context) { form, session, visit in try await push.setFCM(form, session, visit) }
        }
        pages.post("/push/apns-token/delete") { request, context in
            try await form(request, context) { _, session, visit in try await push.remove("apns-token", session, visit) }
        }
        pages.post("/push/fcm/delete") { request, context in
            try await form(request, context) { _, session, visit in try await push.remove("fcm", session, visit) }
        }
        pages.post("/push/apns-certificates/{key}/delete") { request, context in
            let key = try context.parameters.require("key")
            return try await form(request, context) { _, session, visit in
                try await push.remove("apns-certificates/" + AuthorizationRedirect.encoded(key), session, visit)
            }
        }
        pages.get("/clients") { request, context in
            try await page(request, context) { session, visit in try await clients.list(session, visit) }
        }
        pages.post("/clients") { request, context in
            try await form(request, context) { form, session, visit in try await clients.create(form, session, visit) }
        }
        pages.get("/clients/{id}") { request, context in
            let id = try context.parameters.require("id")
            return try await page(request, context) { session, visit in try await clients.show(clientID: id, session, visit) }
        }
        pages.post("/clients/{id}") { request, context in
            let id = try context.parameters.require("id")
            return try await form(request, context) { form, session, visit in
                try await clients.update(clientID: id, form, session, visit)
            }
        }
        pages.post("/clients/{id}/secret") { request, context in
            let id = try context.parameters.require("id")
            return try await form(request, context) { _, session, visit in try await clients.rotateSecret(clientID: id, session, visit) }
        }
        pages.post("/clients/{id}/delete") { request, context in
            let id = try context.parameters.require("id")
            return try await form(request, context) { form, session, visit in
                try await clients.delete(clientID: id, form, session, visit)
            }
        }
        pages.post("/users") { request, context in
            try await form(request, context) { form, session, visit in try await users.create(form, session, visit) }
        }
        pages.get("/users/{id}") { request, context in
            let id = try context.parameters.require("id")
            return try await page(request, context) { session, visit in try await users.show(userID: id, session, visit) }
        }
        pages.post("/users/{id}/status") { request, context in
            let id = try context.parameters.require("id")
            return try await form(request, context) { form, session, visit in
                try await users.setStatus(userID: id, form, session, visit)
            }
        }
        pages.post("/users/{id}/delete") { request, context in
            let id = try context.parameters.require("id")
            return try await form(request, context) { form, session, visit in
                try await users.delete(userID: id, form, session, visit)
            }
        }
        pages.post("/users/{id}/factor-reset") { request, context in
            let id = try context.parameters.require("id")
            return try await form(request, context) { form, session, visit in
                try await users.resetFactors(userID: id, form, session, visit)
            }
        }
        pages.post("/users/{id}/request-suppression/delete") { request, context in
            let id = try context.parameters.require("id")
            return try await form(request, context) { _, session, visit in try await users.liftSuppression(userID: id, session, visit) }
        }
        pages.post("/users/{id}/user-code") { request, context in
            let id = try context.parameters.require("id")
            return try await form(request, context) { form, session, visit in
                try await users.setUserCode(userID: id, form, session, visit)
            }
        }
        pages.post("/users/{id}/invitations") { request, context in
            let id = try context.parameters.require("id")
            return try await form(request, context) { _, session, visit in try await users.invite(userID: id, session, visit) }
        }
        pages.post("/users/{id}/devices/{device}/remove") { request, context in
            let (id, device) = (try context.parameters.require("id"), try context.parameters.require("device"))
            return try await form(request, context) { _, session, visit in
                try await users.removeDevice(userID: id, deviceID: device, session, visit)
            }
        }
        pages.post("/users/{id}/passkeys/{passkey}/remove") { request, context in
            let (id, passkey) = (try context.parameters.require("id"), try context.parameters.require("passkey"))
            return try await form(request, context) { _, session, visit in
                try await users.removePasskey(userID: id, passkeyID: passkey, session, visit)
            }
        }
    }

    private func visit(_ request: Request, _ context: CountersignRequestContext) throws -> ConsoleFlow.Visit {
        ConsoleFlow.Visit(issuer: try context.tenantIssuer(), request: request, context: context)
    }

    /// The request's query, or the 400 page for one that is malformed (a parameter given twice,
    /// bad percent-encoding, a NUL).
    private func withQuery(_ request: Request, _ visit: ConsoleFlow.Visit,
                           _ body: (FormParameters) async throws -> Response) async throws -> Response {
        let query: FormParameters
        do {
            query = try SignInRoutes.query(request)
        } catch let error as AuthorizationPageError {
            return flow.refusal(visit, status: .badRequest, heading: "This page cannot be shown", message: error.message)
        }
        return try await body(query)
    }

    /// A page that needs a session: without one, the sign-in starts.
    private func page(_ request: Request, _ context: CountersignRequestContext,
                      _ body: (ConsoleSession, ConsoleFlow.Visit) async throws -> Response) async throws -> Response {
        let visit = try visit(request, context)
        guard let session = flow.session(visit) else { return try await flow.signIn(visit) }
        return try await signedOutIfRevoked(visit) { try await body(session, visit) }
    }

    /// A form that needs a session and its CSRF token.
    private func form(_ request: Request, _ context: CountersignRequestContext,
                      _ body: (FormParameters, ConsoleSession, ConsoleFlow.Visit) async throws -> Response) async throws -> Response {
        try await upload(request, context) { form, session, visit in try await body(form.fields, session, visit) }
    }

    /// A form that needs a session and its CSRF token, with the files it carries.
    private func upload(_ request: Request, _ context: CountersignRequestContext,
                        _ body: (ConsoleForm, ConsoleSession, ConsoleFlow.Visit) async throws -> Response) async throws -> Response {
        let visit = try visit(request, context)
        // The body is read only for a session: without one, nothing of it is parsed.
        guard let session = flow.session(visit) else {
            return flow.refusal(visit, status: .forbidden, heading: "Not signed in",
                                message: "Your console session has ended; nothing was changed. Sign in again.")
        }
        let form = try await ConsoleForm.read(request)
        guard flow.checkCSRF(form.fields, session) else {
            return flow.refusal(visit, status: .forbidden, heading: "This form cannot be accepted",
                                message: "The form did not come from this console session; nothing was changed.")
        }
        return try await signedOutIfRevoked(visit) { try await body(form, session, visit) }
    }

    /// A session whose key was revoked (signed out elsewhere, or by an administrator) is over:
    /// the console says so and forgets the cookie.
    private func signedOutIfRevoked(_ visit: ConsoleFlow.Visit, _ body: () async throws -> Response) async throws -> Response {
        do {
            return try await body()
        } catch is ConsoleFlow.SessionRevoked {
            return flow.refusal(
                visit, status: .unauthorized, heading: "Session ended",
                message: "This console session was ended; nothing was changed. Sign in again.",
                cookies: [flow.cookies.cookie(flow.cookies.sessionName(for: visit.tenant), "", maxAge: 0)])
        }
    }
}
