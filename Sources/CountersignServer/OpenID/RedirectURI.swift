import Foundation

/// A redirect URI a client registers for the authorization code flow, checked when it is
/// registered, and the rule by which an authorization request's `redirect_uri` names it.
///
/// What may be registered (RFC 6749 §3.1.2, RFC 8252 §7, RFC 9700 §4.1):
/// - `https` to any host (a web application, or an app's claimed URL);
/// - `http` to a loopback address only, `127.0.0.1` or `[::1]` (a native app listening for the
///   answer). `localhost` is refused: RFC 8252 §8.3 advises against it, since a name can resolve
///   elsewhere and a listener may bind another interface;
/// - a private-use scheme named after a domain the app controls, reversed, so with a period
///   (`com.example.app:/callback`, RFC 8252 §7.1);
/// and never a fragment, a user name or password, or a relative URI.
///
/// A request's `redirect_uri` must be the registered string exactly (RFC 9700 §4.1.1), except
/// that a loopback URI may name any port (RFC 8252 §7.3: the app picks a free port at the time
/// of the request).
public struct RedirectURI: Sendable, Hashable, CustomStringConvertible {
    public enum Kind: String, Sendable {
        case https
        case loopback
        case privateUse = "private-use"
    }

    public static let maximumLength = 2048
    static let field = "redirect_uris"

    public let value: String
    public let kind: Kind

    public var description: String { value }

    public init(registering raw: String) throws(AdminError) {
        guard !raw.isEmpty else { throw .invalidField(Self.field, "a redirect URI must not be empty") }
        guard raw.utf8.count <= Self.maximumLength else {
            throw .invalidField(Self.field, "a redirect URI must be at most \(Self.maximumLength) characters")
        }
        guard !raw.unicodeScalars.contains(where: { $0.properties.isWhitespace || $0.properties.generalCategory == .control }),
              let components = URLComponents(string: raw), let scheme = components.scheme?.lowercased() else {
            throw .invalidField(Self.field, "\(raw) is not an absolute URI, e.g. https://app.example.com/callback")
        }
        guard components.percentEncodedFragment == nil else {
            throw .invalidField(Self.field, "\(raw) must not have a fragment (RFC 6749 §3.1.2)")
        }
        guard components.percentEncodedUser == nil, components.percentEncodedPassword == nil else {
            throw .invalidField(Self.field, "\(raw) must not contain a user name or password")
        }
        switch scheme {
        case "https":
            guard let host = components.host, !host.isEmpty else {
                throw .invalidField(Self.field, "\(raw) must name a host")
            }
            kind = .https
        case "http":
            switch Self.host(of: components) {
            case "127.0.0.1", "::1":
                kind = .loopback
            case "localhost":
                throw .invalidField(Self.field, "\(raw): use http://127.0.0.1 or http://[::1] rather than localhost (RFC 8252 §8.3)")
            default:
                throw .invalidField(Self.field, "\(raw) must use https; http is allowed only to 127.0.0.1 or [::1]")
            }
        default:
            // A private-use scheme: a reversed domain name, so at least one period, and never a
            // scheme a browser runs or reads itself.
            guard scheme.contains("."), !Self.refusedSchemes.contains(scheme) else {
                throw .invalidField(
                    Self.field, "\(raw): a private-use scheme must be a reversed domain name the app controls, e.g. com.example.app:/callback (RFC 8252 §7.1)")
            }
            kind = .privateUse
        }
        value = raw
    }

    /// Schemes that are never an app's own.
    static let refusedSchemes: Set<String> = ["javascript", "data", "file", "vbscript", "about", "blob", "ftp", "ws", "wss"]

    /// Whether an authorization request's `redirect_uri` names this URI: the same string, or for
    /// a loopback URI the same string with any port.
    public func matches(_ requested: String) -> Bool {
        if requested == value { return true }
        guard kind == .loopback, var components = URLComponents(string: requested), components.scheme == "http" else {
            return false
        }
        components.port = nil
        return components.string == Self.withoutPort(value)
    }

    private static func withoutPort(_ uri: String) -> String? {
        guard var components = URLComponents(string: uri) else { return nil }
        components.port = nil
        return components.string
    }

    /// The host, without the brackets of an IPv6 literal.
    private static func host(of components: URLComponents) -> String {
        var host = components.host?.lowercased() ?? ""
        if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        return host
    }
}
