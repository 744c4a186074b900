import CountersignCore
import Foundation
import Hummingbird

/// `/admin/v1/tenants/{tenant}/radius-clients`: the gateways and network devices of a tenant that
/// ask over RADIUS. Reading them takes `clients:read`, changing them `clients:manage`, as for the
/// tenant's relying parties.
struct RADIUSClientAdminRoutes: Sendable {
    let store: any RADIUSClientAdminStore
    let guardian: AdminGuard
    let sealer: SecretSealer
    let maximumBodySize: Int
    let now: @Sendable () -> Date

    /// A client with its shared secret, when Countersign generated it: shown once.
    struct ClientWithSecret: Encodable, Sendable {
        let radiusClient: RADIUSClient
        let secret: String?
        enum CodingKeys: String, CodingKey {
            case radiusClient = "radius_client"
            case secret
        }
    }

    /// The body of `POST …/{id}/secret`: a secret the gateway already has, or none for a new one.
    struct SecretRotation: Decodable, Sendable {
        var secret: String?
    }

    /// `client` with the groups `fields` name, by name or id, kept by id.
    private func groups(_ fields: RADIUSClientFields, in client: RADIUSClient) async throws -> RADIUSClient {
        var client = client
        // An id the client already holds stays, though its group was deleted since (it applies
        // to nobody): what GET shows can always be sent back.
        let held = Set(client.allowedGroups + client.groupReplyAttributes.map(\.group))
        func groupID(_ reference: String, _ field: String) async throws -> String {
            held.contains(reference) ? reference : try await store.resolveGroups([reference], tenantID: client.tenantID, field: field)[0]
        }
        if let references = fields.allowedGroups {
            var ids: [String] = []
            for reference in references {
                let id = try await groupID(reference, "allowed_groups")
                if !ids.contains(id) { ids.append(id) }
            }
            client.allowedGroups = ids
        }
        if let replies = fields.groupReplyAttributes {
            var resolved: [RADIUSGroupReply] = []
            for reply in replies {
                let id = try await groupID(reply.group, "group_reply_attributes")
                guard !resolved.contains(where: { $0.group == id }) else {
                    throw AdminError.invalidField("group_reply_attributes", "names the group \(reply.group) twice")
                }
                resolved.append(RADIUSGroupReply(group: id, attributes: reply.attributes))
            }
            client.groupReplyAttributes = resolved
        }
        return client
    }

    func register(on router: some RouterMethods<CountersignRequestContext>) {
        let base = "/admin/v1/tenants/{tenant}/radius-clients"
        router.get(RouterPath(base)) { request, context in
            let (_, tenant) = try await guardian.tenant(request, context, holding: .clientsRead)
            // Every client in one page, in the shape of every list (docs/api.md §5), as trusted
            // issuers and webhooks are listed.
            return try JSON.response(Page(items: try await store.list(tenantID: tenant.id), nextCursor: nil))
        }
        router.post(RouterPath(base)) { request, context in
            let (key, tenant) = try await guardian.tenant(request, context, holding: .clientsManage)
            let fields = try await request.decodeJSON(RADIUSClientFields.self, limit: maximumBodySize)
            let date = stamp()
            let client = try await groups(fields, in: try fields.created(id: Identifier.make("rdc", at: date), tenantID: tenant.id, at: date))
            try await DirectoryPresence.check(fields.directoryPassword) { try await store.hasDirectory(tenantID: tenant.id) }
            let secret = fields.secret ?? RADIUSClientFields.generatedSecret()
            try Self.stored(try await store.create(
                client, sealedSecret: try seal(secret, for: client), actor: "admin-key:\(key.id)"), id: client.id)
            return try JSON.response(
                ClientWithSecret(radiusClient: client, secret: fields.secret == nil ? secret : nil), status: .created)
        }
        router.get(RouterPath(base + "/{id}")) { request, context in
            let (_, tenant) = try await guardian.tenant(request, context, holding: .clientsRead)
            return try JSON.response(try await find(context, tenant: tenant))
        }
        router.patch(RouterPath(base + "/{id}")) { request, context in
            let (key, tenant) = try await guardian.tenant(request, context, holding: .clientsManage)
            let existing = try await find(context, tenant: tenant)
            let fields = try await request.decodeJSON(RADIUSClientFields.self, limit: maximumBodySize)
            guard fields.secret == nil else {
                throw AdminError.invalidField("secret", "is changed with POST \(base)/{id}/secret")
            }
            let client = try await groups(fields, in: try fields.applied(to: existing, at: stamp()))
            try await DirectoryPresence.check(fields.directoryPassword) { try await store.hasDirectory(tenantID: tenant.id) }
            try Self.stored(try await store.update(client, sealedSecret: nil, actor: "admin-key:\(key.id)"), id: client.id)
            return try JSON.response(client)
        }
        router.delete(RouterPath(base + "/{id}")) { request, context in
            let (key, tenant) = try await guardian.tenant(request, context, holding: .clientsManage)
            let id = try context.parameters.require("id")
            guard try await store.delete(id: id, tenantID: tenant.id, actor: "admin-key:\(key.id)", at: now()) != nil else {
                throw AdminError.notFound("RADIUS client \(id)")
            }
            return Response(status: .noContent)
        }
        router.post(RouterPath(base + "/{id}/secret")) { request, context in
            let (key, tenant) = try await guardian.tenant(request, context, holding: .clientsManage)
            var client = try await find(context, tenant: tenant)
            let given = try await Self.rotation(request, limit: maximumBodySize).secret
            try RADIUSClientFields.checkSecret(given)
            client.updatedAt = stamp()
            let secret = given ?? RADIUSClientFields.generatedSecret()
            try Self.stored(try await store.update(
                client, sealedSecret: try seal(secret, for: client), actor: "admin-key:\(key.id)"), id: client.id)
            return try JSON.response(ClientWithSecret(radiusClient: client, secret: given == nil ? secret : nil))
        }
    }

    /// Now, to the millisecond the database keeps: the answer to a write shows the times a later
    /// read does.
    private func stamp() -> Date {
        Date(timeIntervalSince1970: (now().timeIntervalSince1970 * 1000).rounded(.down) / 1000)
    }

    /// The rotation's body; an empty body asks for a generated secret.
    private static func rotation(_ request: Request, limit: Int) async throws -> SecretRotation {
        let body = try await request.bodyData(limit: limit)
        guard !body.isEmpty else { return SecretRotation(secret: nil) }
        return try JSON.decode(SecretRotation.self, from: body)
    }

    private func seal(_ secret: String, for client: RADIUSClient) throws -> Data {
        try sealer.seal(Data(secret.utf8), context: RADIUSClient.secretContext(client.id))
    }

    private static func stored(_ write: RADIUSClientWrite, id: String) throws {
        switch write {
        case .stored: return
        case .notFound: throw AdminError.notFound("RADIUS client \(id)")
        case .limitReached:
            throw AdminError.conflict("the tenant has \(RADIUSClient.maximumPerTenant) RADIUS clients, the most allowed")
        case .networkTaken(let network, let clientID?):
            throw AdminError.conflict("network \(network) overlaps a network of RADIUS client \(clientID)")
        case .networkTaken(let network, nil):
            throw AdminError.conflict("network \(network) overlaps a network of another tenant's RADIUS client")
        }
    }

    private func find(_ context: CountersignRequestContext, tenant: Tenant) async throws -> RADIUSClient {
        let id = try context.parameters.require("id")
        guard let client = try await store.find(id: id, tenantID: tenant.id) else {
            throw AdminError.notFound("RADIUS client \(id)")
        }
        return client
    }
}
