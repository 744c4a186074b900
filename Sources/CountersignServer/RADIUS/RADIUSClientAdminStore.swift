import Foundation

/// What the RADIUS client routes (`RADIUSClientAdminRoutes`) read and write. Each write is one
/// transaction with its audit record (never the secret), and tells every node's listener to read
/// the clients again.
protocol RADIUSClientAdminStore: Sendable {
    func list(tenantID: String) async throws -> [RADIUSClient]
    func find(id: String, tenantID: String) async throws -> RADIUSClient?
    /// Whether the tenant has a directory, which `directory_password` needs.
    func hasDirectory(tenantID: String) async throws -> Bool
    /// The ids of the groups `references` name (`GroupReferences`).
    func resolveGroups(_ references: [String], tenantID: String, field: String) async throws -> [String]
    /// Stores the new client unless one of its networks overlaps another client's, of any tenant.
    func create(_ client: RADIUSClient, sealedSecret: Data, actor: String) async throws -> RADIUSClientWrite
    /// Stores the changed client (and its new sealed secret, if given) unless one of its networks
    /// overlaps another client's.
    func update(_ client: RADIUSClient, sealedSecret: Data?, actor: String) async throws -> RADIUSClientWrite
    /// Deletes the client and records it; nil when the tenant has none of that id.
    func delete(id: String, tenantID: String, actor: String, at date: Date) async throws -> RADIUSClient?
}

/// What a write did.
enum RADIUSClientWrite: Sendable, Equatable {
    case stored
    /// The client was deleted meanwhile.
    case notFound
    /// The tenant has `RADIUSClient.maximumPerTenant` already.
    case limitReached
    /// `network` overlaps a network of another RADIUS client: `clientID` when it is the same
    /// tenant's, nil when another tenant's (whose clients this tenant may not see).
    case networkTaken(network: String, clientID: String?)
}

struct SQLRADIUSClientAdminStore: RADIUSClientAdminStore {
    let database: any Database
    let clients: any RADIUSClientRepository
    let relay: ClusterRelay
    let audit: AuditLog

    func hasDirectory(tenantID: String) async throws -> Bool {
        try await DirectoryPresence.configured(tenantID: tenantID, on: database)
    }

    func resolveGroups(_ references: [String], tenantID: String, field: String) async throws -> [String] {
        try await GroupReferences.resolve(references, tenantID: tenantID, field: field, on: database)
    }

    func list(tenantID: String) async throws -> [RADIUSClient] {
        try await clients.list(tenantID: tenantID, on: database)
    }

    func find(id: String, tenantID: String) async throws -> RADIUSClient? {
        try await clients.find(id: id, tenantID: tenantID, on: database)
    }

    func create(_ client: RADIUSClient, sealedSecret: Data, actor: String) async throws -> RADIUSClientWrite {
        try await database.transaction { executor in
            try await clients.lockForNetworks(on: executor)
            if let taken = try await overlap(client, on: executor) { return taken }
            guard try await clients.count(tenantID: client.tenantID, on: executor) < RADIUSClient.maximumPerTenant else {
                return .limitReached
            }
            try await clients.insert(client, sealedSecret: sealedSecret, on: executor)
            try await audit.record(
                "radius_client.created", actor: actor, tenantID: client.tenantID, target: ("radius_client", client.id),
                details: Self.details(client), at: client.createdAt, on: executor)
            try await relay.announceChanged(.radiusClients, on: executor)
            return .stored
        }
    }

    func update(_ client: RADIUSClient, sealedSecret: Data?, actor: String) async throws -> RADIUSClientWrite {
        try await database.transaction { executor in
            try await clients.lockForNetworks(on: executor)
            if let taken = try await overlap(client, on: executor) { return taken }
            guard try await clients.update(client, on: executor) else { return .notFound }
            var details = Self.details(client)
            if let sealedSecret {
                try await clients.replaceSecret(of: client, with: sealedSecret, on: executor)
                details["secret"] = "replaced"
            }
            try await audit.record(
                sealedSecret == nil ? "radius_client.updated" : "radius_client.secret_rotated", actor: actor,
                tenantID: client.tenantID, target: ("radius_client", client.id), details: details, at: client.updatedAt,
                on: executor)
            try await relay.announceChanged(.radiusClients, on: executor)
            return .stored
        }
    }

    func delete(id: String, tenantID: String, actor: String, at date: Date) async throws -> RADIUSClient? {
        try await database.transaction { executor in
            guard let deleted = try await clients.delete(id: id, tenantID: tenantID, on: executor) else { return nil }
            try await audit.record(
                "radius_client.deleted", actor: actor, tenantID: tenantID, target: ("radius_client", id),
                details: ["name": deleted.name], at: date, on: executor)
            try await relay.announceChanged(.radiusClients, on: executor)
            return deleted
        }
    }

    private func overlap(_ client: RADIUSClient, on executor: any SQLExecutor) async throws -> RADIUSClientWrite? {
        for (other, _) in try await clients.all(on: executor) where other.id != client.id {
            for network in client.networks where other.networks.contains(where: { $0.overlaps(network) }) {
                return .networkTaken(
                    network: network.description, clientID: other.tenantID == client.tenantID ? other.id : nil)
            }
        }
        return nil
    }

    private static func details(_ client: RADIUSClient) -> [String: String] {
        ["name": client.name, "networks": client.networks.map(\.description).joined(separator: " "),
         "mode": client.mode.rawValue, "wait_seconds": String(client.waitSeconds),
         "unenrolled_users": client.unenrolledUsers.rawValue]
    }
}
