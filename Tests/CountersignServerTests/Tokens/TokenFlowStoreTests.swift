import CountersignCore
import Foundation
import Logging
import Synchronization
import Testing
@testable import CountersignServer

/// The refresh grant's replay rules and the revocation endpoint's refresh branch alone, on a
/// store held in memory: no server, no database read. The flows read and write only what
/// `RefreshTokenStore`, `TokenRevocationStore` and `TokenHousekeepingStore` declare.
@Suite("Refresh token flows on an in-memory store")
struct TokenFlowStoreTests {
    /// The refresh token stores in memory, recording what the flows asked of them.
    final class MemoryStore: RefreshTokenStore, TokenRevocationStore, TokenHousekeepingStore {
        struct Revocation: Equatable {
            let familyID: String
            let cause: RefreshTokenFamilyRevocation.Cause
            let clientID: String
            let date: Date
        }

        struct State {
            var tokens: [Data: (token: RefreshToken, family: RefreshTokenFamily)] = [:]
            var users: [String: User] = [:]
            var revocations: [Revocation] = []
            var rotations = 0
            var revokedAccessTokens: [String] = []
            var housekeepingRuns = 0
        }

        let state = Mutex(State())

        func refreshToken(hash tokenHash: Data) async throws -> (token: RefreshToken, family: RefreshTokenFamily)? {
            state.withLock { $0.tokens[tokenHash] }
        }

        func user(id: String, tenantID: String) async throws -> User? {
            state.withLock { $0.users[id] }.flatMap { $0.tenantID == tenantID ? $0 : nil }
        }

        func revoke(_ family: RefreshTokenFamily, cause: RefreshTokenFamilyRevocation.Cause, byClient clientID: String,
                    at date: Date) async throws {
            state.withLock { state in
                guard !state.revocations.contains(where: { $0.familyID == family.id }) else { return }
                state.revocations.append(Revocation(familyID: family.id, cause: cause, clientID: clientID, date: date))
            }
        }

        func rotate(_ token: RefreshToken, of family: RefreshTokenFamily, to issued: IssuedTokens, byClient clientID: String,
                    at date: Date) async throws -> RefreshTokenGrant.Outcome {
            state.withLock { $0.rotations += 1 }
            return .rotated
        }

        func revokeAccessToken(_ token: VerifiedAccessToken, tenantID: String, byClient clientID: String, at date: Date)
            async throws {
            state.withLock { $0.revokedAccessTokens.append(token.id) }
        }

        func forgetFamilies(endedBefore date: Date) async throws -> Int {
            state.withLock { $0.housekeepingRuns += 1 }
            return 0
        }

        func forgetRevokedAccessTokens(expiredBefore date: Date) async throws {}
    }

    let now = MemoryFixtures.start
    let tenant = MemoryFixtures.tenant
    let client = MemoryFixtures.client(scopes: ["openid", "offline_access"])
    let value = "csr_presented-refresh-token"

    private var family: RefreshTokenFamily {
        RefreshTokenFamily(
            id: "rtf_one", tenantID: "ten_one", clientID: "cli_one", userID: "usr_one", scope: ["openid", "offline_access"],
            authTime: now.addingTimeInterval(-3600), acr: "urn:countersign:acr:push", amr: ["hwk"],
            createdAt: now.addingTimeInterval(-3600), expiresAt: now.addingTimeInterval(29 * 86_400), revokedAt: nil)
    }

    private func token(usedAt: Date? = nil, expiresAt: Date? = nil) -> RefreshToken {
        RefreshToken(
            id: "rtk_one", familyID: "rtf_one", tokenHash: Secrets.hash(value), issuedAt: now.addingTimeInterval(-600),
            expiresAt: expiresAt ?? now.addingTimeInterval(13 * 86_400), accessTokenID: "at_one",
            accessTokenExpiresAt: now.addingTimeInterval(-300), usedAt: usedAt, revokedAt: nil)
    }

    private func store(_ token: RefreshToken, family: RefreshTokenFamily? = nil) -> MemoryStore {
        let store = MemoryStore()
        let family = family ?? self.family
        store.state.withLock { $0.tokens[token.tokenHash] = (token, family) }
        return store
    }

