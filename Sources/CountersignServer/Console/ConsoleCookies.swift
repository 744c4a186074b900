import CountersignCore
import Foundation
import Hummingbird

/// A console session: who signed in, and the admin key the console acts with on their behalf.
/// It lives in a cookie sealed with the master key (AES-GCM), so the browser holds it but can
/// neither read the key's secret nor change anything in it; signing out revokes the key, which
/// ends the session wherever the cookie is.
struct ConsoleSession: Codable, Sendable {
    let userID: String
    let username: String
    let tenantID: String
    let role: ConsoleRole
    let keyID: String
    let keySecret: String
    /// The token every form of the session carries (`ConsoleFlow.checkCSRF`).
    let csrf: String
    let expiresAt: Date

    /// How long a session lasts from its sign-in.
    static let lifetime: TimeInterval = 8 * 3_600
}

/// A sign-in in progress: what the callback checks (RFC 6749 §10.12 `state`; RFC 7636 PKCE).
struct ConsoleSignIn: Codable, Sendable {
    let state: String
    let verifier: String
    let expiresAt: Date

    /// How long the sign-in page may take.
    static let lifetime: TimeInterval = 15 * 60
}

/// The console's two cookies, `HttpOnly`, `SameSite=Strict`, `Path=/`, and over https
/// `Secure` with the `__Host-` prefix (as `BrowserCookies`); each tenant has its own.
struct ConsoleCookies: Sendable {
    let secure: Bool
    let sealer: SecretSealer

    init(origin: PublicOrigin, sealer: SecretSealer) {
        secure = origin.base.lowercased().hasPrefix("https://")
        self.sealer = sealer
    }

    func sessionName(for tenant: Tenant) -> String { name("countersign-console", tenant) }
    func signInName(for tenant: Tenant) -> String { name("countersign-console-sign-in", tenant) }

    private func name(_ base: String, _ tenant: Tenant) -> String {
        (secure ? "__Host-" : "") + base + (tenant.isDefault ? "" : "-" + tenant.slug)
    }

    func seal(_ value: some Encodable, purpose: String) throws -> String {
        try sealer.seal(try JSON.encode(value), context: "console-\(purpose)").base64URLEncodedString
    }

    /// The sealed value of `cookie`, or nil when it is absent, not sealed by this server for this
    /// purpose, or unreadable.
    func open<Value: Decodable>(_ type: Value.Type, _ cookie: String?, purpose: String) -> Value? {
        guard let cookie, let sealed = Data(base64URLEncoded: cookie),
              let plain = try? sealer.open(sealed, context: "console-\(purpose)") else { return nil }
        return try? Timestamps.decoder().decode(Value.self, from: plain)
    }

    func cookie(_ name: String, _ value: String, maxAge: Int) -> Cookie {
        Cookie(name: name, value: value, maxAge: maxAge, path: "/", secure: secure, httpOnly: true, sameSite: .strict)
    }
}
