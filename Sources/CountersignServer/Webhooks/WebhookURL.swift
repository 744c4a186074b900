import Foundation

/// Where a webhook is sent: an absolute `https` URL. Plain `http` is allowed only to the
/// loopback host (`127.0.0.1`, `::1`, `localhost`), for a receiver on the server's own machine
/// in development; anywhere else the signed body, which names users and requests, would cross
/// the network in the clear. A user name or password in the URL would be a second secret kept
/// unsealed, and a fragment is never sent, so both are refused rather than silently dropped.
public struct WebhookURL: Sendable, Hashable, CustomStringConvertible {
    public static let maximumLength = 2048
    static let loopbackHosts: Set<String> = ["127.0.0.1", "::1", "localhost"]

    public let value: String
    /// The host, without the brackets of an IPv6 literal.
    public let host: String

    public var description: String { value }

    public init(_ raw: String) throws(AdminError) {
        guard raw.utf8.count <= Self.maximumLength else {
            throw .invalidField("url", "must be at most \(Self.maximumLength) characters")
        }
        // An URI is ASCII (RFC 3986): what the API answers back is one, as its document says.
        guard raw.unicodeScalars.allSatisfy(\.isASCII) else {
            throw .invalidField(
                "url", "must be written in ASCII: percent-encode other characters, and write an international domain name in its xn-- form")
        }
        guard !raw.unicodeScalars.contains(where: { $0.properties.isWhitespace || $0.properties.generalCategory == .control }),
              let components = URLComponents(string: raw), let scheme = components.scheme?.lowercased() else {
            throw .invalidField("url", "must be an absolute URL, e.g. https://hooks.example.com/countersign")
        }
        var host = components.host ?? ""
        if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        guard scheme == "https" || scheme == "http" else {
            throw .invalidField("url", "must use https (http is allowed only to 127.0.0.1, ::1 or localhost)")
        }
        guard !host.isEmpty else { throw .invalidField("url", "must name a host") }
        guard scheme == "https" || Self.loopbackHosts.contains(host.lowercased()) else {
            throw .invalidField("url", "must use https (http is allowed only to 127.0.0.1, ::1 or localhost)")
        }
        guard components.percentEncodedUser == nil, components.percentEncodedPassword == nil else {
            throw .invalidField("url", "must not contain a user name or password")
        }
        guard components.percentEncodedFragment == nil else {
            throw .invalidField("url", "must not contain a fragment (#…)")
        }
        value = raw
        self.host = host
    }
}
