import Foundation

/// The storage of `radius_clients`.
protocol RADIUSClientRepository: Sendable {
    /// The tenant's RADIUS clients by id (creation order).
    func list(tenantID: String, on executor: any SQLExecutor) async throws -> [RADIUSClient]
    func find(id: String, tenantID: String, on executor: any SQLExecutor) async throws -> RADIUSClient?
    /// Every RADIUS client of every tenant with its sealed secret: what the listener matches a
    /// packet's source against.
    func all(on executor: any SQLExecutor) async throws -> [(client: RADIUSClient, sealedSecret: Data)]
    func count(tenantID: String, on executor: any SQLExecutor) async throws -> Int
    func insert(_ client: RADIUSClient, sealedSecret: Data, on executor: any SQLExecutor) async throws
    /// Stores the changed client as of its `updatedAt`; false when it is gone.
    func update(_ client: RADIUSClient, on executor: any SQLExecutor) async throws -> Bool
    /// Replaces the client's sealed secret.
    func replaceSecret(of client: RADIUSClient, with sealedSecret: Data, on executor: any SQLExecutor) async throws
    /// Deletes the client and returns it; nil when the tenant has none of that id.
    func delete(id: String, tenantID: String, on executor: any SQLExecutor) async throws -> RADIUSClient?
    /// Serialises the writes that must see every client's networks (networks may not overlap
    /// across tenants), until the transaction ends.
    func lockForNetworks(on executor: any SQLExecutor) async throws
}

struct SQLRADIUSClientRepository: RADIUSClientRepository {
    private typealias Row = RADIUSClientRow

    func list(tenantID: String, on executor: any SQLExecutor) async throws -> [RADIUSClient] {
        try await executor.all(
            "SELECT \(raw: Row.columns) FROM radius_clients WHERE tenant_id = \(tenantID) ORDER BY id", as: Row.self
        ).map { try $0.radiusClient() }
    }

    func find(id: String, tenantID: String, on executor: any SQLExecutor) async throws -> RADIUSClient? {
        try await executor.first(
            "SELECT \(raw: Row.columns) FROM radius_clients WHERE id = \(id) AND tenant_id = \(tenantID)", as: Row.self
        )?.radiusClient()
    }

    func all(on executor: any SQLExecutor) async throws -> [(client: RADIUSClient, sealedSecret: Data)] {
        try await executor.all("SELECT \(raw: Row.columns) FROM radius_clients ORDER BY id", as: Row.self)
            .map { (try $0.radiusClient(), $0.secretSealed) }
    }

    func count(tenantID: String, on executor: any SQLExecutor) async throws -> Int {
        try await executor.first(
            "SELECT COUNT(*) AS clients FROM radius_clients WHERE tenant_id = \(tenantID)", column: "clients", as: Int.self
        ) ?? 0
    }

    func insert(_ client: RADIUSClient, sealedSecret: Data, on executor: any SQLExecutor) async throws {
        let row = try Row(client, sealedSecret: sealedSecret)
        try await executor.run(
            """
            INSERT INTO radius_clients (id, tenant_id, name, networks, secret_sealed, mode, wait_seconds, strip_realm,
                strip_domain, unenrolled_users, reply_attributes, directory_password, allowed_groups, group_reply_attributes,
                created_at, updated_at)
            VALUES (\(row.id), \(row.tenantID), \(row.name), \(row.networks), \(row.secretSealed), \(row.mode),
                \(row.waitSeconds), \(row.stripRealm), \(row.stripDomain), \(row.unenrolledUsers), \(row.replyAttributes),
                \(row.directoryPassword), \(row.allowedGroups), \(row.groupReplyAttributes), \(row.createdAt), \(row.updatedAt))
            """)
    }

    func update(_ client: RADIUSClient, on executor: any SQLExecutor) async throws -> Bool {
        let row = try Row(client, sealedSecret: Data())
        return try await !executor.run(
            """
            UPDATE radius_clients SET name = \(row.name), networks = \(row.networks), mode = \(row.mode),
                wait_seconds = \(row.waitSeconds), strip_realm = \(row.stripRealm), strip_domain = \(row.stripDomain),
                unenrolled_users = \(row.unenrolledUsers), reply_attributes = \(row.replyAttributes),
                directory_password = \(row.directoryPassword), allowed_groups = \(row.allowedGroups),
                group_reply_attributes = \(row.groupReplyAttributes), updated_at = \(row.updatedAt)
            WHERE id = \(row.id) AND tenant_id = \(row.tenantID)
            RETURNING id
            """).isEmpty
    }