    /// Signing keys on an empty, unmigrated in-memory database: a flow that reached for a key
    /// would fail on the missing table, so the paths tested here must not sign anything.
    private func issuer() async throws -> TokenIssuer {
        let database = try await SQLiteDatabase.open(path: nil, logger: Logger(label: "test"))
        let now = now
        let keys = TokenSigningKeys(
            store: SQLTokenSigningKeyStore(database: database), sealer: SecretSealer(masterKey: MasterKey.generate()),
            now: { now })
        return TokenIssuer(keys: keys, records: SQLIssuedTokenStore(database: database))
    }

    private func grant(_ store: MemoryStore) async throws -> RefreshTokenGrant {
        let now = now
        return RefreshTokenGrant(
            store: store, now: { now }, tokens: try await issuer(),
            housekeeping: TokenHousekeeping(store: store, logger: Logger(label: "test")))
    }

    private func revocation(_ store: MemoryStore) async throws -> TokenRevocation {
        let now = now
        return TokenRevocation(
            store: store, signingKeys: try await issuer().keys, now: { now },
            housekeeping: TokenHousekeeping(store: store, logger: Logger(label: "test")))
    }

    private func form(_ fields: String) throws -> FormParameters {
        try FormParameters(body: Data(fields.utf8), contentType: "application/x-www-form-urlencoded")
    }

    private var issuer: Issuer { Issuer(tenant: tenant, origin: PublicOrigin(URL(string: "https://countersign.test"))) }

    @Test("a used refresh token presented again revokes its whole family for reuse, once, and rotates nothing")
    func reuseRevokesTheFamily() async throws {
        let store = store(token(usedAt: now.addingTimeInterval(-60)))
        let flow = try await grant(store)
        for _ in 0..<2 {
            await #expect(throws: TokenRequestError.refreshTokenReused) {
                try await flow.exchange(try form("grant_type=refresh_token&refresh_token=\(value)"), client: client, issuer: issuer)
            }
        }
        store.state.withLock { state in
            #expect(state.revocations == [
                MemoryStore.Revocation(familyID: "rtf_one", cause: .reuse, clientID: "cli_one", date: now),
            ])
            #expect(state.rotations == 0)
            #expect(state.housekeepingRuns == 1, "housekeeping runs at most once an hour")
        }
    }

    @Test("another client's, an unknown, a revoked or an expired refresh token is refused and revokes nothing")
    func refusalsRevokeNothing() async throws {
        let other = store(token(usedAt: now.addingTimeInterval(-60)))
        var stranger = client
        stranger.id = "cli_two"
        await #expect(throws: TokenRequestError.unknownRefreshToken) {
            try await grant(other).exchange(
                try form("grant_type=refresh_token&refresh_token=\(value)"), client: stranger, issuer: issuer)
        }
        await #expect(throws: TokenRequestError.unknownRefreshToken) {
            try await grant(other).exchange(
                try form("grant_type=refresh_token&refresh_token=csr_unknown"), client: client, issuer: issuer)
        }
        var ended = family
        ended.revokedAt = now.addingTimeInterval(-1)
        let revoked = store(token(usedAt: now.addingTimeInterval(-60)), family: ended)
        await #expect(throws: TokenRequestError.refreshTokenRevoked) {
            try await grant(revoked).exchange(
                try form("grant_type=refresh_token&refresh_token=\(value)"), client: client, issuer: issuer)
        }
        let expired = store(token(expiresAt: now))
        await #expect(throws: TokenRequestError.refreshTokenExpired) {
            try await grant(expired).exchange(
                try form("grant_type=refresh_token&refresh_token=\(value)"), client: client, issuer: issuer)
        }
        for store in [other, revoked, expired] {
            store.state.withLock { state in
                #expect(state.revocations.isEmpty)
                #expect(state.rotations == 0)
            }
        }
    }

    @Test("revoking a refresh token revokes its family at the client's request; another client's token is left alone")
    func revocationRequest() async throws {
        let store = store(token())
        var stranger = client
        stranger.id = "cli_two"
        _ = try await revocation(store).revoke(try form("token=\(value)"), client: stranger, issuer: issuer)
        store.state.withLock { #expect($0.revocations.isEmpty) }
        _ = try await revocation(store).revoke(try form("token=\(value)"), client: client, issuer: issuer)
        store.state.withLock { state in
            #expect(state.revocations == [
                MemoryStore.Revocation(familyID: "rtf_one", cause: .revocationRequest, clientID: "cli_one", date: now),
            ])
            #expect(state.revokedAccessTokens.isEmpty)
        }
    }
}
