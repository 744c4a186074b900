import Foundation
import Hummingbird

/// The hosted pages below each tenant's base (`SignInFlow`), and the files they link at
/// `/assets/…`:
///
/// - `GET|POST /authorize`: the authorization endpoint;
/// - `POST /authorize/sign-in`, `/authorize/wait`, `/authorize/continue`: the steps of a sign-in;
/// - `POST /authorize/passkey/options`, `/authorize/passkey`: a sign-in with a passkey
///   (`PasskeySignInFlow`), called by the page's script;
/// - `GET|POST /logout`: the end-session endpoint;
/// - `GET /invitation`, `POST /invitation/wait`, `POST /invitation/sign-in`: an enrollment
///   invitation (`InvitationFlow`).
///
/// A page's failure is a page: an attempt that cannot continue, a malformed form, and any fault
/// of the server are shown as error pages (`ErrorSurface.page`), never as JSON.
struct SignInRoutes: Sendable {
    let flow: SignInFlow
    let invitations: InvitationFlow
    let passkeys: PasskeySignInFlow

    func register(on routes: TenantRoutes) {
        let pages = routes.group(surface: .page)
        pages.get("/authorize") { request, context in
            let visit = try visit(request, context)
            do {
                return try await flow.authorize(try Self.query(request), visit)
            } catch let error as AuthorizationPageError {
                return flow.errorPage(error.message, code: error.code, visit)
            }
        }
        pages.post("/authorize") { request, context in
            try await page(request, context) { form, visit in try await flow.authorize(form, visit) }
        }
        pages.post("/authorize/sign-in") { request, context in
            try await page(request, context) { form, visit in try await flow.signIn(form, visit) }
        }
        pages.post("/authorize/continue") { request, context in
            try await page(request, context) { form, visit in try await flow.proceed(form, visit) }
        }
        pages.post("/authorize/wait") { request, context in
            let visit = try visit(request, context)
            do {
                return try await flow.wait(try await FormParameters.read(request), visit)
            } catch let error as SignInError {
                // The script submits the form on any answer but `pending`, and the page then
                // says what went wrong.
                return try JSON.response(["state": "closed", "reason": "\(error)"], status: .badRequest)
            }
        }
        // The passkey button's script talks JSON: its failures are JSON too, with the
        // WebAuthn step that refused, for the page to show beside the button.
        let script = routes.group(surface: .api)
        script.post("/authorize/passkey/options") { request, context in
            let visit = try visit(request, context)
            return try await Self.json { try await passkeys.options(try await FormParameters.read(request), visit) }
        }
        script.post("/authorize/passkey") { request, context in
            let visit = try visit(request, context)
            return try await Self.json {
                try await passkeys.finish(try await PasskeyRequestBody.decode(PasskeySignInFlow.Assertion.self, from: request), visit)
            }
        }
        pages.get("/invitation") { request, context in
            let visit = try visit(request, context)
            do {
                return try await invitations.show(try Self.query(request), visit)
            } catch let error as AuthorizationPageError {
                return flow.errorPage(error.message, code: error.code, visit)
            }
        }
        pages.post("/invitation/wait") { request, context in
            let visit = try visit(request, context)
            do {
                return try await invitations.wait(try await FormParameters.read(request), visit)
            } catch let error as EnrollmentError {
                return try JSON.response(["state": "refused", "reason": error.apiError.message], status: .badRequest)
            }
        }
        pages.post("/invitation/sign-in") { request, context in
            try await page(request, context) { form, visit in try await invitations.startSignIn(form, visit) }
        }
        pages.get("/logout") { request, context in
            let visit = try visit(request, context)
            do {
                return try await flow.logout(try Self.query(request), posted: false, visit)
            } catch let error as AuthorizationPageError {
                return flow.errorPage(error.message, code: error.code, visit)
            }
        }
        pages.post("/logout") { request, context in
            try await flow.logout(try await FormParameters.read(request), posted: true, try visit(request, context))
        }
    }

    /// `/assets/<name>`: the stylesheet and script, the same for every tenant.
    static func registerAssets(on router: Router<CountersignRequestContext>) {
        router.get("/assets/{name}") { _, context in
            guard let name = context.parameters.get("name"), let file = PageAssets.files[name] else {
                throw APIError.notFound("there is no asset of that name")
            }
            return Response(
                status: .ok,
                headers: [.contentType: file.type, .cacheControl: "public, max-age=86400", .xContentTypeOptions: "nosniff"],
                body: .init(byteBuffer: ByteBuffer(string: file.body)))
        }
    }

    /// Runs a step the page's script calls; an attempt it cannot use is a JSON error.
    static func json(_ step: () async throws -> Response) async throws -> Response {
        do {
            return try await step()
        } catch let error as SignInError {
            throw APIError.badRequest(error.message)
        }
    }

    /// Runs a step of a sign-in on its form; an attempt or form it cannot use is an error page.
    private func page(
        _ request: Request, _ context: CountersignRequestContext,
        _ step: (FormParameters, SignInFlow.Visit) async throws -> Response
    ) async throws -> Response {
        let visit = try visit(request, context)
        do {
            return try await step(try await FormParameters.read(request), visit)
        } catch let error as SignInError {
            return flow.errorPage(error.message, code: .invalidRequest, visit)
        } catch let error as FormError {
            return flow.errorPage("The form could not be read: \(error.oauthError.errorDescription).", code: .invalidRequest, visit)
        }
    }

    private func visit(_ request: Request, _ context: CountersignRequestContext) throws -> SignInFlow.Visit {
        SignInFlow.Visit(issuer: try context.tenantIssuer(), request: request, remoteAddress: context.remoteAddress?.ipAddress)
    }

    /// The query of a GET, read as OAuth reads a form (RFC 6749 §3.1: a parameter sent twice is
    /// an error).
    static func query(_ request: Request) throws -> FormParameters {
        do {
            return try FormParameters(body: Data((request.uri.query ?? "").utf8), contentType: "application/x-www-form-urlencoded")
        } catch let error as FormError {
            throw AuthorizationPageError.malformed(error.oauthError.errorDescription)
        }
    }
}
