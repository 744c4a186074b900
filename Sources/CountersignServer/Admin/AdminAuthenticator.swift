import Foundation
import Synchronization

/// Issues admin keys and checks the ones presented. A key is `<id>.<secret>`: the id finds the
/// row, the SHA-256 of the whole key is compared in constant time with the stored hash.
public struct AdminAuthenticator: Sendable {
    let database: any Database
    let keys: any AdminKeyRepository
    let audit: AuditLog

    /// Issues a key; the returned secret is shown once and never stored.
    public func issue(tenantID: String?, name: String, rights: [AdminRight], createdBy: String?, at date: Date,
                      on executor: any SQLExecutor) async throws -> (AdminKey, secret: String) {
        let id = Identifier.make("key", at: date)
        let secret = "\(id).\(Secrets.randomBytes(32).base64URLEncodedString)"
        let key = AdminKey(id: id, tenantID: tenantID, name: name, rights: Array(Set(rights)).sorted(),
                           createdBy: createdBy, createdAt: date)
        try await keys.insert(key, secretHash: Secrets.hash(secret), on: executor)
        try await audit.record("admin_key.created", actor: createdBy ?? "system", tenantID: tenantID,
                               target: ("admin_key", id),
                               details: ["name": name, "rights": key.rights.map(\.rawValue).joined(separator: " ")],
                               at: date, on: executor)
        return (key, secret)
    }

    /// The key an `Authorization: Bearer …` header presents.
    public func authenticate(authorization: String?, at date: Date) async throws -> AdminKey {
        guard let authorization, authorization.count > 7, authorization.prefix(7).lowercased() == "bearer " else {
            throw AdminError.missingCredentials
        }
        let secret = authorization.dropFirst(7).trimmingCharacters(in: .whitespaces)
        guard let dot = secret.firstIndex(of: "."), secret.count < 200 else { throw AdminError.invalidCredentials }
        let id = String(secret[..<dot])
        guard let (key, storedHash) = try await keys.find(id: id, on: database) else {
            // Hash anyway, so an unknown id takes as long as a wrong secret.
            _ = Secrets.matches(secret, storedHash: Data(count: 32))
            throw AdminError.invalidCredentials
        }
        guard Secrets.matches(secret, storedHash: storedHash), key.revokedAt == nil else {
            throw AdminError.invalidCredentials
        }
        // Recording every use would turn every read into a write; once a minute is enough.
        if key.lastUsedAt.map({ date.timeIntervalSince($0) > 60 }) ?? true {
            try await keys.touch(id: key.id, at: date, on: database)
        }
        return key
    }
}
