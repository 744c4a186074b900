import Foundation
import Hummingbird

/// A registered passkey that the tenant's rules for its user, or the FIDO metadata, would refuse
/// today: listed so that an administrator can revoke it
/// (`DELETE /admin/v1/tenants/{tenant}/users/{id}/passkeys/{passkey}`).
struct PasskeyFinding: Encodable, Sendable {
    let passkey: PasskeyRecord
    let username: String
    /// The model's description in the FIDO metadata, when the loaded BLOB has it.
    let model: String?
    let findings: [String]
}

/// Checks a tenant's registered passkeys against its passkey rules as they are now (with the
/// rules of each user's groups) and against the FIDO metadata's latest statuses.
struct PasskeyFindings: Sendable {
    /// Passkeys read per request at most; the page's cursor says where the next one resumes.
    static let scanLimit = 2_000

    let store: any PasskeyStore
    let metadata: AuthenticatorMetadataService
    let now: @Sendable () -> Date

    /// Up to `page.limit` findings after `page.cursor` (a passkey id), with the cursor of the
    /// next page: the last passkey read when more may follow.
    func list(tenant: Tenant, page: PageRequest) async throws -> Page<PasskeyFinding> {
        let settings = tenant.policy.passkeys
        let snapshot = try await metadata.snapshot()
        let date = now()
        var found: [PasskeyFinding] = []
        var cursor = page.cursor
        var scanned = 0
        var users: [String: (username: String, rules: PasskeyRules)] = [:]
        reading: while scanned < Self.scanLimit {
            let batch = try await store.passkeys(tenantID: tenant.id, after: cursor, limit: 200)
            for passkey in batch {
                cursor = passkey.id
                scanned += 1
                if users[passkey.userID] == nil {
                    let groups = settings.groupRules.isEmpty ? [] : try await store.groupIDs(userID: passkey.userID)
                    let username = try await store.user(id: passkey.userID, tenantID: tenant.id)?.username ?? passkey.userID
                    users[passkey.userID] = (username, settings.rules(for: groups))
                }
                guard let user = users[passkey.userID] else { continue }
                let entry = snapshot.entry(aaguid: passkey.aaguidString)
                let findings = user.rules.findings(
                    aaguid: passkey.aaguidString, backupEligible: passkey.backupEligible,
                    attestationTrusted: passkey.attestationTrusted, userVerified: passkey.uvInitialized, metadata: entry, at: date)
                guard !findings.isEmpty else { continue }
                found.append(PasskeyFinding(
                    passkey: PasskeyRecord(passkey), username: user.username, model: entry?.description, findings: findings))
                if found.count == page.limit { break reading }
            }
            if batch.count < 200 { return Page(items: found, nextCursor: nil) }
        }
        return Page(items: found, nextCursor: cursor)
    }
}
