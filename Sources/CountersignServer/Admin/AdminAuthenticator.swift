import Foundation
import Synchronization

/// Issues admin keys and checks the ones presented. A key is `<id>.<secret>`: the id finds the
/// row, the SHA-256 of the whole key is compared in constant time with the stored hash.
public struct AdminAuthenticator: Sendable {
    let store: any AdminAuthenticatorStore
    let throttle: FailedAuthenticationThrottle
    let metrics: ServerMetrics

    /// Issues a key, on the transaction of `executor` (the caller's: the first start's, or the
    /// admin API's); the returned secret is shown once and never stored.
    public func issue(tenantID: String?, name: String, rights: [AdminRight], createdBy: String?, at date: Date,
                      on executor: any SQLExecutor) async throws -> (AdminKey, secret: String) {
        let id = Identifier.make("key", at: date)
        let secret = "\(id).\(Secrets.randomBytes(32).base64URLEncodedString)"
        let key = AdminKey(id: id, tenantID: tenantID, name: name, rights: Array(Set(rights)).sorted(),
                           createdBy: createdBy, createdAt: date)
        try await store.recordIssued(key, secretHash: Secrets.hash(secret), on: executor)
        return (key, secret)
    }

    /// A failed key id is counted, known or not; past the limit it is answered 429 instead of 401.
    private func failure(id: String) -> AdminError {
        let key = FailedAuthenticationThrottle.adminKey(id)
        if let wait = throttle.retryAfter(key) {
            metrics.authenticationThrottled(limit: "admin_key")
            return .throttled(retryAfter: wait)
        }
        throttle.recordFailure(key)
        return .invalidCredentials
    }

    /// The key an `Authorization: Bearer …` header presents.
    public func authenticate(authorization: String?, at date: Date) async throws -> AdminKey {
        guard let authorization, authorization.count > 7, authorization.prefix(7).lowercased() == "bearer " else {
            throw AdminError.missingCredentials
        }
        let secret = authorization.dropFirst(7).trimmingCharacters(in: .whitespaces)
        guard let dot = secret.firstIndex(of: "."), secret.count < 200 else { throw AdminError.invalidCredentials }
        let id = String(secret[..<dot])
        guard let (key, storedHash) = try await store.key(id: id) else {
            // Hash anyway, so an unknown id takes as long as a wrong secret.
            _ = Secrets.matches(secret, storedHash: Data(count: 32))
            throw failure(id: id)
        }
        guard Secrets.matches(secret, storedHash: storedHash), key.revokedAt == nil else {
            throw failure(id: id)
        }
        // Recording every use would turn every read into a write; once a minute is enough.
        if key.lastUsedAt.map({ date.timeIntervalSince($0) > 60 }) ?? true {
            try await store.recordUse(keyID: key.id, at: date)
        }
        return key
    }
}
