import CountersignCore
import Foundation

/// The body of `POST` and `PATCH …/trusted-issuers`: every member optional here, required ones
/// checked on creation. An explicit `null` is refused rather than read as absent, so that
/// `"required_scope": null` cannot quietly mean "keep the default".
struct TrustedIssuerFields: Decodable, Sendable {
    var issuer: String?
    var jwksURI: String?
    var jwks: JSONValue?
    var audience: String?
    var usernameClaim: String?
    var requiredScope: String?

    enum CodingKeys: String, CodingKey, CaseIterable {
        case issuer, jwks, audience
        case jwksURI = "jwks_uri"
        case usernameClaim = "username_claim"
        case requiredScope = "required_scope"
    }

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        for key in CodingKeys.allCases where container.contains(key) {
            guard try container.decodeNil(forKey: key) else { continue }
            throw DecodingError.valueNotFound(
                JSONValue.self, .init(codingPath: container.codingPath + [key], debugDescription: "null"))
        }
        issuer = try container.decodeIfPresent(String.self, forKey: .issuer)
        jwksURI = try container.decodeIfPresent(String.self, forKey: .jwksURI)
        jwks = try container.decodeIfPresent(JSONValue.self, forKey: .jwks)
        audience = try container.decodeIfPresent(String.self, forKey: .audience)
        usernameClaim = try container.decodeIfPresent(String.self, forKey: .usernameClaim)
        requiredScope = try container.decodeIfPresent(String.self, forKey: .requiredScope)
    }

    /// A new trusted issuer of `tenantID` from these fields: `issuer`, `audience`, and
    /// `jwks_uri` or `jwks` are required; the username claim and the scope have defaults.
    func created(id: String, tenantID: String, ownIssuers: [String], at date: Date) throws(AdminError) -> TrustedIssuer {
        guard let issuer else { throw .missingField("issuer") }
        guard let audience else { throw .missingField("audience") }
        guard let keys = try keys() else { throw .missingField("jwks_uri or jwks") }
        let draft = TrustedIssuer(
            id: id, tenantID: tenantID, issuer: issuer, keys: keys, audience: audience,
            usernameClaim: TrustedIssuer.defaultUsernameClaim, requiredScope: TrustedIssuer.defaultRequiredScope,
            createdAt: date, updatedAt: date)
        return try applied(to: draft, ownIssuers: ownIssuers, at: date)
    }

    /// `existing` with the fields given applied and checked; `jwks_uri` replaces inline keys
    /// and `jwks` a URI, so an issuer always has exactly one source of keys.
    func applied(to existing: TrustedIssuer, ownIssuers: [String], at date: Date) throws(AdminError) -> TrustedIssuer {
        var issuer = existing
        if let raw = self.issuer {
            let value = try TrustedIssuerURL(raw, field: "issuer", allowsQuery: false).value
            // The tenant's own tokens are checked against its own keys; trusting its own issuer
            // as a foreign one would only make a second, weaker path for them.
            let bare = value.hasSuffix("/") ? String(value.dropLast()) : value
            guard !ownIssuers.contains(value), !ownIssuers.contains(bare) else {
                throw .invalidField("issuer", "is this tenant's own issuer, whose tokens are accepted already")
            }
            issuer.issuer = value
        }
        if let keys = try keys() { issuer.keys = keys }
        if let audience {
            guard (1...1024).contains(audience.count), !audience.unicodeScalars.contains(where: Self.isControl) else {
                throw .invalidField("audience", "1 to 1024 characters without control characters")
            }
            issuer.audience = audience
        }
        if let claim = usernameClaim {
            guard (1...256).contains(claim.count), claim.unicodeScalars.allSatisfy({ (0x21...0x7E).contains($0.value) }) else {
                throw .invalidField("username_claim", "1 to 256 printable ASCII characters without spaces")
            }
            guard !Self.claimsNamingNoUser.contains(claim) else {
                throw .invalidField("username_claim", "\(claim) does not name a user; use preferred_username, email, sub or the like")
            }
            issuer.usernameClaim = claim
        }
        if let scope = requiredScope {
            guard scope.isEmpty || ScopeToken.isRegistrable(scope) else {
                throw .invalidField("required_scope", "must be one scope token (RFC 6749 §3.3), or empty for no scope check")
            }
            issuer.requiredScope = scope
        }
        issuer.updatedAt = date
        return issuer
    }

    /// The source of keys the fields name, checked; nil when they name none.
    private func keys() throws(AdminError) -> TrustedIssuer.Keys? {
        switch (jwksURI, jwks) {
        case (_?, _?): throw .invalidField("jwks", "give jwks_uri or jwks, not both")
        case (let uri?, nil): return .uri(try TrustedIssuerURL(uri, field: "jwks_uri", allowsQuery: true).value)
        case (nil, let set?):
            do { return .inline(try ClientJWKS(validating: set)) } catch { throw .invalidField("jwks", error.description) }
        case (nil, nil): return nil
        }
    }

    /// Registered claims whose value is the same for many users, or no name at all: a username
    /// read from one of them would let one token enroll a phone for someone else.
    static let claimsNamingNoUser: Set<String> = ["iss", "aud", "exp", "nbf", "iat", "jti", "scope", "scp", "azp", "client_id"]

    private static func isControl(_ scalar: Unicode.Scalar) -> Bool { scalar.properties.generalCategory == .control }
}

/// The issuer identifier or `jwks_uri` of a trusted issuer: an absolute `https` URL, or plain
/// `http` to 127.0.0.1 only (a local provider in development and tests), without a user name,
/// password or fragment. An issuer identifier has no query either (OpenID Connect Discovery
/// §2); a `jwks_uri` may.
struct TrustedIssuerURL: Sendable, Equatable {
    static let maximumLength = 2048

    let value: String

    init(_ raw: String, field: String, allowsQuery: Bool) throws(AdminError) {
        guard raw.utf8.count <= Self.maximumLength else {
            throw .invalidField(field, "must be at most \(Self.maximumLength) characters")
        }
        guard !raw.unicodeScalars.contains(where: { $0.properties.isWhitespace || $0.properties.generalCategory == .control }),
              let components = URLComponents(string: raw), let scheme = components.scheme?.lowercased() else {
            throw .invalidField(field, "must be an absolute URL, e.g. https://login.bank.example")
        }
        let host = components.host ?? ""
        guard scheme == "https" || (scheme == "http" && host == "127.0.0.1") else {
            throw .invalidField(field, "must use https (http is allowed only to 127.0.0.1)")
        }
        guard !host.isEmpty else { throw .invalidField(field, "must name a host") }
        guard components.percentEncodedUser == nil, components.percentEncodedPassword == nil else {
            throw .invalidField(field, "must not contain a user name or password")
        }
        guard allowsQuery || components.percentEncodedQuery == nil else {
            throw .invalidField(field, "must not contain a query (?…)")
        }
        guard components.percentEncodedFragment == nil else {
            throw .invalidField(field, "must not contain a fragment (#…)")
        }
        value = raw
    }
}