    func replaceSecret(of client: RADIUSClient, with sealedSecret: Data, on executor: any SQLExecutor) async throws {
        try await executor.run(
            """
            UPDATE radius_clients SET secret_sealed = \(sealedSecret), updated_at = \(client.updatedAt)
            WHERE id = \(client.id) AND tenant_id = \(client.tenantID)
            """)
    }

    func delete(id: String, tenantID: String, on executor: any SQLExecutor) async throws -> RADIUSClient? {
        try await executor.first(
            "DELETE FROM radius_clients WHERE id = \(id) AND tenant_id = \(tenantID) RETURNING \(raw: Row.columns)",
            as: Row.self
        )?.radiusClient()
    }

    func lockForNetworks(on executor: any SQLExecutor) async throws {
        // SQLite transactions begin IMMEDIATE and already exclude every other writer; on
        // PostgreSQL one lock of the transaction's for all tenants (the two-key space, apart from
        // the trusted issuers' 4242003).
        guard executor.dialect == .postgres else { return }
        try await executor.run("SELECT pg_advisory_xact_lock(4242004, 0) IS NULL AS locked")
    }
}

/// A row of `radius_clients` as stored.
struct RADIUSClientRow: Decodable {
    static let columns = CodingKeys.allCases.map(\.rawValue).joined(separator: ", ")

    var id: String
    var tenantID: String
    var name: String
    /// Space-separated CIDR networks.
    var networks: String
    var secretSealed: Data
    var mode: String
    var waitSeconds: Int
    var stripRealm: Bool
    var stripDomain: Bool
    var unenrolledUsers: String
    /// JSON array of `{name, value}`.
    var replyAttributes: String
    var directoryPassword: Bool
    /// Space-separated group ids.
    var allowedGroups: String
    /// JSON array of `{group, attributes}`.
    var groupReplyAttributes: String
    var createdAt: Date
    var updatedAt: Date

    enum CodingKeys: String, CodingKey, CaseIterable {
        case id
        case tenantID = "tenant_id"
        case name, networks
        case secretSealed = "secret_sealed"
        case mode
        case waitSeconds = "wait_seconds"
        case stripRealm = "strip_realm"
        case stripDomain = "strip_domain"
        case unenrolledUsers = "unenrolled_users"
        case replyAttributes = "reply_attributes"
        case directoryPassword = "directory_password"
        case allowedGroups = "allowed_groups"
        case groupReplyAttributes = "group_reply_attributes"
        case createdAt = "created_at"
        case updatedAt = "updated_at"
    }

    init(_ client: RADIUSClient, sealedSecret: Data) throws {
        id = client.id
        tenantID = client.tenantID
        name = client.name
        networks = client.networks.map(\.description).joined(separator: " ")
        secretSealed = sealedSecret
        mode = client.mode.rawValue
        waitSeconds = client.waitSeconds
        stripRealm = client.stripRealm
        stripDomain = client.stripDomain
        unenrolledUsers = client.unenrolledUsers.rawValue
        replyAttributes = String(decoding: try JSONEncoder().encode(client.replyAttributes), as: UTF8.self)
        directoryPassword = client.directoryPassword
        allowedGroups = client.allowedGroups.joined(separator: " ")
        groupReplyAttributes = String(decoding: try JSONEncoder().encode(client.groupReplyAttributes), as: UTF8.self)
        createdAt = client.createdAt
        updatedAt = client.updatedAt
    }

    func radiusClient() throws -> RADIUSClient {
        guard let mode = RADIUSClient.Mode(rawValue: mode),
              let unenrolled = RADIUSClient.UnenrolledUsers(rawValue: unenrolledUsers),
              let networks = try? networks.split(separator: " ").map({ try IPNetwork(String($0)) }),
              let attributes = try? JSONDecoder().decode([RADIUSReplyAttribute].self, from: Data(replyAttributes.utf8)),
              let groupReplies = try? JSONDecoder().decode([RADIUSGroupReply].self, from: Data(groupReplyAttributes.utf8))
        else {
            throw StorageError.corrupt("radius_clients \(id)")
        }
        return RADIUSClient(
            id: id, tenantID: tenantID, name: name, networks: networks, mode: mode, waitSeconds: waitSeconds,
            stripRealm: stripRealm, stripDomain: stripDomain, unenrolledUsers: unenrolled, replyAttributes: attributes,
            directoryPassword: directoryPassword, allowedGroups: allowedGroups.split(separator: " ").map(String.init),
            groupReplyAttributes: groupReplies, createdAt: createdAt, updatedAt: updatedAt)
    }
}
