import Foundation

/// The origin a ceremony runs for, parsed the way a browser serialises it (`https://host[:port]`,
/// lower-case, the default port left out), and only when a browser would let it use a
/// credential: a secure context, which here means `https`, or `http://localhost` for local
/// development. A path of `/` is accepted and dropped; anything else beyond the origin is not.
struct WebOrigin: Equatable {
    let scheme: String
    let host: String
    let port: Int?

    init(_ text: String) throws(PasskeyAuthenticatorError) {
        guard let components = URLComponents(string: text), let scheme = components.scheme?.lowercased(),
              let host = components.host?.lowercased(), !host.isEmpty,
              components.user == nil, components.password == nil, components.query == nil, components.fragment == nil,
              components.path.isEmpty || components.path == "/"
        else { throw .invalidOrigin(text) }
        guard scheme == "https" || (scheme == "http" && host == "localhost") else { throw .invalidOrigin(text) }
        let defaultPort = scheme == "https" ? 443 : 80
        self.scheme = scheme
        self.host = host
        self.port = components.port == defaultPort ? nil : components.port
    }

    /// The serialisation `clientDataJSON` carries and relying parties compare exactly.
    var serialized: String {
        scheme + "://" + host + (port.map { ":\($0)" } ?? "")
    }

    /// The RP ID a ceremony uses: the one the options name, else this origin's host. It must be
    /// the host itself or a domain the host lies below (WebAuthn §5.1.3 step 8, §5.1.4 step 6).
    /// Without a public suffix list, only single-label parents (`com`, `localhost` from a
    /// subdomain) are refused as suffixes; an IP address must match exactly.
    func relyingPartyID(_ requested: String?) throws(PasskeyAuthenticatorError) -> String {
        guard let requested else { return host }
        let rpID = requested.lowercased()
        if rpID == host { return rpID }
        guard !isIPAddress, rpID.contains("."), !rpID.hasPrefix("."), host.hasSuffix("." + rpID) else {
            throw .relyingPartyIDMismatch(rpID: requested, origin: serialized)
        }
        return rpID
    }

    private var isIPAddress: Bool {
        host.hasPrefix("[") || host.split(separator: ".").allSatisfy { !$0.isEmpty && $0.allSatisfy(\.isNumber) }
    }
}
