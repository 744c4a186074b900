import Foundation
import Hummingbird

/// `/admin/v1/tenants/{tenant}/clients`: the relying parties of a tenant.
struct ClientAdminRoutes: Sendable {
    let services: ServerServices
    let guardian: AdminGuard

    struct ClientFields: Decodable {
        var name: String?
        var scopes: [String]?
        var deliveryMode: String?
        var notificationEndpoint: String?
        var defaultAcr: String?
        var minimumAcr: String?

        enum CodingKeys: String, CodingKey {
            case name, scopes
            case defaultAcr = "default_acr"
            case minimumAcr = "minimum_acr"
            case deliveryMode = "token_delivery_mode"
            case notificationEndpoint = "notification_endpoint"
        }
    }

    struct ClientWithSecret: Encodable, Sendable {
        let client: Client
        /// Shown once; only its hash is stored.
        let clientSecret: String
        enum CodingKeys: String, CodingKey {
            case client
            case clientSecret = "client_secret"
        }
    }

    func register(on router: Router<CountersignRequestContext>) {
        let base = "/admin/v1/tenants/{tenant}/clients"
        router.get(RouterPath(base)) { request, context in
            let (_, tenant) = try await guardian.tenant(request, context, holding: .clientsRead)
            let page = try PageRequest(request)
            let clients = try await services.repositories.clients.list(
                tenantID: tenant.id, after: page.cursor, limit: page.fetchLimit, on: services.database)
            return try JSON.response(page.page(clients, cursor: \.id))
        }
        router.post(RouterPath(base)) { request, context in
            let (key, tenant) = try await guardian.tenant(request, context, holding: .clientsManage)
            let fields = try await request.decodeJSON(ClientFields.self, limit: services.configuration.maximumBodySize)
            guard let rawName = fields.name else { throw AdminError.missingField("name") }
            let date = services.now()
            let client = try Self.validated(
                Client(id: Identifier.make("cli", at: date), tenantID: tenant.id, name: try AdminFields.name(rawName),
                       scopes: ["openid"], deliveryMode: .poll, notificationEndpoint: nil, createdAt: date, updatedAt: date),
                applying: fields)
            let secret = Secrets.generate(prefix: "css_")
            try await services.database.transaction { executor in
                try await services.repositories.clients.insert(client, secretHash: Secrets.hash(secret), on: executor)
                try await services.audit.record(
                    "client.created", actor: "admin-key:\(key.id)", tenantID: tenant.id, target: ("client", client.id),
                    details: ["name": client.name, "token_delivery_mode": client.deliveryMode.rawValue],
                    at: date, on: executor)
            }
            return try JSON.response(ClientWithSecret(client: client, clientSecret: secret), status: .created)
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
            try await services.database.transaction { executor in
                try await services.repositories.clients.delete(id: client.id, on: executor)
                try await services.audit.record(
                    "client.deleted", actor: "admin-key:\(key.id)", tenantID: tenant.id, target: ("client", client.id),
                    at: services.now(), on: executor)
            }
            return Response(status: .noContent)
        }
        router.post(RouterPath(base + "/{id}/secret")) { request, context in
            let (key, tenant) = try await guardian.tenant(request, context, holding: .clientsManage)
            let date = services.now()
            let client = Self.touched(try await find(context, tenant: tenant), at: date)
            let secret = Secrets.generate(prefix: "css_")
            try await services.database.transaction { executor in
                try await services.repositories.clients.replaceSecret(
                    id: client.id, secretHash: Secrets.hash(secret), at: date, on: executor)
                try await services.audit.record(
                    "client.secret_rotated", actor: "admin-key:\(key.id)", tenantID: tenant.id,
                    target: ("client", client.id), at: date, on: executor)
            }
            return try JSON.response(ClientWithSecret(client: client, clientSecret: secret))
        }
    }

    private func update(_ request: Request, _ context: CountersignRequestContext) async throws -> Response {
        let (key, tenant) = try await guardian.tenant(request, context, holding: .clientsManage)
        let existing = try await find(context, tenant: tenant)
        let fields = try await request.decodeJSON(ClientFields.self, limit: services.configuration.maximumBodySize)
        let client = try Self.patched(existing, applying: fields, at: services.now())
        try await services.database.transaction { executor in
            try await services.repositories.clients.update(client, on: executor)
            try await services.audit.record(
                "client.updated", actor: "admin-key:\(key.id)", tenantID: tenant.id, target: ("client", client.id),
                at: client.updatedAt, on: executor)
        }
        return try JSON.response(client)
    }

    private func find(_ context: CountersignRequestContext, tenant: Tenant) async throws -> Client {
        let id = try context.parameters.require("id")
        guard let client = try await services.repositories.clients.find(id: id, tenantID: tenant.id, on: services.database) else {
            throw AdminError.notFound("client \(id)")
        }
        return client
    }

    /// Applies the fields given and checks the result as a whole: ping and push clients need an
    /// https notification endpoint (http only for localhost, in development).
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
        if client.deliveryMode != .poll && client.notificationEndpoint == nil {
            throw .invalidField("notification_endpoint", "is required for the \(client.deliveryMode.rawValue) delivery mode")
        }
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
