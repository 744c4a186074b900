import Foundation

/// The URI an enrollment ticket is handed to a device in, usually as a QR code:
///
/// `countersign://enroll?v=1&server=https%3A%2F%2Fauth.example.com%2Ft%2Facme&ticket=cst_…&fp=…`
///
/// - `server`: the tenant's base URL; device endpoints are below `<server>/device/v1/`.
/// - `ticket`: the one-time enrollment ticket.
/// - `fp`: the RFC 7638 thumbprint of the server's device-protocol signing key. The device
///   refuses an enrollment receipt signed by any other key, so a QR code pointing at an
///   impostor server cannot enroll it.
public struct EnrollmentURI: Sendable, Equatable, CustomStringConvertible {
    public static let scheme = "countersign"
    public static let version = "1"

    public let server: URL
    public let ticket: String
    public let serverKeyThumbprint: String

    public init(server: URL, ticket: String, serverKeyThumbprint: String) {
        self.server = server
        self.ticket = ticket
        self.serverKeyThumbprint = serverKeyThumbprint
    }

    /// Parses and checks an enrollment URI.
    public init(parsing text: String) throws(EnrollmentURIError) {
        guard let components = URLComponents(string: text.trimmingCharacters(in: .whitespacesAndNewlines)) else {
            throw .notAURI
        }
        guard components.scheme?.lowercased() == Self.scheme else { throw .wrongScheme(components.scheme ?? "") }
        guard components.host == "enroll" else { throw .wrongAction(components.host ?? "") }
        var values: [String: String] = [:]
        for item in components.queryItems ?? [] {
            guard values[item.name] == nil else { throw .duplicateParameter(item.name) }
            values[item.name] = item.value ?? ""
        }
        guard let version = values["v"] else { throw .missingParameter("v") }
        guard version == Self.version else { throw .unsupportedVersion(version) }
        guard let serverText = values["server"], !serverText.isEmpty else { throw .missingParameter("server") }
        guard let server = URL(string: serverText), let scheme = server.scheme?.lowercased(),
              scheme == "https" || scheme == "http", server.host != nil,
              server.query == nil, server.fragment == nil, server.user == nil, server.password == nil else {
            throw .invalidServer(serverText)
        }
        guard let ticket = values["ticket"], !ticket.isEmpty else { throw .missingParameter("ticket") }
        guard let fingerprint = values["fp"], !fingerprint.isEmpty else { throw .missingParameter("fp") }
        guard let digest = Data(base64URLEncoded: fingerprint), digest.count == 32 else {
            throw .invalidFingerprint
        }
        self.init(server: server, ticket: ticket, serverKeyThumbprint: fingerprint)
    }

    /// The URI as text.
    public var description: String {
        var components = URLComponents()
        components.scheme = Self.scheme
        components.host = "enroll"
        components.queryItems = [
            URLQueryItem(name: "v", value: Self.version),
            URLQueryItem(name: "server", value: server.absoluteString),
            URLQueryItem(name: "ticket", value: ticket),
            URLQueryItem(name: "fp", value: serverKeyThumbprint),
        ]
        // URLComponents leaves ':' and '/' unescaped in query values; escape them so that the
        // server URL survives every QR scanner and URI parser intact.
        var allowed = CharacterSet.alphanumerics
        allowed.insert(charactersIn: "-._~")
        let query = components.queryItems!.map { item in
            "\(item.name)=\(item.value!.addingPercentEncoding(withAllowedCharacters: allowed)!)"
        }.joined(separator: "&")
        return "\(Self.scheme)://enroll?\(query)"
    }
}

/// Why an enrollment URI was refused.
public enum EnrollmentURIError: Error, Sendable, Equatable, CustomStringConvertible {
    case notAURI
    case wrongScheme(String)
    case wrongAction(String)
    case duplicateParameter(String)
    case missingParameter(String)
    case unsupportedVersion(String)
    case invalidServer(String)
    case invalidFingerprint

    public var description: String {
        switch self {
        case .notAURI: "not a URI"
        case .wrongScheme(let scheme): "scheme \"\(scheme)\" is not countersign"
        case .wrongAction(let action): "\"\(action)\" is not an enrollment URI (expected countersign://enroll)"
        case .duplicateParameter(let name): "parameter \(name) appears more than once"
        case .missingParameter(let name): "parameter \(name) is missing"
        case .unsupportedVersion(let version): "version \(version) is not supported (expected \(EnrollmentURI.version))"
        case .invalidServer(let server): "server \"\(server)\" is not an http(s) URL without query, fragment or credentials"
        case .invalidFingerprint: "fp must be a base64url SHA-256 thumbprint (43 characters)"
        }
    }
}
