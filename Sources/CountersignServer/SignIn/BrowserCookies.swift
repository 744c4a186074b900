import Foundation
import Hummingbird

/// The cookies of the hosted pages, all `HttpOnly`, `SameSite=Lax`, `Path=/`:
///
/// - the session (`BrowserSession`), whose value is a random token;
/// - the browser's mark, a random value that binds each sign-in attempt to the browser it
///   began in (`SignInAttempt`);
/// - a remembered browser's (`RememberedBrowser`), a random token replaced at each use, one per
///   tenant like the session's.
///
/// Served over https they carry `Secure` and the `__Host-` prefix, which a browser accepts only
/// from a secure origin, without `Domain`, with `Path=/`, so no other host can set or shadow
/// them. Over plain http (a development server on a loopback address) neither is possible,
/// and the names go without the prefix. A tenant other than the default has its own session
/// cookie, so that signing in to one tenant leaves the other's session alone.
struct BrowserCookies: Sendable {
    let secure: Bool

    init(origin: PublicOrigin) {
        secure = origin.base.lowercased().hasPrefix("https://")
    }

    private var prefix: String { secure ? "__Host-" : "" }

    func sessionName(for tenant: Tenant) -> String {
        prefix + "countersign-session" + (tenant.isDefault ? "" : "-" + tenant.slug)
    }

    var browserName: String { prefix + "countersign-browser" }

    func rememberedName(for tenant: Tenant) -> String {
        prefix + "countersign-remembered" + (tenant.isDefault ? "" : "-" + tenant.slug)
    }

    /// A remembered browser's token, kept until the browser's record expires.
    func remembered(_ token: String, for tenant: Tenant, until expiry: Date, now: Date) -> Cookie {
        cookie(rememberedName(for: tenant), token, maxAge: max(0, Int(expiry.timeIntervalSince(now))))
    }

    /// Removes a remembered browser's cookie.
    func forgetRemembered(for tenant: Tenant) -> Cookie {
        cookie(rememberedName(for: tenant), "", maxAge: 0)
    }

    func session(_ token: String, for tenant: Tenant, maxAge: Int) -> Cookie {
        cookie(sessionName(for: tenant), token, maxAge: maxAge)
    }

    /// Removes the session cookie.
    func endSession(for tenant: Tenant) -> Cookie {
        cookie(sessionName(for: tenant), "", maxAge: 0)
    }

    /// The browser's mark lives a year: it identifies nobody, only that two requests came from
    /// the same browser.
    func browser(_ value: String) -> Cookie {
        cookie(browserName, value, maxAge: 365 * 86_400)
    }

    private func cookie(_ name: String, _ value: String, maxAge: Int) -> Cookie {
        Cookie(name: name, value: value, maxAge: maxAge, path: "/", secure: secure, httpOnly: true, sameSite: .lax)
    }
}
