import Foundation

/// What the RADIUS server (`RADIUSAuthentication`) reads and writes, and nothing else.
protocol RADIUSStore: Sendable {
    func tenant(id: String) async throws -> Tenant?
    func user(username: String, tenantID: String) async throws -> User?
    func hasActiveDevice(userID: String) async throws -> Bool
    /// The ids of the groups the user is in.
    func groupIDs(userID: String) async throws -> Set<String>
    func transaction(id: String) async throws -> ApprovalTransaction?
    func login(radiusClientID: String, userID: String, callingStation: String) async throws -> RADIUSLogin?
    func login(radiusClientID: String, state: Data) async throws -> RADIUSLogin?
    func claim(_ login: RADIUSLogin, replacing: String?) async throws -> Bool
    /// Ties the claimed login to its request; `state`, when given, makes it a challenge (a risk
    /// rule raised the request to number matching).
    func attach(login: String, transactionID: String, expiresAt: Date, state: Data?) async throws
    func release(login: String) async throws
    func accept(login: String, request: Data) async throws -> Bool
    /// Records a user without a device let in, as the RADIUS client's `unenrolled_users` says.
    func recordUnenrolledAccepted(_ client: RADIUSClient, user: User, at date: Date) async throws
    /// Records packets dropped from `source` for `reason` (the caller limits how often).
    func recordDropped(reason: String, source: String, radiusClient: RADIUSClient?, count: Int, at date: Date) async throws
    func sweepLogins(before date: Date) async throws
}

/// The RADIUS server's store on the server's database (SQLite or PostgreSQL).
struct SQLRADIUSStore: RADIUSStore {
    let database: any Database
    let tenants: any TenantRepository
    let users: any UserRepository
    let devices: any DeviceRepository
    let approvals: any ApprovalTransactionRepository
    let logins: any RADIUSLoginRepository
    let audit: AuditLog
    /// Creates a user the tenant's directory has on first use.
    var directory: DirectoryLookup? = nil

    func tenant(id: String) async throws -> Tenant? {
        try await tenants.find(id: id, on: database)
    }

    func user(username: String, tenantID: String) async throws -> User? {
        if let user = try await users.find(username: username, tenantID: tenantID, on: database) { return user }
        return await directory?.provision(username: username, tenantID: tenantID)
    }

    func groupIDs(userID: String) async throws -> Set<String> {
        try await GroupReferences.groupIDs(of: userID, on: database)
    }

    func hasActiveDevice(userID: String) async throws -> Bool {
        try await !devices.list(userID: userID, after: nil, limit: 1, on: database).isEmpty
    }

    func transaction(id: String) async throws -> ApprovalTransaction? {
        try await approvals.find(id: id, on: database)
    }

    func login(radiusClientID: String, userID: String, callingStation: String) async throws -> RADIUSLogin? {
        try await logins.find(radiusClientID: radiusClientID, userID: userID, callingStation: callingStation, on: database)
    }

    func login(radiusClientID: String, state: Data) async throws -> RADIUSLogin? {
        try await logins.find(radiusClientID: radiusClientID, state: state, on: database)
    }

    func claim(_ login: RADIUSLogin, replacing: String?) async throws -> Bool {
        try await logins.claim(login, replacing: replacing, on: database)
    }

    func attach(login: String, transactionID: String, expiresAt: Date, state: Data?) async throws {
        try await logins.attach(login: login, transactionID: transactionID, expiresAt: expiresAt, state: state, on: database)
    }

    func release(login: String) async throws {
        try await logins.release(login: login, on: database)
    }

    func accept(login: String, request: Data) async throws -> Bool {
        try await logins.accept(login: login, request: request, on: database)
    }

    func recordUnenrolledAccepted(_ client: RADIUSClient, user: User, at date: Date) async throws {
        try await audit.record(
            "radius.unenrolled_accepted", actor: "radius-client:\(client.id)", tenantID: client.tenantID,
            target: ("user", user.id), details: ["radius_client": client.name], at: date, on: database)
    }

    func recordDropped(reason: String, source: String, radiusClient: RADIUSClient?, count: Int, at date: Date) async throws {
        var details = ["reason": reason, "source": source, "count": String(count)]
        details["radius_client"] = radiusClient?.name
        try await audit.record(
            "radius.dropped", actor: "system", tenantID: radiusClient?.tenantID,
            target: ("radius_client", radiusClient?.id ?? "unknown"), details: details, at: date, on: database)
    }

    func sweepLogins(before date: Date) async throws {
        try await logins.sweep(before: date, on: database)
    }
}
