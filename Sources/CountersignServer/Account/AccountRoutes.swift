import Foundation
import Hummingbird

/// The account pages below each tenant's base (`AccountFlow`):
///
/// - `GET /`: for a browser, the tenant's landing page, which leads here (`LandingPage`);
/// - `GET /account`: the page, or the sign-in that leads to it;
/// - `POST /account/devices/{id}/rename` and `/account/devices/{id}/remove`;
/// - `POST /account/enroll`, and `POST /account/enroll/wait`, which answers JSON
///   (`{"state":"pending"|"enrolled"|"expired"}`) to the enrollment page's script;
/// - `POST /account/approvals/{id}/not-me`;
/// - `POST /account/passkeys/{id}/rename`, `/account/passkeys/{id}/remove`,
///   `GET /account/passkeys/sign-in-again`, and the passkey script's JSON calls
///   `POST /account/passkeys/options` and `POST /account/passkeys` (`PasskeyAccountFlow`).
///
/// A refused form is a page (`account-error`) with the status of its `AccountError`; the
/// script's question is answered in JSON whatever happens.
struct AccountRoutes: Sendable {
    let flow: AccountFlow
    let passkeys: PasskeyAccountFlow

    func register(on routes: TenantRoutes) {
        LandingPage.register(on: routes)
        let pages = routes.group("/account", surface: .page)
        pages.get("") { request, context in
            try await flow.show(try visit(request, context))
        }
        pages.post("/devices/{id}/rename") { request, context in
            let id = try context.parameters.require("id")
            return try await page(request, context) { form, visit in try await flow.rename(deviceID: id, form, visit) }
        }
        pages.post("/devices/{id}/remove") { request, context in
            let id = try context.parameters.require("id")
            return try await page(request, context) { form, visit in try await flow.remove(deviceID: id, form, visit) }
        }
        pages.post("/enroll") { request, context in
            try await page(request, context) { form, visit in try await flow.startEnrollment(form, visit) }
        }
        pages.post("/approvals/{id}/not-me") { request, context in
            let id = try context.parameters.require("id")
            return try await page(request, context) { form, visit in
                try await flow.reportNotRequested(approvalID: id, form, visit)
            }
        }
        pages.post("/passkeys/{id}/rename") { request, context in
            let id = try context.parameters.require("id")
            return try await page(request, context) { form, visit in try await passkeys.rename(passkeyID: id, form, visit) }
        }
        pages.post("/passkeys/{id}/remove") { request, context in
            let id = try context.parameters.require("id")
            return try await page(request, context) { form, visit in try await passkeys.remove(passkeyID: id, form, visit) }
        }
        pages.get("/passkeys/sign-in-again") { request, context in
            try await passkeys.signInAgain(try visit(request, context))
        }
        // The passkey script's calls answer JSON, with the WebAuthn step that refused.
        let script = routes.group("/account", surface: .api)
        script.post("/passkeys/options") { request, context in
            let visit = try visit(request, context)
            return try await Self.json { try await passkeys.options(try await FormParameters.read(request), visit) }
        }
        script.post("/passkeys") { request, context in
            let visit = try visit(request, context)
            return try await Self.json {
                try await passkeys.add(try await PasskeyRequestBody.decode(PasskeyAccountFlow.Registration.self, from: request), visit)
            }
        }
        pages.post("/enroll/wait") { request, context in
            let visit = try visit(request, context)
            do {
                guard let state = try await flow.waitForEnrollment(try await FormParameters.read(request), visit) else {
                    return try JSON.response(["state": "signed_out"], status: .unauthorized)
                }
                return try JSON.response(["state": state.rawValue])
            } catch let error as AccountError {
                return try JSON.response(["state": "refused", "error": error.code], status: error.status)
            } catch let error as FormError {
                return try JSON.response(
                    ["state": "refused", "error": "invalid_request", "error_description": error.oauthError.errorDescription],
                    status: .badRequest)
            }
        }
    }

    /// Runs a call of the passkey script; a refusal before the ceremony is JSON too.
    private static func json(_ step: () async throws -> Response) async throws -> Response {
        do {
            return try await step()
        } catch let error as PasskeyAccountError {
            return try JSON.response(error.body, status: error.status)
        } catch let error as AccountError {
            return try JSON.response(["error": error.code, "error_description": error.message], status: error.status)
        }
    }

    /// Runs a form post of the account pages; a refused form is an error page.
    private func page(
        _ request: Request, _ context: CountersignRequestContext,
        _ step: (FormParameters, AccountFlow.Visit) async throws -> Response
    ) async throws -> Response {
        let visit = try visit(request, context)
        do {
            return try await step(try await FormParameters.read(request), visit)
        } catch let error as AccountError {
            return flow.errorPage(error, visit)
        } catch let error as FormError {
            return flow.errorPage(.malformedForm(error.oauthError.errorDescription), visit)
        }
    }

    private func visit(_ request: Request, _ context: CountersignRequestContext) throws -> AccountFlow.Visit {
        AccountFlow.Visit(issuer: try context.tenantIssuer(), request: request, remoteAddress: context.remoteAddress?.ipAddress)
    }
}
