import CountersignCore
import CountersignLDAP
import Foundation
import Hummingbird

extension DirectorySyncError: APIFailure {
    var apiError: APIError {
        switch self {
        case .notConfigured: .notFound(description)
        case .alreadyRunning, .emptyAnswer: APIError(.conflict, .conflict, description)
        case .directory: APIError(.badGateway, DeviceErrorCode(rawValue: "directory_unavailable"), description)
        }
    }
}

/// `/admin/v1/tenants/{tenant}/directory`: the tenant's LDAP directory, its connection test and
/// its sync. Everything takes `directory:manage`, reading included (the settings name the
/// organisation's servers and service account).
struct DirectoryAdminRoutes: Sendable {
    let database: any Database
    let directories: any DirectoryRepository
    let sync: DirectorySync
    let guardian: AdminGuard
    let sealer: SecretSealer
    let audit: AuditLog
    let maximumBodySize: Int
    let now: @Sendable () -> Date

    /// The body of `POST …/directory/sync`.
    struct SyncRequest: Decodable, Sendable {
        var dryRun: Bool?
        enum CodingKeys: String, CodingKey { case dryRun = "dry_run" }
    }

    /// The answer of `POST …/directory/test`.
    struct TestResult: Encodable, Sendable {
        /// How many entries the user search found.
        let usersFound: Int
        /// The first few of their usernames, to show the filter matches whom it should.
        let sample: [String]
        enum CodingKeys: String, CodingKey {
            case sample
            case usersFound = "users_found"
        }
    }

    func register(on router: some RouterMethods<CountersignRequestContext>) {
        let base = "/admin/v1/tenants/{tenant}/directory"
        router.get(RouterPath(base)) { request, context in
            let (_, tenant) = try await guardian.tenant(request, context, holding: .directoryManage)
            guard let (directory, _) = try await directories.find(tenantID: tenant.id, on: database) else {
                throw DirectorySyncError.notConfigured
            }
            return try JSON.response(directory)
        }
        router.put(RouterPath(base)) { request, context in
            let (key, tenant) = try await guardian.tenant(request, context, holding: .directoryManage)
            let fields = try await request.decodeJSON(DirectoryFields.self, limit: maximumBodySize)
            let existing = try await directories.find(tenantID: tenant.id, on: database)?.directory
            let date = now()
            let (directory, password) = try fields.directory(tenantID: tenant.id, existing: existing, at: date)
            let sealed = try password.map { try sealer.seal(Data($0.utf8), context: DirectorySync.sealingContext(tenantID: tenant.id)) }
            try await database.transaction { executor in
                try await directories.save(directory, sealedPassword: sealed, nextSyncAt: directory.nextSync(after: date),
                                           on: executor)
                var details = ["servers": directory.servers.joined(separator: " "), "security": directory.security.rawValue,
                               "bind_dn": directory.bindDN, "user_base_dn": directory.userBaseDN]
                if sealed != nil { details["bind_password"] = "set" }
                try await audit.record(
                    existing == nil ? "directory.created" : "directory.updated", actor: "admin-key:\(key.id)",
                    tenantID: tenant.id, target: ("directory", tenant.id), details: details, at: date, on: executor)
            }
            return try JSON.response(directory, status: existing == nil ? .created : .ok)
        }
        router.delete(RouterPath(base)) { request, context in
            let (key, tenant) = try await guardian.tenant(request, context, holding: .directoryManage)
            let date = now()
            let deleted = try await database.transaction { executor in
                guard try await directories.delete(tenantID: tenant.id, on: executor) else { return false }
                try await audit.record(
                    "directory.deleted", actor: "admin-key:\(key.id)", tenantID: tenant.id, target: ("directory", tenant.id),
                    at: date, on: executor)
                return true
            }
            guard deleted else { throw DirectorySyncError.notConfigured }
            return Response(status: .noContent)
        }
        router.post(RouterPath(base + "/test")) { request, context in
            let (_, tenant) = try await guardian.tenant(request, context, holding: .directoryManage)
            return try JSON.response(try await test(tenantID: tenant.id))
        }
        router.post(RouterPath(base + "/sync")) { request, context in
            let (key, tenant) = try await guardian.tenant(request, context, holding: .directoryManage)
            let body = try await request.bodyData(limit: maximumBodySize)
            let dryRun = body.isEmpty ? false : try JSON.decode(SyncRequest.self, from: body).dryRun ?? false
            return try JSON.response(
                try await sync.run(tenantID: tenant.id, dryRun: dryRun, actor: "admin-key:\(key.id)"))
        }
        router.get(RouterPath(base + "/sync")) { request, context in
            let (_, tenant) = try await guardian.tenant(request, context, holding: .directoryManage)
            guard try await directories.find(tenantID: tenant.id, on: database) != nil else {
                throw DirectorySyncError.notConfigured
            }
            guard let record = try await directories.lastSync(tenantID: tenant.id, on: database) else {
                throw AdminError.notFound("a sync of this directory")
            }
            return try JSON.response(record)
        }
    }

    /// Connects, binds as the service account and runs the user search, as a sync would.
    func test(tenantID: String) async throws -> TestResult {
        let (directory, client) = try await sync.client(tenantID: tenantID)
        do {
            try await client.check()
            let found = try await client.search(
                base: directory.userBaseDN, filter: LDAPFilter(directory.userFilter),
                attributes: [directory.attributes.username], pageSize: directory.pageSize)
            return TestResult(
                usersFound: found.count, sample: found.prefix(5).compactMap { $0.string(directory.attributes.username) })
        } catch {
            throw DirectorySyncError.directory(error)
        }
    }
}
