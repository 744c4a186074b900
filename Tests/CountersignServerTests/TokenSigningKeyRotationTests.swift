import CountersignCore
import Crypto
import Foundation
import Testing
@testable import CountersignServer

/// The token-signing key schedule: a new key after the rotation age, signing after the JWKS
/// cache time, the old one published until its tokens have expired.
@Suite("Token-signing key rotation")
struct TokenSigningKeyRotationTests {
    static func key(_ name: String, at date: Date) -> StoredTokenSigningKey {
        StoredTokenSigningKey(id: name, tenantID: "ten_x", sealedKey: Data(), publicKey: ECPublicJWK(P256.Signing.PrivateKey().publicKey),
                              createdAt: date, retiredAt: nil)
    }

    @Test("a new key is due when the newest is as old as the rotation age")
    func newKeyAtRotationAge() {
        let start = Date(timeIntervalSince1970: 1_800_000_000)
        let schedule = KeyRotationSchedule(rotationAge: KeyRotationSchedule.defaultRotationAge)
        let keys = [Self.key("a", at: start)]
        #expect(schedule.needsNewKey([], at: start))
        #expect(!schedule.needsNewKey(keys, at: start.addingTimeInterval(90 * 86_400 - 1)))
        #expect(schedule.needsNewKey(keys, at: start.addingTimeInterval(90 * 86_400)))
    }

    @Test("an old key retires once its successor has signed for longer than a token lives")
    func retirementAfterTokensExpire() {
        let start = Date(timeIntervalSince1970: 1_800_000_000)
        let schedule = KeyRotationSchedule(rotationAge: KeyRotationSchedule.defaultRotationAge)
        let successorCreated = start.addingTimeInterval(90 * 86_400)
        let keys = [Self.key("old", at: start), Self.key("new", at: successorCreated)]
        // The successor signs after 300 s; the old key's last token expires 600 s later.
        #expect(schedule.retirable(keys, at: successorCreated.addingTimeInterval(899)).isEmpty)
        #expect(schedule.retirable(keys, at: successorCreated.addingTimeInterval(900)).map(\.id) == ["old"])
        #expect(schedule.retirable([Self.key("only", at: start)], at: start.addingTimeInterval(365 * 86_400)).isEmpty)
    }

    @Test("tokens from before and after a rotation verify against /jwks; the old key leaves once its tokens expired",
          arguments: Engine.available)
    func rotationKeepsTokensVerifiable(engine: Engine) async throws {
        try await TestServer.with(engine) { server in
            let client = try await server.offlineClient()
            let alice = try await server.enrolledUser("alice")
            let before = try await server.approvedTokens(client, user: alice, scope: "openid")
            let oldKID = try #require(try CompactJWS(parsing: try before.string("access_token")).keyID)

            server.clock.advance(by: 90 * 86_400 + 1)
            let published = try await server.jwks()
            #expect(published.count == 2)
            let newKID = try #require(published.keys.first { $0 != oldKID })
            let during = try await server.approvedTokens(client, user: alice, scope: "openid")
            #expect(try CompactJWS(parsing: try during.string("id_token")).keyID == oldKID, "the new key is not signing yet")

            server.clock.advance(by: 301)
            let after = try await server.approvedTokens(client, user: alice, scope: "openid")
            #expect(try CompactJWS(parsing: try after.string("id_token")).keyID == newKID)
            let keys = try await server.jwks()
            for tokens in [before, during, after] {
                for name in ["access_token", "id_token"] { _ = try server.verifiedClaims(try tokens.string(name), keys: keys) }
            }

            server.clock.advance(by: 600)
            let remaining = try await server.jwks()
            #expect(Array(remaining.keys) == [newKID])
            _ = try server.verifiedClaims(try after.string("id_token"), keys: remaining)
        }
    }

    @Test("the rotation age is configurable", arguments: Engine.available)
    func configuredRotationAge(engine: Engine) async throws {
        try await TestServer.with(engine, configure: { $0.tokenSigningKeyRotation = 86_400 }) { server in
            let first = try await server.jwks()
            #expect(first.count == 1)
            server.clock.advance(by: 86_400 + 1)
            let second = try await server.jwks()
            #expect(second.count == 2)
        }
    }
}
