import Foundation

/// A browser as the risk rules' `new_user_agent` tells browsers apart: its family and its
/// system ("Firefox on Linux", "Safari on iOS"), without versions, so that the monthly update of
/// the user's browser is not a new browser, while another browser, or the same one on another
/// system, is. A `User-Agent` naming no browser this knows is its first product name
/// ("curl", "python-requests"); an empty or unreadable one is no family (the signal does not fire).
///
/// ```swift
/// UserAgentFamily(userAgent: "Mozilla/5.0 (X11; Linux x86_64; rv:133.0) Gecko/20100101 Firefox/133.0")?.name
/// // "Firefox on Linux"
/// ```
struct UserAgentFamily: Sendable, Equatable {
    let name: String

    /// Browsers by the token that names them, in the order they must be tried: Edge and Opera
    /// also say Chrome, Chrome also says Safari.
    private static let browsers: [(token: String, name: String)] = [
        ("Edg/", "Edge"), ("EdgA/", "Edge"), ("EdgiOS/", "Edge"), ("OPR/", "Opera"), ("SamsungBrowser/", "Samsung Internet"),
        ("Firefox/", "Firefox"), ("FxiOS/", "Firefox"), ("CriOS/", "Chrome"), ("Chromium/", "Chromium"), ("Chrome/", "Chrome"),
        ("Safari/", "Safari"),
    ]

    /// Systems by the token that names them, in order: Android also says Linux, iOS says "like Mac OS X".
    private static let systems: [(token: String, name: String)] = [
        ("Windows", "Windows"), ("Android", "Android"), ("iPhone", "iOS"), ("iPad", "iPadOS"), ("CrOS", "ChromeOS"),
        ("Macintosh", "macOS"), ("Mac OS X", "macOS"), ("Linux", "Linux"), ("FreeBSD", "FreeBSD"),
    ]

    init?(userAgent: String) {
        let text = userAgent.trimmingCharacters(in: .whitespaces)
        guard !text.isEmpty else { return nil }
        let system = Self.systems.first { text.contains($0.token) }?.name
        if let browser = Self.browsers.first(where: { text.contains($0.token) })?.name {
            name = system.map { "\(browser) on \($0)" } ?? browser
            return
        }
        // No browser this knows: the first product's name, without its version ("curl/8.5.0").
        let product = text.prefix { $0 != "/" && $0 != " " && $0 != "(" }
        guard !product.isEmpty, product.count <= 40, product.allSatisfy({ $0.isASCII && !$0.isWhitespace }) else { return nil }
        name = system.map { "\(product) on \($0)" } ?? String(product)
    }
}
