import CountersignCore
import Foundation

/// The body of `POST` and `PATCH …/clients`, and the rules of a client's registration: every
/// member optional here, `name` required on creation; the fields given are applied to the
/// client and the result is checked as a whole. Each refusal is `AdminError.invalidField` naming
/// the member and why.
struct ClientRegistration: Decodable, Sendable {
    var name: String?
    var scopes: [String]?
    var deliveryMode: String?
    var notificationEndpoint: String?
    var defaultAcr: String?
    var minimumAcr: String?
    var authenticationMethod: String?
    /// A JSON Web Key Set; one with no keys removes the client's keys.
    var jwks: JSONValue?
    var requireSignedRequestObject: Bool?
    var backchannelUserCodeParameter: Bool?
    /// `backchannel_requests_per_minute`: nil when absent (the client keeps its limit);
    /// `.some(nil)` for JSON `null` (the client takes the tenant's).
    var backchannelRequestsPerMinute: Int??
    /// RFC 9396 §10.2; an empty array removes them all.
    var authorizationDetailsTypes: [String]?
    /// `.some(nil)` for JSON `null`, which is refused: a client always has an algorithm.
    var idTokenSignedResponseAlg: String??
    /// The code flow's redirect URIs (`RedirectURI`); an empty array removes them all.
    var redirectURIs: [String]?
    var postLogoutRedirectURIs: [String]?
    var requirePushedAuthorizationRequests: Bool?
    /// `.some(nil)` for JSON `null`, which removes the client's own policy.
    var authenticators: AuthenticatorPolicy??
    var directoryPassword: Bool?
    /// Groups by name or id, resolved to ids by the routes (`GroupReferences`); empty: everyone.
    var allowedGroups: [String]?
    /// `.some(nil)` for JSON `null`: the tenant's number of days.
    var rememberBrowserDays: Int??

    /// The API's member names, as `Client` writes them.
    typealias CodingKeys = Client.CodingKeys

