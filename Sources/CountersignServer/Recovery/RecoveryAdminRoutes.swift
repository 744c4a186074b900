import CountersignCore
import Foundation
import Hummingbird

/// Recovery in the admin API, below `/admin/v1/tenants/{tenant}/users/{id}`:
///
/// - `GET …/recovery-codes` (`users:read`): whether the user has codes, how many are left, never
///   the codes; `DELETE …/recovery-codes` (`devices:manage`) revokes them.
/// - `POST …/temporary-access-passes` (`enrollments:create`): issues a pass, shown once in the
///   answer; `GET …/temporary-access-passes` (`users:read`) lists them; `DELETE
///   …/temporary-access-passes/{pass}` (`enrollments:create`) revokes one.
struct RecoveryAdminRoutes: Sendable {
    let service: RecoveryService
    let users: any UserAdminStore
    let guardian: AdminGuard
    let maximumBodySize: Int

    struct CodesView: Encodable, Sendable {
        let exists: Bool
        let total: Int
        let remaining: Int
        let createdAt: Date?
        let lastUsedAt: Date?

        init(_ set: RecoveryCodeSet?) {
            exists = set != nil
            total = set?.total ?? 0
            remaining = set?.remaining ?? 0
            createdAt = set?.createdAt
            lastUsedAt = set?.lastUsedAt
        }

        enum CodingKeys: String, CodingKey {
            case exists, total, remaining
            case createdAt = "created_at"
            case lastUsedAt = "last_used_at"
        }
    }

    struct PassRequest: Decodable {
        var startsAt: String?
        var lifetimeSeconds: Int?
        var oneTime: Bool?
        var allowedNetworks: [String]?

        enum CodingKeys: String, CodingKey {
            case startsAt = "starts_at"
            case lifetimeSeconds = "lifetime_seconds"
            case oneTime = "one_time"
            case allowedNetworks = "allowed_networks"
        }
    }

    struct PassView: Encodable, Sendable {
        let id: String
        let userID: String
        let state: String
        let startsAt: Date
        let expiresAt: Date
        let oneTime: Bool
        let allowedNetworks: [String]
        let uses: Int
        let lastUsedAt: Date?
        let revokedAt: Date?
        let createdBy: String
        let createdAt: Date

        init(_ pass: TemporaryAccessPass, at date: Date) {
            id = pass.id
            userID = pass.userID
            state = pass.state(at: date).rawValue
            startsAt = pass.startsAt
            expiresAt = pass.expiresAt
            oneTime = pass.oneTime
            allowedNetworks = pass.allowedNetworks
            uses = pass.uses
            lastUsedAt = pass.usedAt
            revokedAt = pass.revokedAt
            createdBy = pass.createdBy
            createdAt = pass.createdAt
        }

        enum CodingKeys: String, CodingKey {
            case id, state, uses
            case userID = "user_id"
            case startsAt = "starts_at"
            case expiresAt = "expires_at"
            case oneTime = "one_time"
            case allowedNetworks = "allowed_networks"
            case lastUsedAt = "last_used_at"
            case revokedAt = "revoked_at"
            case createdBy = "created_by"
            case createdAt = "created_at"
        }
    }

    struct IssuedPass: Encodable, Sendable {
        let pass: PassView
        /// Shown once.
        let code: String
    }

    struct PassList: Encodable, Sendable {
        let items: [PassView]
    }

