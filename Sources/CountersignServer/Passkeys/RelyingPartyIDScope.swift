/// Whether a tenant's own RP ID can work at the server's host. Browsers run a ceremony only
/// when the RP ID "is a registrable domain suffix of or is equal to" the page's effective domain
/// (WebAuthn Level 3 §5.1.3 step 7 and §5.1.4.1 step 8, by HTML's algorithm of that name), and
/// only at a domain: an RP ID they would refuse makes every passkey of the tenant fail, so the
/// policy refuses it first.
///
/// ```swift
/// try RelyingPartyIDScope.check("example.com", host: "auth.example.com", suffixes: .system)  // a parent: fine
/// try RelyingPartyIDScope.check("co.uk", host: "auth.example.co.uk", suffixes: .system)      // throws .publicSuffix
/// try RelyingPartyIDScope.check("evil.example", host: "auth.example.com", suffixes: .system) // throws .outside
/// ```
enum RelyingPartyIDScope {
    enum Refusal: Error, Equatable {
        /// The server's public URL is at an IP address, where browsers allow no passkey.
        case serverAtAddress(host: String)
        /// Neither the host nor a domain the host is below.
        case outside(rpID: String, host: String)
        /// A domain anyone may register names under (or one above the host's), which browsers
        /// refuse as they refuse it for cookies.
        case publicSuffix(rpID: String, host: String)
        /// A parent of the host, which cannot be checked without the Public Suffix List.
        case noSuffixList(rpID: String, host: String)

        var message: String {
            switch self {
            case .serverAtAddress(let host):
                "the server's public URL is at an IP address (\(host)), where browsers allow no passkey: serve it at a domain name"
            case .outside(let rpID, let host):
                "\(rpID) is neither the server's host, \(host), nor a parent domain of it: browsers would refuse every passkey ceremony"
            case .publicSuffix(let rpID, let host):
                "\(rpID) is a public suffix, under which anyone may register a domain, which browsers refuse as an RP ID: use \(host) or a parent of it below its public suffix"
            case .noSuffixList(let rpID, let host):
                "\(rpID) cannot be checked: the Public Suffix List (\(PublicSuffixList.systemPath), the publicsuffix package) is not installed on the server, and without it only \(host) itself can be set"
            }
        }
    }

    /// Throws unless `rpID` is `host` (the server's own RP ID: its host name, `localhost` at a
    /// loopback address) or a parent domain of it that is no public suffix. `suffixes` is read
    /// only for a parent; nil: the list is missing, so only `host` itself passes.
    static func check(_ rpID: String, host: String, suffixes: @autoclosure () -> PublicSuffixList?) throws(Refusal) {
        guard !isAddress(host) else { throw .serverAtAddress(host: host) }
        guard rpID != host else { return }
        guard host.hasSuffix("." + rpID) else { throw .outside(rpID: rpID, host: host) }
        guard let suffixes = suffixes() else {
            // Without the list, the rule every list ends with still holds: a top-level domain
            // is a public suffix.
            if !rpID.contains(".") { throw .publicSuffix(rpID: rpID, host: host) }
            throw .noSuffixList(rpID: rpID, host: host)
        }
        let hostSuffix = suffixes.publicSuffix(of: host)
        guard !suffixes.isPublicSuffix(rpID), rpID.hasSuffix("." + hostSuffix) else {
            throw .publicSuffix(rpID: rpID, host: host)
        }
    }

    /// An IPv6 address, or a host ending in a number, which URL parsers read as an IPv4 address.
    static func isAddress(_ host: String) -> Bool {
        host.contains(":") || host.hasPrefix("[")
            || host.split(separator: ".").last.map { !$0.isEmpty && $0.allSatisfy(\.isNumber) } ?? false
    }
}
