import CountersignCore
import Crypto
import Foundation

/// A provider token as every node shares it: the JWT (sealed under the master key: it lets
/// anyone push to the tenant's app for up to an hour) and when it was signed.
struct StoredProviderToken: Sendable, Equatable {
    let jwt: String
    let issuedAt: Date
}

/// Where the provider token of each APNs signing key is kept, so that every node, and every
/// start of one, sends with the same token: APNs refuses (`TooManyProviderTokenUpdates`) a key
/// whose token changes more often than every 20 minutes, whoever changes it.
///
/// Tokens are kept by `APNsSigningKey.fingerprint` (team, key id and public key), not by
/// credential: the same `.p8` set again keeps its token, and a tenant that uploads some other
/// key under another tenant's key id gets a row of its own.
protocol APNsProviderTokenStore: Sendable {
    func current(for fingerprint: String) async throws -> StoredProviderToken?
    /// Stores `token` in place of `replacing` (nil: no token yet); false when another node
    /// changed the row first, whose token the caller then reads and uses.
    func replace(_ replacing: StoredProviderToken?, with token: StoredProviderToken, for fingerprint: String) async throws -> Bool
}

/// The store on the server's database (table `apns_provider_tokens`, migration 11).
struct SQLAPNsProviderTokenStore: APNsProviderTokenStore {
    let database: any Database
    let sealer: SecretSealer

    /// A stored token as `current` reads it.
    private struct Row: Decodable {
        var tokenSealed: Data
        var issuedAt: Date

        enum CodingKeys: String, CodingKey {
            case tokenSealed = "token_sealed", issuedAt = "issued_at"
        }
    }

    func current(for fingerprint: String) async throws -> StoredProviderToken? {
        guard let row = try await database.first(
            "SELECT token_sealed, issued_at FROM apns_provider_tokens WHERE key_fingerprint = \(fingerprint)",
            as: Row.self) else {
            return nil
        }
        let jwt = try sealer.open(row.tokenSealed, context: Self.sealingContext(fingerprint))
        return StoredProviderToken(jwt: String(decoding: jwt, as: UTF8.self), issuedAt: row.issuedAt)
    }

    func replace(_ replacing: StoredProviderToken?, with token: StoredProviderToken, for fingerprint: String) async throws
        -> Bool {
        let sealed = try sealer.seal(Data(token.jwt.utf8), context: Self.sealingContext(fingerprint))
        let statement: SQLStatement = if let replacing {
            """
            UPDATE apns_provider_tokens SET token_sealed = \(sealed), issued_at = \(token.issuedAt)
            WHERE key_fingerprint = \(fingerprint) AND issued_at = \(replacing.issuedAt) RETURNING key_fingerprint
            """
        } else {
            """
            INSERT INTO apns_provider_tokens (key_fingerprint, token_sealed, issued_at)
            VALUES (\(fingerprint), \(sealed), \(token.issuedAt))
            ON CONFLICT (key_fingerprint) DO NOTHING RETURNING key_fingerprint
            """
        }
        return !(try await database.run(statement)).isEmpty
    }

    /// Names the row a sealed token belongs to, so that it opens nowhere else.
    static func sealingContext(_ fingerprint: String) -> String { "apns-provider-token:\(fingerprint)" }
}

extension APNsSigningKey {
    /// What identifies the key to APNs, and the key itself: SHA-256 over team id, key id and
    /// the public key, base64url.
    var fingerprint: String {
        var input = Data("\(teamID).\(keyID).".utf8)
        input.append(key.publicKey.x963Representation)
        return Data(SHA256.hash(data: input)).base64URLEncodedString
    }
}
