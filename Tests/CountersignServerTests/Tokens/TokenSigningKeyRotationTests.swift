import CountersignCore
import Crypto
import Foundation
import Testing
import _CryptoExtras
@testable import CountersignServer

/// The token-signing key schedule: a new key after the rotation age, signing after the JWKS
/// cache time, the old one published until its tokens have expired.
@Suite("Token-signing key rotation")
struct TokenSigningKeyRotationTests {
    static func key(_ name: String, at date: Date) -> StoredTokenSigningKey {
        StoredTokenSigningKey(id: name, tenantID: "ten_x", sealedKey: Data(), publicKey: .ec(ECPublicJWK(P256.Signing.PrivateKey().publicKey)),
                              createdAt: date, retiredAt: nil)
    }

    static func rsaKey(_ name: String, at date: Date) throws -> StoredTokenSigningKey {
        StoredTokenSigningKey(id: name, tenantID: "ten_x", sealedKey: Data(),
                              publicKey: .rsa(try RSAPublicJWK(_RSA.Signing.PrivateKey(keySize: .bits2048).publicKey)),
                              createdAt: date, retiredAt: nil)
    }

    @Test("keys from before RS256 are due for an RSA key; the EC key's age alone decides the EC sequence")
    func eachAlgorithmRotatesOnItsOwn() throws {
        let start = Date(timeIntervalSince1970: 1_800_000_000)
        let schedule = KeyRotationSchedule(rotationAge: KeyRotationSchedule.defaultRotationAge)
        let ecOnly = [Self.key("ec", at: start)]
        #expect(schedule.isDue(ecOnly, at: start.addingTimeInterval(1)), "no RSA key yet")
        let both = ecOnly + [try Self.rsaKey("rsa", at: start.addingTimeInterval(30 * 86_400))]
        #expect(!schedule.isDue(both, at: start.addingTimeInterval(90 * 86_400 - 1)))
        #expect(schedule.isDue(both, at: start.addingTimeInterval(90 * 86_400)), "the EC key is 90 days old")
        #expect(!schedule.needsNewKey(both.of(.rs256), at: start.addingTimeInterval(90 * 86_400)))
        #expect(schedule.needsNewKey(both.of(.rs256), at: start.addingTimeInterval(120 * 86_400)))
        // A new EC key never retires the RSA key, which has no RSA successor.
        let rotated = both + [Self.key("ec2", at: start.addingTimeInterval(90 * 86_400))]
        #expect(schedule.retirable(rotated.of(.es256), at: start.addingTimeInterval(91 * 86_400)).map(\.id) == ["ec"])
        #expect(schedule.retirable(rotated.of(.rs256), at: start.addingTimeInterval(91 * 86_400)).isEmpty)
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

    @Test("tokens from before and after a rotation verify against /jwks; the old key leaves once its tokens expired")
    func rotationKeepsTokensVerifiable() async throws {
        try await TestServer.routed { server in
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

    @Test("RS256 tokens from before and after a rotation verify; the old RSA key leaves once its tokens expired")
    func rsaRotationKeepsTokensVerifiable() async throws {
        try await TestServer.routed { server in
            let client = try await TokenRS256Tests.client(server)
            let alice = try await server.enrolledUser("alice")
            let before = try await server.approvedTokens(client, user: alice, scope: "openid")
            let oldKID = try #require(try TokenRS256Tests.header(try before.string("id_token"))["kid"] as? String)
            #expect(Array(try await server.rsaJWKS().keys) == [oldKID])

            server.clock.advance(by: 90 * 86_400 + 1)
            let published = try await server.rsaJWKS()
            #expect(published.count == 2)
            let newKID = try #require(published.keys.first { $0 != oldKID })
            let during = try await server.approvedTokens(client, user: alice, scope: "openid")
            #expect(try TokenRS256Tests.header(try during.string("id_token"))["kid"] as? String == oldKID,
                    "the new RSA key is not signing yet")

            server.clock.advance(by: 301)
            let after = try await server.approvedTokens(client, user: alice, scope: "openid")
            #expect(try TokenRS256Tests.header(try after.string("id_token"))["kid"] as? String == newKID)
            let keys = try await server.rsaJWKS()
            for tokens in [before, during, after] {
                for name in ["access_token", "id_token"] { _ = try server.rsaVerifiedClaims(try tokens.string(name), keys: keys) }
            }

            server.clock.advance(by: 600)
            let remaining = try await server.rsaJWKS()
            #expect(Array(remaining.keys) == [newKID])
            #expect(try await server.jwks().count == 1, "the EC key rotated and retired alongside")
            _ = try server.rsaVerifiedClaims(try after.string("id_token"), keys: remaining)
        }
    }

    @Test("the rotation age is configurable")
    func configuredRotationAge() async throws {
        try await TestServer.routed(configure: { $0.tokenSigningKeyRotation = 86_400 }) { server in
            let first = try await server.jwks()
            #expect(first.count == 1)
            #expect(try await server.rsaJWKS().count == 1)
            server.clock.advance(by: 86_400 + 1)
            let second = try await server.jwks()
            #expect(second.count == 2)
            #expect(try await server.rsaJWKS().count == 2)
        }
    }
}
