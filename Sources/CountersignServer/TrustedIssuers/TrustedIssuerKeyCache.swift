import Foundation
import Logging

/// The keys of the trusted issuers that publish them at a `jwks_uri`, kept in memory per tenant,
/// issuer and URI (so a changed URI is fetched at once) for `lifetime`.
///
/// A token naming a `kid` the cached set lacks makes the cache fetch again, because that is how
/// an issuer's key rotation first shows; but at most once every `refetchInterval`, so that
/// tokens with invented `kid`s cannot make the server hammer the issuer. A failed fetch is
/// remembered for as long, for the same reason, and logged; the token's holder is told only that
/// the keys could not be fetched. Several requests needing the same set at once share one fetch.
actor TrustedIssuerKeyCache {
    static let lifetime: TimeInterval = 300
    static let refetchInterval: TimeInterval = 30

    private struct Key: Hashable {
        let tenantID: String
        let issuer: String
        let uri: String
    }

    private struct Entry {
        var keys: ClientJWKS?
        /// When `keys` were fetched.
        var fetchedAt: Date = .distantPast
        /// When the last fetch began, whether or not it succeeded.
        var attemptedAt: Date = .distantPast
        var failed = false
    }

    private let fetcher: any JWKSFetcher
    private let logger: Logger
    private let now: @Sendable () -> Date
    private var entries: [Key: Entry] = [:]
    private var fetches: [Key: Task<Result<ClientJWKS, JWKSFetchError>, Never>] = [:]

    init(fetcher: any JWKSFetcher, logger: Logger, now: @escaping @Sendable () -> Date) {
        self.fetcher = fetcher
        self.logger = logger
        self.now = now
    }

    /// The issuer's key set from `uri`. `lacksKey` says whether a set misses the key the token
    /// names; a fresh set that does is fetched again if the last fetch is old enough, and is
    /// returned as it is otherwise (the verifier then finds no key).
    func keys(of issuer: TrustedIssuer, at uri: String, lacksKey: @Sendable (ClientJWKS) -> Bool)
        async throws(TrustedIssuerTokenRejection) -> ClientJWKS {
        let key = Key(tenantID: issuer.tenantID, issuer: issuer.issuer, uri: uri)
        let date = now()
        let entry = entries[key] ?? Entry()
        let mayFetch = date.timeIntervalSince(entry.attemptedAt) >= Self.refetchInterval
        if let keys = entry.keys, date.timeIntervalSince(entry.fetchedAt) < Self.lifetime,
           !lacksKey(keys) || !mayFetch {
            return keys
        }
        guard mayFetch || !entry.failed else { throw .keysUnavailable }
        switch await fetch(key, at: date) {
        case .success(let keys): return keys
        case .failure: throw .keysUnavailable
        }
    }

    private func fetch(_ key: Key, at date: Date) async -> Result<ClientJWKS, JWKSFetchError> {
        if let running = fetches[key] { return await running.value }
        let fetcher = fetcher
        let running = Task { () -> Result<ClientJWKS, JWKSFetchError> in
            do throws(JWKSFetchError) { return .success(try await fetcher.fetch(key.uri)) } catch { return .failure(error) }
        }
        fetches[key] = running
        let result = await running.value
        fetches[key] = nil
        forgetExpired(at: date)
        var entry = entries[key] ?? Entry()
        entry.attemptedAt = date
        switch result {
        case .success(let keys):
            (entry.keys, entry.fetchedAt, entry.failed) = (keys, date, false)
        case .failure(let error):
            entry.failed = true
            logger.warning("the keys of a trusted issuer could not be fetched", metadata: [
                "tenant_id": .string(key.tenantID), "issuer": .string(key.issuer), "error": .string(error.description),
            ])
        }
        entries[key] = entry
        return result
    }

    /// Drops what no request can use any more: sets past their lifetime whose last fetch is also
    /// old enough to be tried again. The cache so holds only issuers in recent use.
    private func forgetExpired(at date: Date) {
        entries = entries.filter { _, entry in
            date.timeIntervalSince(entry.fetchedAt) < Self.lifetime
                || date.timeIntervalSince(entry.attemptedAt) < Self.refetchInterval
        }
    }
}
