import CountersignCore
import Crypto
import Foundation

/// A browser the user asked to be remembered after approving a sign-in on their phone
/// (docs/recovery.md §9, "Remembered browsers"). It holds two things: a cookie with a random
/// token (only its hash is stored), and a P-256 key pair made by the browser's WebCrypto as
/// non-extractable and kept in its IndexedDB (only the public key is stored). A later sign-in
/// in that browser skips the push when the cookie names this record, the browser signs a fresh
/// challenge with that key, and the request asks for no more than what the phone gave when the
/// browser was remembered. A copied cookie alone does not pass: the key cannot leave the
/// browser. Each use replaces the cookie's token; the token it replaced, shown again, ends the
/// record (it was copied).
struct RememberedBrowser: Sendable, Equatable {
    /// The most days a tenant or client may remember a browser for.
    static let maximumDays = 90

    let id: String
    let tenantID: String
    let userID: String
    let tokenHash: Data
    /// The token this one replaced at its last use: shown again, the cookie was copied.
    let previousTokenHash: Data?
    let publicKey: ECPublicJWK
    /// What the phone's approval gave when the browser was remembered; a use answers only a
    /// request that this answers (`SignInRequirement.accepts`).
    let context: AuthenticationContext
    /// When the phone approved: the sign-ins it answers keep this `auth_time`.
    let authTime: Date
    /// Where and in what it was remembered: the address and the User-Agent.
    let ipAddress: String?
    let userAgent: String?
    let createdAt: Date
    var lastUsedAt: Date
    let expiresAt: Date

    /// Whether it may answer a sign-in for a client that remembers browsers for `days` days:
    /// it has not expired, and was remembered less than `days` days ago.
    func answers(forDays days: Int, at date: Date) -> Bool {
        days > 0 && date < expiresAt && date < createdAt.addingTimeInterval(TimeInterval(days) * 86_400)
    }

    /// The bytes the browser signs for `challenge`: a label, so that the key signs nothing else
    /// that could be taken for this, and the challenge.
    static func signedBytes(challenge: String) -> Data {
        Data("countersign-remembered-browser:\(challenge)".utf8)
    }

    /// Whether `signature` (WebCrypto's ECDSA with SHA-256: r and s, 32 bytes each) is this
    /// browser's over `challenge`.
    func verifies(_ signature: Data, challenge: String) -> Bool {
        guard let key = try? publicKey.signingKey(),
              let parsed = try? P256.Signing.ECDSASignature(rawRepresentation: signature) else { return false }
        return key.isValidSignature(parsed, for: Self.signedBytes(challenge: challenge))
    }

    /// The public key a browser sent (its WebCrypto JWK export), if it is a P-256 point.
    static func publicKey(fromJWK text: String) -> ECPublicJWK? {
        guard text.utf8.count <= 1024,
              let jwk = try? JSONDecoder().decode(ECPublicJWK.self, from: Data(text.utf8)),
              jwk.kty == "EC", jwk.crv == "P-256", (try? jwk.signingKey()) != nil else { return nil }
        return ECPublicJWK(x: jwk.x, y: jwk.y)
    }
}

/// A browser's name for people, read from its User-Agent: "Chrome on Linux", "Safari on iOS".
/// Nil when neither the browser nor the system is recognised.
enum BrowserName {
    static func describe(_ userAgent: String) -> String? {
        let browsers: [(String, String)] = [
            ("Edg/", "Edge"), ("OPR/", "Opera"), ("Firefox/", "Firefox"), ("FxiOS/", "Firefox"), ("CriOS/", "Chrome"),
            ("Chromium/", "Chromium"), ("Chrome/", "Chrome"), ("Safari/", "Safari"),
        ]
        let systems: [(String, String)] = [
            ("iPhone", "iOS"), ("iPad", "iPadOS"), ("Android", "Android"), ("Windows", "Windows"), ("Mac OS X", "macOS"),
            ("CrOS", "ChromeOS"), ("Linux", "Linux"),
        ]
        let browser = browsers.first { userAgent.contains($0.0) }?.1
        let system = systems.first { userAgent.contains($0.0) }?.1
        switch (browser, system) {
        case let (browser?, system?): return "\(browser) on \(system)"
        case let (browser?, nil): return browser
        case let (nil, system?): return "A browser on \(system)"
        case (nil, nil): return nil
        }
    }
}