    /// Written out because a synthesized decoder reads an explicit `null` as an absent member.
    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        name = try container.decodeIfPresent(String.self, forKey: .name)
        scopes = try container.decodeIfPresent([String].self, forKey: .scopes)
        deliveryMode = try container.decodeIfPresent(String.self, forKey: .deliveryMode)
        notificationEndpoint = try container.decodeIfPresent(String.self, forKey: .notificationEndpoint)
        defaultAcr = try container.decodeIfPresent(String.self, forKey: .defaultAcr)
        minimumAcr = try container.decodeIfPresent(String.self, forKey: .minimumAcr)
        authenticationMethod = try container.decodeIfPresent(String.self, forKey: .authenticationMethod)
        jwks = try container.decodeIfPresent(JSONValue.self, forKey: .jwks)
        requireSignedRequestObject = try container.decodeIfPresent(Bool.self, forKey: .requireSignedRequestObject)
        backchannelUserCodeParameter = try container.decodeIfPresent(Bool.self, forKey: .backchannelUserCodeParameter)
        if container.contains(.backchannelRequestsPerMinute) {
            backchannelRequestsPerMinute = .some(try container.decodeNil(forKey: .backchannelRequestsPerMinute)
                ? nil : try container.decode(Int.self, forKey: .backchannelRequestsPerMinute))
        }
        authorizationDetailsTypes = try container.decodeIfPresent([String].self, forKey: .authorizationDetailsTypes)
        if container.contains(.idTokenSignedResponseAlg) {
            idTokenSignedResponseAlg = .some(try container.decodeNil(forKey: .idTokenSignedResponseAlg)
                ? nil : try container.decode(String.self, forKey: .idTokenSignedResponseAlg))
        }
        redirectURIs = try container.decodeIfPresent([String].self, forKey: .redirectURIs)
        postLogoutRedirectURIs = try container.decodeIfPresent([String].self, forKey: .postLogoutRedirectURIs)
        requirePushedAuthorizationRequests = try container.decodeIfPresent(
            Bool.self, forKey: .requirePushedAuthorizationRequests)
        directoryPassword = try container.decodeIfPresent(Bool.self, forKey: .directoryPassword)
        allowedGroups = try container.decodeIfPresent([String].self, forKey: .allowedGroups)
        if container.contains(.rememberBrowserDays) {
            rememberBrowserDays = .some(try container.decodeNil(forKey: .rememberBrowserDays)
                ? nil : try container.decode(Int.self, forKey: .rememberBrowserDays))
        }
        if container.contains(.authenticators) {
            authenticators = .some(try container.decodeNil(forKey: .authenticators)
                ? nil : try container.decode(AuthenticatorPolicy.self, forKey: .authenticators))
        }
    }

    /// A new client of `tenant` from these fields, registered at `date`: `name` is required; a
    /// client starts as a `poll` client of the `openid` scope that authenticates with a secret.
    func registered(id: String, tenant: Tenant, at date: Date) throws(AdminError) -> Client {
        guard let name else { throw .missingField("name") }
        let draft = Client(
            id: id, tenantID: tenant.id, name: try AdminFields.name(name), scopes: ["openid"], deliveryMode: .poll,
            notificationEndpoint: nil, createdAt: date, updatedAt: date)
        return try detailTypes(validated(draft), registry: tenant.authorizationDetailTypes)
    }

    /// `existing` with the fields given applied and checked as a whole, updated at `date`.
    func applied(to existing: Client, tenant: Tenant, at date: Date) throws(AdminError) -> Client {
        var client = try validated(existing)
        if let name { client.name = try AdminFields.name(name) }
        client.updatedAt = date
        return try detailTypes(client, registry: tenant.authorizationDetailTypes)
    }

    /// Applies the fields given and checks the result as a whole: ping and push clients need an
    /// https notification endpoint (http only for localhost, in development), and a client that
    /// signs (`private_key_jwt`, required signed requests) needs keys.
    func validated(_ client: Client) throws(AdminError) -> Client {
        var client = client
        if let scopes {
            guard (1...50).contains(scopes.count), Set(scopes).count == scopes.count else {
                throw .invalidField("scopes", "1 to 50 distinct scope names")
            }
            for scope in scopes where !ScopeToken.isRegistrable(scope) {
                throw .invalidField("scopes", "\"\(scope)\" is not a scope token (RFC 6749 §3.3)")
            }
            client.scopes = scopes
        }
        if let mode = deliveryMode {
            guard let parsed = Client.DeliveryMode(rawValue: mode) else {
                throw .invalidField("token_delivery_mode", "must be poll, ping or push")
            }
            client.deliveryMode = parsed
        }
        if let endpoint = notificationEndpoint {
            client.notificationEndpoint = endpoint.isEmpty ? nil : try Self.notificationEndpoint(endpoint)
        }
        // An empty string clears the class, leaving the tenant's.
        for (field, value, keyPath) in [("default_acr", defaultAcr, \Client.defaultAcr),
                                        ("minimum_acr", minimumAcr, \Client.minimumAcr)] {
            guard let value else { continue }
            guard value.isEmpty || AuthenticationClass(urn: value) != nil else {
                throw .invalidField(field, "must be one of \(AuthenticationClass.all.map(\.urn).joined(separator: ", "))")
            }
            client[keyPath: keyPath] = value.isEmpty ? nil : value
        }
        if let policy = authenticators {
            // The tenant's switched-off factors are left out when a request is made
            // (`AuthenticationPolicy.alternatives(for:client:)`), so the tenant may switch one
            // off later without editing every client.
            client.authenticators = try policy?.validated(field: "authenticators", switchedOff: [])
        }
        if let limit = backchannelRequestsPerMinute {
            if let limit, !Client.requestsPerMinuteRange.contains(limit) {
                throw .invalidField("backchannel_requests_per_minute",
                                    "must be 0 (no limit) to \(Client.requestsPerMinuteRange.upperBound), or null for the tenant's")
            }
            client.backchannelRequestsPerMinute = limit
        }
        if client.deliveryMode != .poll && client.notificationEndpoint == nil {
            throw .invalidField("notification_endpoint", "is required for the \(client.deliveryMode.rawValue) delivery mode")
        }
        return try codeFlow(signing(client))
    }

    /// The fields of the authorization code flow: redirect URIs, each one registrable
    /// (`RedirectURI`) and named once, and whether requests must be pushed first.
    private func codeFlow(_ client: Client) throws(AdminError) -> Client {
        var client = client
        for (field, value, keyPath) in [("redirect_uris", redirectURIs, \Client.redirectURIs),
                                        ("post_logout_redirect_uris", postLogoutRedirectURIs, \Client.postLogoutRedirectURIs)] {
            guard let value else { continue }
            guard value.count <= Client.maximumRedirectURIs else {
                throw .invalidField(field, "at most \(Client.maximumRedirectURIs) URIs")
            }
            guard Set(value).count == value.count else { throw .invalidField(field, "names a URI twice") }
            for uri in value {
                do { _ = try RedirectURI(registering: uri) } catch .invalidField(_, let why) {
                    throw .invalidField(field, why)
                } catch { throw error }
            }
            client[keyPath: keyPath] = value
        }
        if let required = requirePushedAuthorizationRequests { client.requirePushedAuthorizationRequests = required }
        if let required = directoryPassword { client.directoryPassword = required }
        if let days = rememberBrowserDays {
            if let days, !(0...RememberedBrowser.maximumDays).contains(days) {
                throw .invalidField(
                    "remember_browser_days", "must be 0 (never) to \(RememberedBrowser.maximumDays), or null for the tenant's")
            }
            client.rememberBrowserDays = days
        }
        return client
    }

    /// The fields of client authentication, signed requests and signed tokens.
    private func signing(_ client: Client) throws(AdminError) -> Client {
        var client = client
        if let method = authenticationMethod {
            guard let parsed = Client.AuthenticationMethod(rawValue: method) else {
                throw .invalidField(
                    "token_endpoint_auth_method", "must be client_secret_basic, client_secret_post, private_key_jwt or none")
            }
            client.authenticationMethod = parsed
        }
        if let jwks {
            if case .array(let keys)? = jwks["keys"], keys.isEmpty {
                client.jwks = nil
            } else {
                do { client.jwks = try ClientJWKS(validating: jwks) } catch { throw .invalidField("jwks", error.description) }
            }
        }
        if let algorithm = idTokenSignedResponseAlg {
            guard let parsed = algorithm.flatMap(TokenSigningAlgorithm.init(rawValue:)) else {
                throw .invalidField("id_token_signed_response_alg", "must be ES256 or RS256")
            }
            client.idTokenSignedResponseAlg = parsed
        }
        if let required = requireSignedRequestObject { client.requireSignedRequestObject = required }
        if let userCode = backchannelUserCodeParameter { client.backchannelUserCodeParameter = userCode }
        if client.jwks == nil && client.authenticationMethod == .privateKeyJWT {
            throw .invalidField("jwks", "is required for the private_key_jwt authentication method")
        }
        if client.jwks == nil && client.requireSignedRequestObject {
            throw .invalidField("jwks", "is required when require_signed_request_object is true")
        }
        return client
    }

    /// The authorization detail types the client may request: each must be in the tenant's
    /// registry, so that a client is never registered for details nobody can check.
    private func detailTypes(_ client: Client, registry: AuthorizationDetailTypes) throws(AdminError) -> Client {
        guard let types = authorizationDetailsTypes else { return client }
        guard Set(types).count == types.count else { throw .invalidField("authorization_details_types", "names a type twice") }
        if let unknown = types.first(where: { registry.type(named: $0) == nil }) {
            throw .invalidField(
                "authorization_details_types",
                "\(unknown) is not a type of the tenant's registry (/admin/v1/tenants/{tenant}/authorization-detail-types)")
        }
        var client = client
        client.authorizationDetailsTypes = types
        return client
    }

    private static func notificationEndpoint(_ raw: String) throws(AdminError) -> String {
        // URL(string:) would percent-encode a space and take the rest; an endpoint is refused instead.
        guard !raw.unicodeScalars.contains(where: { $0.properties.isWhitespace || $0.properties.generalCategory == .control }) else {
            throw .invalidField("notification_endpoint", "must not contain white space or control characters")
        }
        guard raw.count <= 2000, let url = URL(string: raw), let scheme = url.scheme?.lowercased(), let host = url.host,
              url.fragment == nil else {
            throw .invalidField("notification_endpoint", "must be an absolute URL without a fragment")
        }
        let loopback = ["localhost", "127.0.0.1", "::1", "[::1]"].contains(host.lowercased())
        guard scheme == "https" || (scheme == "http" && loopback) else {
            throw .invalidField("notification_endpoint", "must use https (http is accepted for localhost only)")
        }
        return raw
    }
}
