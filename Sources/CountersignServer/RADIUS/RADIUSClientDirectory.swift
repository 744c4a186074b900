import Foundation
import Logging

/// Which RADIUS client a packet comes from: the one whose networks hold its source address, of
/// any tenant (networks never overlap, so there is at most one). All clients are read at once,
/// with their secrets opened, and kept until a change forgets them (`ChangedRecord.radiusClients`)
/// or for 30 seconds: a flood from unknown addresses costs no database read.
struct RADIUSClientDirectory: Sendable {
    /// Every RADIUS client with its shared secret.
    struct Snapshot: Sendable {
        let entries: [(client: RADIUSClient, secret: [UInt8])]

        func client(for address: [UInt8]) -> (client: RADIUSClient, secret: [UInt8])? {
            entries.first { entry in entry.client.networks.contains { $0.contains(address) } }
        }
    }

    let database: any Database
    let clients: any RADIUSClientRepository
    let caches: RecordCaches
    let sealer: SecretSealer
    let logger: Logger

    /// The client `address` (4 or 16 octets) belongs to, with its secret; nil for none.
    func client(for address: [UInt8]) async throws -> (client: RADIUSClient, secret: [UInt8])? {
        try await snapshot().client(for: address)
    }

    func snapshot() async throws -> Snapshot {
        let cache = caches.radiusClients
        if let kept = cache.value(for: "") { return kept }
        let generation = cache.generation
        // A secret that does not open (a row altered by hand) loses its own client, not all of them.
        let entries = try await clients.all(on: database).compactMap { row -> (RADIUSClient, [UInt8])? in
            guard let secret = try? sealer.open(row.sealedSecret, context: RADIUSClient.secretContext(row.client.id)) else {
                logger.error("the shared secret of a RADIUS client cannot be opened; its requests are dropped",
                             metadata: ["radius_client": "\(row.client.id)"])
                return nil
            }
            return (row.client, Array(secret))
        }
        let snapshot = Snapshot(entries: entries)
        cache.remember(snapshot, for: "", readAt: generation)
        return snapshot
    }
}
