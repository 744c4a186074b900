import Foundation
import Hummingbird

/// The hosted pages below each tenant's base (`SignInFlow`), and the files they link at
/// `/assets/…`:
///
/// - `GET|POST /authorize`: the authorization endpoint;
/// - `POST /authorize/sign-in`, `/authorize/wait`, `/authorize/continue`: the steps of a sign-in;
///   `/authorize/remembered`: a remembered browser's signature instead of the phone;
/// - `POST /authorize/passkey/options`, `/authorize/passkey`: a sign-in with a passkey
///   (`PasskeySignInFlow`), called by the page's script;
/// - `GET|POST /logout`: the end-session endpoint;
/// - `GET /invitation`, `POST /invitation/wait`, `POST /invitation/sign-in`: an enrollment
///   invitation (`InvitationFlow`).
///
/// Failures go to the error middleware: an attempt that cannot continue, a malformed form or
/// link, and any fault of the server are error pages in the tenant's name
/// (`ErrorSurface.page`); the scripts' calls get the scripts' one JSON error shape
/// (`ErrorSurface.script`).
struct SignInRoutes: Sendable {
    let flow: SignInFlow
    let invitations: InvitationFlow
    let passkeys: PasskeySignInFlow

    func register(on routes: TenantRoutes) {
        let pages = routes.group(surface: .page)
        pages.get("/authorize") { request, context in
            try await flow.authorize(try Self.query(request), try visit(request, context))
        }
        pages.post("/authorize") { request, context in
            try await flow.authorize(try await Self.form(request), try visit(request, context))
        }
        pages.post("/authorize/sign-in") { request, context in
            try await flow.signIn(try await Self.form(request), try visit(request, context))
        }
        pages.post("/authorize/continue") { request, context in
            try await flow.proceed(try await Self.form(request), try visit(request, context))
        }
        pages.post("/authorize/remembered") { request, context in
            try await flow.remembered(try await Self.form(request), try visit(request, context))
        }
        pages.get("/invitation") { request, context in
            try await invitations.show(try Self.query(request), try visit(request, context))
        }
        pages.post("/invitation/sign-in") { request, context in
            try await invitations.startSignIn(try await Self.form(request), try visit(request, context))
        }
        pages.get("/logout") { request, context in
            try await flow.logout(try Self.query(request), posted: false, try visit(request, context))
        }
        pages.post("/logout") { request, context in
            try await flow.logout(try await Self.form(request), posted: true, try visit(request, context))
        }
        // The scripts' calls: the waits (the script submits its form on any answer but
        // `pending`, and the page then says what went wrong), and the passkey button's, with
        // the WebAuthn step that refused for the page to show beside the button.
        let script = routes.group(surface: .script)
        script.post("/authorize/wait") { request, context in
            try await flow.wait(try await Self.form(request), try visit(request, context))
        }
        script.post("/invitation/wait") { request, context in
            try await invitations.wait(try await Self.form(request), try visit(request, context))
        }
        script.post("/authorize/passkey/options") { request, context in
            try await passkeys.options(try await Self.form(request), try visit(request, context))
        }
        script.post("/authorize/passkey") { request, context in
            try await passkeys.finish(
                try await PasskeyRequestBody.decode(PasskeySignInFlow.Assertion.self, from: request), try visit(request, context))
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

    /// The posted form; one that cannot be read ends the sign-in's page.
    static func form(_ request: Request) async throws -> FormParameters {
        do {
            return try await FormParameters.read(request)
        } catch let error as FormError {
            throw AuthorizationPageError.malformedForm(error.oauthError.errorDescription)
        }
    }

    private func visit(_ request: Request, _ context: CountersignRequestContext) throws -> SignInFlow.Visit {
        SignInFlow.Visit(issuer: try context.tenantIssuer(), request: request, remoteAddress: context.remoteAddress?.ipAddress)
    }

    /// The query of a GET; a malformed one ends the sign-in's page.
    static func query(_ request: Request) throws -> FormParameters {
        do {
            return try FormParameters.query(of: request)
        } catch let error as FormError {
            throw AuthorizationPageError.malformed(error.oauthError.errorDescription)
        }
    }
}
