import CountersignCore
import CountersignWebAuthn
import Foundation
import Hummingbird

/// A passkey as the admin API and the account page describe it: never its key, only what
/// tells one passkey from another and how much to trust it.
struct PasskeyRecord: Encodable, Sendable {
    let id: String
    let userID: String
    let name: String
    let credentialID: String
    let aaguid: String
    let algorithm: String
    let transports: [String]
    let backupEligible: Bool
    let backupState: Bool
    let userVerified: Bool
    let attestationFormat: String
    let attestationKind: String
    let attestationTrusted: Bool
    let signCount: Int64
    let createdAt: Date
    let lastUsedAt: Date?
    let cloneWarningAt: Date?

    init(_ passkey: Passkey) {
        id = passkey.id
        userID = passkey.userID
        name = passkey.name
        credentialID = passkey.credentialID.base64URLEncodedString
        aaguid = passkey.aaguidString
        algorithm = COSEAlgorithm(rawValue: passkey.algorithm)?.name ?? String(passkey.algorithm)
        transports = passkey.transports
        backupEligible = passkey.backupEligible
        backupState = passkey.backupState
        userVerified = passkey.uvInitialized
        attestationFormat = passkey.attestationFormat
        attestationKind = passkey.attestationKind
        attestationTrusted = passkey.attestationTrusted
        signCount = passkey.signCount
        createdAt = passkey.createdAt
        lastUsedAt = passkey.lastUsedAt
        cloneWarningAt = passkey.cloneWarningAt
    }

    enum CodingKeys: String, CodingKey {
        case id, name, aaguid, algorithm, transports
        case userID = "user_id"
        case credentialID = "credential_id"
        case backupEligible = "backup_eligible"
        case backupState = "backup_state"
        case userVerified = "user_verified"
        case attestationFormat = "attestation_format"
        case attestationKind = "attestation_kind"
        case attestationTrusted = "attestation_trusted"
        case signCount = "sign_count"
        case createdAt = "created_at"
        case lastUsedAt = "last_used_at"
        case cloneWarningAt = "clone_warning_at"
    }
}

/// `/admin/v1/tenants/{tenant}/users/{id}/passkeys`: a user's passkeys, listed with the right
/// to read devices and removed with the right to manage them (a passkey is an authenticator
/// like a phone).
struct PasskeyAdminRoutes: Sendable {
    let store: any PasskeyStore
    let guardian: AdminGuard
    let now: @Sendable () -> Date

    struct PasskeyList: Encodable, Sendable {
        let items: [PasskeyRecord]
    }

    func register(on router: some RouterMethods<CountersignRequestContext>) {
        let base = "/admin/v1/tenants/{tenant}/users/{id}/passkeys"
        router.get(RouterPath(base)) { request, context in
            let (_, tenant) = try await guardian.tenant(request, context, holding: .devicesRead)
            let user = try await user(context, tenant: tenant)
            let passkeys = try await store.passkeys(userID: user.id, tenantID: tenant.id)
            return try JSON.response(PasskeyList(items: passkeys.map(PasskeyRecord.init)))
        }
        router.get(RouterPath(base + "/{passkey}")) { request, context in
            let (_, tenant) = try await guardian.tenant(request, context, holding: .devicesRead)
            return try JSON.response(PasskeyRecord(try await passkey(context, tenant: tenant)))
        }
        router.delete(RouterPath(base + "/{passkey}")) { request, context in
            let (key, tenant) = try await guardian.tenant(request, context, holding: .devicesManage)
            let passkey = try await passkey(context, tenant: tenant)
            guard try await store.delete(passkey, actor: "admin-key:\(key.id)", at: now()) else {
                throw AdminError.notFound("passkey \(passkey.id)")
            }
            return Response(status: .noContent)
        }
    }

    private func user(_ context: CountersignRequestContext, tenant: Tenant) async throws -> User {
        let id = try context.parameters.require("id")
        guard let user = try await store.user(id: id, tenantID: tenant.id) else { throw AdminError.notFound("user \(id)") }
        return user
    }

    private func passkey(_ context: CountersignRequestContext, tenant: Tenant) async throws -> Passkey {
        let user = try await user(context, tenant: tenant)
        let id = try context.parameters.require("passkey")
        guard let passkey = try await store.passkey(id: id, tenantID: tenant.id), passkey.userID == user.id else {
            throw AdminError.notFound("passkey \(id)")
        }
        return passkey
    }
}
