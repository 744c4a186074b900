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
/// and never a fragment, a user name or password, or a relative URI. It is written in the
/// characters RFC 3986 §2 allows (anything else percent-encoded), without `*`, which RFC 3986
/// allows but which an administrator could take for a wildcard, and any port is 1 to 65535
/// written without leading zeros.
///
/// A request's `redirect_uri` must be the registered string exactly (RFC 9700 §4.1.1), except
/// that a loopback URI may name any port (RFC 8252 §7.3: the app picks a free port at the time
/// of the request), by the same rule for ports.
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
        let notAbsolute = AdminError.invalidField(Self.field, "\(raw) is not an absolute URI, e.g. https://app.example.com/callback")
        guard !raw.unicodeScalars.contains(where: { $0.properties.isWhitespace || $0.properties.generalCategory == .control }) else {
            throw notAbsolute
        }
        try Self.checkCharacters(raw)
        if let port = Self.port(of: raw), !Self.isValidPort(port) {
            throw .invalidField(Self.field, "\(raw): a port must be 1 to 65535, written without leading zeros")
        }
        guard let components = URLComponents(string: raw), let scheme = components.scheme?.lowercased() else { throw notAbsolute }
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
        guard kind == .loopback, Self.port(of: requested).map(Self.isValidPort) ?? true,
              var components = URLComponents(string: requested), components.scheme == "http" else {
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

    /// RFC 3986 §2: unreserved and reserved ASCII characters, and `%` with two hex digits;
    /// brackets only around an IPv6 host (§3.2.2).
    private static func checkCharacters(_ raw: String) throws(AdminError) {
        let authority = Self.authority(of: raw)
        var index = raw.startIndex
        while index < raw.endIndex {
            let character = raw[index]
            switch character {
            case "%":
                let digits = raw[raw.index(after: index)...].prefix(2)
                guard digits.count == 2, digits.allSatisfy(\.isHexDigit) else {
                    throw .invalidField(Self.field, "\(raw) holds a % that is not followed by two hexadecimal digits (RFC 3986 §2.1)")
                }
                index = raw.index(index, offsetBy: 3)
                continue
            case "*":
                throw .invalidField(
                    Self.field, "\(raw) holds *: a redirect URI is matched exactly, never as a pattern; write %2A for a literal asterisk")
            case "[", "]":
                guard let authority, authority.contains(index) else {
                    throw .invalidField(Self.field, "\(raw) holds \(character) outside an IPv6 host; percent-encode it (RFC 3986 §3.2.2)")
                }
            default:
                guard character.unicodeScalars.allSatisfy(Self.uriCharacters.contains) else {
                    let code = character.unicodeScalars.map { "U+" + String($0.value, radix: 16, uppercase: true) }.joined(separator: " ")
                    throw .invalidField(
                        Self.field, "\(raw) holds \(character) (\(code)), which a URI may not hold; percent-encode it (RFC 3986 §2)")
                }
            }
            index = raw.index(after: index)
        }
    }

    /// RFC 3986 §2.2 and §2.3, but for `%` (read above), `*` (refused above) and the brackets.
    private static let uriCharacters = Set(
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~:/?#@!$&'()+,;=".unicodeScalars)

    /// Where the authority of `raw` lies (after `scheme://`, up to the path, query or fragment).
    private static func authority(of raw: String) -> Range<String.Index>? {
        guard let separator = raw.range(of: "://") else { return nil }
        let rest = raw[separator.upperBound...]
        return separator.upperBound..<(rest.firstIndex(where: { "/?#".contains($0) }) ?? raw.endIndex)
    }

    /// The text after the host's colon, if the authority has one ("" for a colon with nothing after).
    private static func port(of raw: String) -> Substring? {
        guard let range = authority(of: raw) else { return nil }
        var hostAndPort = raw[range]
        if let at = hostAndPort.lastIndex(of: "@") { hostAndPort = hostAndPort[hostAndPort.index(after: at)...] }
        if hostAndPort.hasPrefix("["), let close = hostAndPort.firstIndex(of: "]") {
            hostAndPort = hostAndPort[hostAndPort.index(after: close)...]
        }
        guard let colon = hostAndPort.lastIndex(of: ":") else { return nil }
        return hostAndPort[hostAndPort.index(after: colon)...]
    }

    /// 1 to 65535 in decimal, without a leading zero.
    private static func isValidPort(_ text: Substring) -> Bool {
        guard (1...5).contains(text.count), text.allSatisfy({ $0.isASCII && $0.isNumber }), text.first != "0",
              let number = Int(text) else { return false }
        return number <= 65535
    }

    /// The host, without the brackets of an IPv6 literal.
    private static func host(of components: URLComponents) -> String {
        var host = components.host?.lowercased() ?? ""
        if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        return host
    }
}
