import CountersignCore
import Foundation
import Hummingbird

/// `/admin/v1/tenants/{tenant}/clients`: the relying parties of a tenant.
struct ClientAdminRoutes: Sendable {
    let store: any ClientAdminStore
    let guardian: AdminGuard
    let maximumBodySize: Int
    let now: @Sendable () -> Date

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
            let registration = try await request.decodeJSON(ClientRegistration.self, limit: maximumBodySize)
            let date = now()
            let client = try await groups(
                registration, in: try registration.registered(id: Identifier.make("cli", at: date), tenant: tenant, at: date))
            try await DirectoryPresence.check(registration.directoryPassword) { try await store.hasDirectory(tenantID: tenant.id) }
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
        let registration = try await request.decodeJSON(ClientRegistration.self, limit: maximumBodySize)
        let client = try await groups(registration, in: try registration.applied(to: existing, tenant: tenant, at: now()))
        try await DirectoryPresence.check(registration.directoryPassword) { try await store.hasDirectory(tenantID: tenant.id) }
        // The old secret must not come back to life if the client is switched back later.
        let forgottenSecret = existing.authenticationMethod.usesSecret && !client.authenticationMethod.usesSecret
            ? Secrets.hash(Secrets.generate(prefix: "css_")) : nil
        try await store.update(client, replacingSecretWith: forgottenSecret, actor: "admin-key:\(key.id)")
        return try JSON.response(client)
    }

    /// `client` with the groups `registration` names, by name or id, kept by id.
    private func groups(_ registration: ClientRegistration, in client: Client) async throws -> Client {
        guard let references = registration.allowedGroups else { return client }
        guard references.count <= Client.maximumAllowedGroups else {
            throw AdminError.invalidField("allowed_groups", "name at most \(Client.maximumAllowedGroups) groups")
        }
        var client = client
        // An id the client already holds stays, though its group was deleted since (it admits
        // nobody): what GET shows can always be sent back.
        var ids: [String] = []
        for reference in references {
            let id = client.allowedGroups.contains(reference) ? reference
                : try await store.resolveGroups([reference], tenantID: client.tenantID, field: "allowed_groups")[0]
            if !ids.contains(id) { ids.append(id) }
        }
        client.allowedGroups = ids
        return client
    }

    private func find(_ context: CountersignRequestContext, tenant: Tenant) async throws -> Client {
        let id = try context.parameters.require("id")
        guard let client = try await store.client(id: id, tenantID: tenant.id) else {
            throw AdminError.notFound("client \(id)")
        }
        return client
    }

    static func touched(_ client: Client, at date: Date) -> Client {
        var touched = client
        touched.updatedAt = date
        return touched
    }
}
