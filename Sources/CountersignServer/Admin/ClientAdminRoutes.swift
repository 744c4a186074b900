import CountersignCore
import Foundation
import Hummingbird

/// `/admin/v1/tenants/{tenant}/clients`: the relying parties of a tenant.
struct ClientAdminRoutes: Sendable {
    let store: any ClientAdminStore
    let guardian: AdminGuard
    let maximumBodySize: Int
    let now: @Sendable () -> Date

    struct ClientFields: Decodable {
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
            if container.contains(.authenticators) {
                authenticators = .some(try container.decodeNil(forKey: .authenticators)
                    ? nil : try container.decode(AuthenticatorPolicy.self, forKey: .authenticators))
            }
        }
    }

    struct ClientWithSecret: Encodable, Sendable {
        let client: Client
        /// Shown once; only its hash is stored. None for a `private_key_jwt` client or a public one.
        let clientSecret: String?
        enum CodingKeys: String, CodingKey {
            case client
            case clientSecret = "client_secret"
        }
    }

    func register(on router: some RouterMethods<CountersignRequestContext>) {
        let base = "/admin/v1/tenants/{tenant}/clients"
        router.get(RouterPath(base)) { request, context in
            let (_, tenant) = try await guardian.tenant(request, context, holding: .clientsRead)
            let page = try PageRequest(request)
            let clients = try await store.clients(tenantID: tenant.id, after: page.cursor, limit: page.fetchLimit)
            return try JSON.response(page.page(clients, cursor: \.id))
        }
        router.post(RouterPath(base)) { request, context in
            let (key, tenant) = try await guardian.tenant(request, context, holding: .clientsManage)
            let fields = try await request.decodeJSON(ClientFields.self, limit: maximumBodySize)
            guard let rawName = fields.name else { throw AdminError.missingField("name") }
            let date = now()
            let client = try Self.detailTypes(
                Self.validated(
                    Client(id: Identifier.make("cli", at: date), tenantID: tenant.id, name: try AdminFields.name(rawName),
                           scopes: ["openid"], deliveryMode: .poll, notificationEndpoint: nil, createdAt: date, updatedAt: date),
                    applying: fields),
                applying: fields, registry: tenant.authorizationDetailTypes)
            // A private_key_jwt or public client gets a secret nobody is shown: the column holds a hash, and
            // switching the client to a secret method later takes a rotation.
            let secret = Secrets.generate(prefix: "css_")
            try await store.create(client, secretHash: Secrets.hash(secret), actor: "admin-key:\(key.id)")
            return try JSON.response(
                ClientWithSecret(client: client, clientSecret: client.authenticationMethod.usesSecret ? secret : nil),
                status: .created)
        }
        router.get(RouterPath(base + "/{id}")) { request, context in
            let (_, tenant) = try await guardian.tenant(request, context, holding: .clientsRead)
            return try JSON.response(try await find(context, tenant: tenant))
        }
        router.patch(RouterPath(base + "/{id}")) { request, context in
            try await update(request, context)
        }
        router.delete(RouterPath(base + "/{id}")) { request, context in
            let (key, tenant) = try await guardian.tenant(request, context, holding: .clientsManage)
            let client = try await find(context, tenant: tenant)
            try await store.delete(client, actor: "admin-key:\(key.id)", at: now())
            return Response(status: .noContent)
        }
        router.post(RouterPath(base + "/{id}/secret")) { request, context in
            let (key, tenant) = try await guardian.tenant(request, context, holding: .clientsManage)
            let client = Self.touched(try await find(context, tenant: tenant), at: now())
            guard client.authenticationMethod.usesSecret else {
                throw AdminError.conflict(
                    "client \(client.id) authenticates with \(client.authenticationMethod.rawValue) and has no secret")
            }
            let secret = Secrets.generate(prefix: "css_")
            try await store.rotateSecret(of: client, to: Secrets.hash(secret), actor: "admin-key:\(key.id)")
            return try JSON.response(ClientWithSecret(client: client, clientSecret: secret))
        }
    }

    private func update(_ request: Request, _ context: CountersignRequestContext) async throws -> Response {
        let (key, tenant) = try await guardian.tenant(request, context, holding: .clientsManage)
        let existing = try await find(context, tenant: tenant)
        let fields = try await request.decodeJSON(ClientFields.self, limit: maximumBodySize)
        let client = try Self.detailTypes(
            Self.patched(existing, applying: fields, at: now()), applying: fields,
            registry: tenant.authorizationDetailTypes)
        // The old secret must not come back to life if the client is switched back later.
        let forgottenSecret = existing.authenticationMethod.usesSecret && !client.authenticationMethod.usesSecret
            ? Secrets.hash(Secrets.generate(prefix: "css_")) : nil
        try await store.update(client, replacingSecretWith: forgottenSecret, actor: "admin-key:\(key.id)")
        return try JSON.response(client)
    }

    private func find(_ context: CountersignRequestContext, tenant: Tenant) async throws -> Client {
        let id = try context.parameters.require("id")
        guard let client = try await store.client(id: id, tenantID: tenant.id) else {
            throw AdminError.notFound("client \(id)")
        }
        return client
    }

    /// Applies the fields given and checks the result as a whole: ping and push clients need an
    /// https notification endpoint (http only for localhost, in development), and a client that
    /// signs (`private_key_jwt`, required signed requests) needs keys.
    static func validated(_ client: Client, applying fields: ClientFields) throws(AdminError) -> Client {
        var client = client
        if let scopes = fields.scopes {
            guard (1...50).contains(scopes.count), Set(scopes).count == scopes.count else {
                throw .invalidField("scopes", "1 to 50 distinct scope names")
            }
            for scope in scopes where !isScopeToken(scope) {
                throw .invalidField("scopes", "\"\(scope)\" is not a scope token (RFC 6749 §3.3)")
            }
            client.scopes = scopes
        }
        if let mode = fields.deliveryMode {
            guard let parsed = Client.DeliveryMode(rawValue: mode) else {
                throw .invalidField("token_delivery_mode", "must be poll, ping or push")
            }
            client.deliveryMode = parsed
        }
        if let endpoint = fields.notificationEndpoint {
            client.notificationEndpoint = endpoint.isEmpty ? nil : try notificationEndpoint(endpoint)
        }
        // An empty string clears the class, leaving the tenant's.
        for (field, value, keyPath) in [("default_acr", fields.defaultAcr, \Client.defaultAcr),
                                        ("minimum_acr", fields.minimumAcr, \Client.minimumAcr)] {
            guard let value else { continue }
            guard value.isEmpty || AuthenticationClass(urn: value) != nil else {
                throw .invalidField(field, "must be one of \(AuthenticationClass.all.map(\.urn).joined(separator: ", "))")
            }
            client[keyPath: keyPath] = value.isEmpty ? nil : value
        }
        if let policy = fields.authenticators {
            // The tenant's switched-off factors are left out when a request is made
            // (`AuthenticationPolicy.alternatives(for:client:)`), so the tenant may switch one
            // off later without editing every client.
            client.authenticators = try policy?.validated(field: "authenticators", switchedOff: [])
        }
        if let limit = fields.backchannelRequestsPerMinute {
            if let limit, !Client.requestsPerMinuteRange.contains(limit) {
                throw .invalidField("backchannel_requests_per_minute",
                                    "must be 0 (no limit) to \(Client.requestsPerMinuteRange.upperBound), or null for the tenant's")
            }
            client.backchannelRequestsPerMinute = limit
        }
        if client.deliveryMode != .poll && client.notificationEndpoint == nil {
            throw .invalidField("notification_endpoint", "is required for the \(client.deliveryMode.rawValue) delivery mode")
        }
        return try codeFlow(signing(client, applying: fields), applying: fields)
    }

    /// The fields of the authorization code flow: redirect URIs, each one registrable
    /// (`RedirectURI`) and named once, and whether requests must be pushed first.
    static func codeFlow(_ client: Client, applying fields: ClientFields) throws(AdminError) -> Client {
        var client = client
        for (field, value, keyPath) in [("redirect_uris", fields.redirectURIs, \Client.redirectURIs),
                                        ("post_logout_redirect_uris", fields.postLogoutRedirectURIs, \Client.postLogoutRedirectURIs)] {
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
        if let required = fields.requirePushedAuthorizationRequests { client.requirePushedAuthorizationRequests = required }
        return client
    }

    /// The fields of client authentication, signed requests and signed tokens.
    static func signing(_ client: Client, applying fields: ClientFields) throws(AdminError) -> Client {
        var client = client
        if let method = fields.authenticationMethod {
            guard let parsed = Client.AuthenticationMethod(rawValue: method) else {
                throw .invalidField(
                    "token_endpoint_auth_method", "must be client_secret_basic, client_secret_post, private_key_jwt or none")
            }
            client.authenticationMethod = parsed
        }
        if let jwks = fields.jwks {
            if case .array(let keys)? = jwks["keys"], keys.isEmpty {
                client.jwks = nil
            } else {
                do { client.jwks = try ClientJWKS(validating: jwks) } catch { throw .invalidField("jwks", error.description) }
            }
        }
        if let algorithm = fields.idTokenSignedResponseAlg {
            guard let parsed = algorithm.flatMap(TokenSigningAlgorithm.init(rawValue:)) else {
                throw .invalidField("id_token_signed_response_alg", "must be ES256 or RS256")
            }
            client.idTokenSignedResponseAlg = parsed
        }
        if let required = fields.requireSignedRequestObject { client.requireSignedRequestObject = required }
        if let userCode = fields.backchannelUserCodeParameter { client.backchannelUserCodeParameter = userCode }
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
    static func detailTypes(_ client: Client, applying fields: ClientFields,
                            registry: AuthorizationDetailTypes) throws(AdminError) -> Client {
        guard let types = fields.authorizationDetailsTypes else { return client }
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

    /// `client` with `fields` applied and validated, updated at `date`.
    static func patched(_ client: Client, applying fields: ClientFields, at date: Date) throws -> Client {
        var patched = try validated(client, applying: fields)
        if let rawName = fields.name { patched.name = try AdminFields.name(rawName) }
        return touched(patched, at: date)
    }

    static func touched(_ client: Client, at date: Date) -> Client {
        var touched = client
        touched.updatedAt = date
        return touched
    }

    static func isScopeToken(_ scope: String) -> Bool {
        !scope.isEmpty && scope.count <= 128 && scope.unicodeScalars.allSatisfy { scalar in
            scalar.value == 0x21 || (0x23...0x5B).contains(scalar.value) || (0x5D...0x7E).contains(scalar.value)
        }
    }

    static func notificationEndpoint(_ raw: String) throws(AdminError) -> String {
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
