import Foundation
import Hummingbird

/// The account pages below each tenant's base (`AccountFlow`):
///
/// - `GET /`: for a browser, the tenant's landing page, which leads here (`LandingPage`);
/// - `GET /account`: the page, or the sign-in that leads to it;
/// - `POST /account/devices/{id}/rename` and `/account/devices/{id}/remove`;
/// - `POST /account/enroll`, and `POST /account/enroll/wait`, which answers the enrollment
///   page's script `{"state":"pending"|"enrolled"|"expired"}`;
/// - `POST /account/approvals/{id}/not-me`;
/// - `POST /account/recovery-codes`: a new set, shown once;
/// - `GET|POST /account/recover`: the sign-in with a recovery code or an access pass
///   (`RecoveryFlow`);
/// - `POST /account/passkeys/{id}/rename`, `/account/passkeys/{id}/remove`,
///   `GET /account/passkeys/sign-in-again`, and the passkey script's JSON calls
///   `POST /account/passkeys/options` and `POST /account/passkeys` (`PasskeyAccountFlow`).
///
/// Failures go to the error middleware: a refused form is the error page of its
/// `AccountError`, with a link back to the account (`ErrorSurface.page`); a script's call is
/// answered the scripts' one JSON error shape (`ErrorSurface.script`).
struct AccountRoutes: Sendable {
    let flow: AccountFlow
    let passkeys: PasskeyAccountFlow
    let recovery: RecoveryFlow

    func register(on routes: TenantRoutes) {
        LandingPage.register(on: routes)
        let pages = routes.group("/account", surface: .page)
        pages.get("") { request, context in
            try await flow.show(try visit(request, context))
        }
        pages.post("/devices/{id}/rename") { request, context in
            try await flow.rename(deviceID: try context.parameters.require("id"), try await Self.form(request), try visit(request, context))
        }
        pages.post("/devices/{id}/remove") { request, context in
            try await flow.remove(deviceID: try context.parameters.require("id"), try await Self.form(request), try visit(request, context))
        }
        pages.post("/enroll") { request, context in
            try await flow.startEnrollment(try await Self.form(request), try visit(request, context))
        }
        pages.post("/recovery-codes") { request, context in
            try await flow.createRecoveryCodes(try await Self.form(request), try visit(request, context))
        }
        pages.get("/recover") { request, context in
            try await recovery.form((try? FormParameters.query(of: request)) ?? FormParameters(fields: [:]), try visit(request, context))
        }
        pages.post("/recover") { request, context in
            try await recovery.recover(try await Self.form(request), try visit(request, context))
        }
        pages.post("/approvals/{id}/not-me") { request, context in
            try await flow.reportNotRequested(
                approvalID: try context.parameters.require("id"), try await Self.form(request), try visit(request, context))
        }
        pages.post("/passkeys/{id}/rename") { request, context in
            try await passkeys.rename(passkeyID: try context.parameters.require("id"), try await Self.form(request), try visit(request, context))
        }
        pages.post("/passkeys/{id}/remove") { request, context in
            try await passkeys.remove(passkeyID: try context.parameters.require("id"), try await Self.form(request), try visit(request, context))
        }
        pages.post("/remembered-browsers/{id}/forget") { request, context in
            try await flow.forgetBrowser(id: try context.parameters.require("id"), try await Self.form(request), try visit(request, context))
        }
        pages.get("/passkeys/sign-in-again") { request, context in
            try await passkeys.signInAgain(try visit(request, context))
        }
        // The scripts' calls answer JSON; the passkey's, with the WebAuthn step that refused.
        let script = routes.group("/account", surface: .script)
        script.post("/passkeys/options") { request, context in
            try await passkeys.options(try await Self.form(request), try visit(request, context))
        }
        script.post("/passkeys") { request, context in
            try await passkeys.add(
                try await PasskeyRequestBody.decode(PasskeyAccountFlow.Registration.self, from: request), try visit(request, context))
        }
        script.post("/enroll/wait") { request, context in
            let visit = try visit(request, context)
            guard let state = try await flow.waitForEnrollment(try await Self.form(request), visit) else {
                throw AccountScriptError.signedOut(visit.issuer.basePath + "/account")
            }
            return try PageAnswer.json(["state": state.rawValue])
        }
    }

    /// The posted form; one that cannot be read is refused as the account's malformed form.
    private static func form(_ request: Request) async throws -> FormParameters {
        do {
            return try await FormParameters.read(request)
        } catch let error as FormError {
            throw AccountError.malformedForm(error.oauthError.errorDescription)
        }
    }

    private func visit(_ request: Request, _ context: CountersignRequestContext) throws -> AccountFlow.Visit {
        AccountFlow.Visit(issuer: try context.tenantIssuer(), request: request, remoteAddress: context.remoteAddress?.ipAddress)
    }
}
