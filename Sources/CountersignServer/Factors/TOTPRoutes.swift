import Foundation
import Hummingbird

/// `POST /totp/verify` (`TOTPVerification`), for the default tenant at the root and for every
/// tenant below `/t/<slug>`: a form body and an authenticated client, as at `bc-authorize`, and
/// OAuth error bodies (`OAuthEndpoint`).
struct TOTPRoutes: Sendable {
    let endpoint: OAuthEndpoint
    let verification: TOTPVerification

    func register(on routes: TenantRoutes) {
        routes.group(surface: .oauth, takesSecret: true).post("/totp/verify") { request, context in
            try await endpoint.handle("totp", request, context) { form, client, issuer in
                try OAuthResponse.json(try await verification.verify(form, client: client, issuer: issuer))
            }
        }
    }
}
