import Foundation

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

    /// The client `address` (4 or 16 octets) belongs to, with its secret; nil for none.
    func client(for address: [UInt8]) async throws -> (client: RADIUSClient, secret: [UInt8])? {
        try await snapshot().client(for: address)
    }

    func snapshot() async throws -> Snapshot {
        let cache = caches.radiusClients
        if let kept = cache.value(for: "") { return kept }
        let generation = cache.generation
        let entries = try await clients.all(on: database).map { row in
            (row.client, Array(try sealer.open(row.sealedSecret, context: RADIUSClient.secretContext(row.client.id))))
        }
        let snapshot = Snapshot(entries: entries)
        cache.remember(snapshot, for: "", readAt: generation)
        return snapshot
    }
}