    func register(on router: some RouterMethods<CountersignRequestContext>) {
        let base = "/admin/v1/tenants/{tenant}/users/{id}"
        let limit = maximumBodySize
        router.get(RouterPath(base + "/recovery-codes")) { request, context in
            let (_, tenant) = try await guardian.tenant(request, context, holding: .usersRead)
            let user = try await users.user(in: context, tenant: tenant)
            return try JSON.response(CodesView(try await service.store.codeSet(userID: user.id, tenantID: tenant.id)))
        }
        router.delete(RouterPath(base + "/recovery-codes")) { request, context in
            let (key, tenant) = try await guardian.tenant(request, context, holding: .devicesManage)
            let user = try await users.user(in: context, tenant: tenant)
            guard try await service.store.revokeCodes(
                userID: user.id, tenantID: tenant.id, actor: "admin-key:\(key.id)", at: service.now()) else {
                throw AdminError.notFound("recovery codes of user \(user.id)")
            }
            return Response(status: .noContent)
        }
        router.post(RouterPath(base + "/temporary-access-passes")) { request, context in
            let (key, tenant) = try await guardian.tenant(request, context, holding: .enrollmentsCreate)
            let user = try await users.user(in: context, tenant: tenant)
            guard user.status == .active else { throw AdminError.conflict("user \(user.id) is not active") }
            let body = try await request.bodyData(limit: limit)
            let asked = body.isEmpty ? PassRequest() : try JSON.decode(PassRequest.self, from: body)
            let issued = try await service.issuePass(for: user, try Self.validated(asked, now: service.now()),
                                                     actor: "admin-key:\(key.id)")
            return try JSON.response(
                IssuedPass(pass: PassView(issued.0, at: service.now()), code: issued.1.formatted), status: .created)
        }
        router.get(RouterPath(base + "/temporary-access-passes")) { request, context in
            let (_, tenant) = try await guardian.tenant(request, context, holding: .usersRead)
            let user = try await users.user(in: context, tenant: tenant)
            let date = service.now()
            return try JSON.response(PassList(
                items: try await service.store.passes(userID: user.id, tenantID: tenant.id).map { PassView($0, at: date) }))
        }
        router.delete(RouterPath(base + "/temporary-access-passes/{pass}")) { request, context in
            let (key, tenant) = try await guardian.tenant(request, context, holding: .enrollmentsCreate)
            let user = try await users.user(in: context, tenant: tenant)
            let passID = try context.parameters.require("pass")
            guard let pass = try await service.store.pass(id: passID, tenantID: tenant.id), pass.userID == user.id else {
                throw AdminError.notFound("temporary access pass \(passID)")
            }
            guard try await service.store.revokePass(
                id: pass.id, tenantID: tenant.id, actor: "admin-key:\(key.id)", at: service.now()) else {
                throw AdminError.conflict("temporary access pass \(pass.id) is already revoked")
            }
            return Response(status: .noContent)
        }
    }

    /// What the request asks for, each field checked: `lifetime_seconds` from 3600 to 2592000
    /// (default 3600), `starts_at` an RFC 3339 time no more than 30 days ahead (default now),
    /// `one_time` (default true), `allowed_networks` up to 20 CIDR blocks.
    static func validated(_ asked: PassRequest, now: Date) throws -> RecoveryService.PassRequest {
        let lifetime = asked.lifetimeSeconds ?? RecoveryService.passLifetimes.lowerBound
        guard RecoveryService.passLifetimes.contains(lifetime) else {
            throw AdminError.invalidField(
                "lifetime_seconds",
                "must be from \(RecoveryService.passLifetimes.lowerBound) (1 hour) to \(RecoveryService.passLifetimes.upperBound) (30 days)")
        }
        var startsAt: Date?
        if let text = asked.startsAt {
            guard let date = Timestamps.parse(text) else {
                throw AdminError.invalidField("starts_at", "must be an RFC 3339 time such as 2026-03-02T09:00:00Z")
            }
            guard date.timeIntervalSince(now) <= TimeInterval(RecoveryService.passLifetimes.upperBound) else {
                throw AdminError.invalidField("starts_at", "must be within 30 days from now")
            }
            startsAt = date
        }
        let texts = asked.allowedNetworks ?? []
        guard texts.count <= 20 else { throw AdminError.invalidField("allowed_networks", "must hold at most 20 networks") }
        var networks: [IPNetwork] = []
        for text in texts {
            do { networks.append(try IPNetwork(text)) } catch {
                throw AdminError.invalidField("allowed_networks", "\(error)")
            }
        }
        return RecoveryService.PassRequest(
            startsAt: startsAt, lifetimeSeconds: lifetime, oneTime: asked.oneTime ?? true, allowedNetworks: networks)
    }
}
