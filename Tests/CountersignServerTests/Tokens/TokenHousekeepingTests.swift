import Foundation
import Testing
@testable import CountersignServer

/// What the token tables keep, and for how long.
@Suite("Token housekeeping")
struct TokenHousekeepingTests {
    @Test("ended families go a week after their end; revocation records once their token expired")
    func housekeepingForgetsWhatNoCheckNeeds() async throws {
        try await TestServer.routed { server in
            let client = try await server.offlineClient()
            let alice = try await server.enrolledUser("alice")
            let tokens = try await server.approvedTokens(client, user: alice)
            #expect(try await server.revoke(client, try tokens.string("access_token")).status == 200)
            let refresh = try tokens.string("refresh_token")
            let family = try #require(try await SQLRefreshTokenRepository().find(
                tokenHash: Secrets.hash(refresh), on: server.database)).family

            let housekeeping = TokenHousekeeping(store: SQLTokenHousekeepingStore(database: server.database), logger: server.logger)
            try await housekeeping.runIfDue(at: family.expiresAt.addingTimeInterval(7 * 86_400 - 1))
            #expect(try await SQLRefreshTokenRepository().find(tokenHash: Secrets.hash(refresh), on: server.database) != nil)
            let revoked = try await server.database.run("SELECT jti FROM revoked_access_tokens")
            #expect(revoked.isEmpty, "the access token expired long before")

            try await TokenHousekeeping(store: SQLTokenHousekeepingStore(database: server.database), logger: server.logger)
                .runIfDue(at: family.expiresAt.addingTimeInterval(7 * 86_400 + 1))
            #expect(try await SQLRefreshTokenRepository().find(tokenHash: Secrets.hash(refresh), on: server.database) == nil)
            let rows = try await server.database.run("SELECT id FROM refresh_tokens")
            #expect(rows.isEmpty)
        }
    }

    @Test("a revoked access token is remembered until it expires")
    func revocationIsKeptUntilExpiry() async throws {
        try await TestServer.routed { server in
            let tenant = try #require(try await server.tenants.resolve(slug: nil))
            let repository = SQLRevokedAccessTokenRepository()
            let now = server.clock.now
            #expect(try await repository.revoke(jti: "j1", tenantID: tenant.id, expiresAt: now.addingTimeInterval(600),
                                                at: now, on: server.database))
            #expect(try await !repository.revoke(jti: "j1", tenantID: tenant.id, expiresAt: now.addingTimeInterval(600),
                                                 at: now, on: server.database), "revoked already")
            try await repository.purge(expiredBefore: now.addingTimeInterval(599), on: server.database)
            #expect(try await repository.isRevoked(jti: "j1", tenantID: tenant.id, on: server.database))
            #expect(try await !repository.isRevoked(jti: "j1", tenantID: "ten_other", on: server.database))
            try await repository.purge(expiredBefore: now.addingTimeInterval(601), on: server.database)
            #expect(try await !repository.isRevoked(jti: "j1", tenantID: tenant.id, on: server.database))
        }
    }
}
