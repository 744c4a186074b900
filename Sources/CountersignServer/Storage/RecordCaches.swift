import Foundation
import Synchronization

/// A record that changed, as a change announcement names it to every node's `RecordCaches`.
enum ChangedRecord: Codable, Sendable, Equatable {
    /// A relying party's client, by its id.
    case client(String)
    /// The RADIUS clients, any of them (`RADIUSClientDirectory`).
    case radiusClients
}

/// The node's caches of rows read on every request, each forgotten by the announcements of
/// what changed (`ClusterRelay.announceChanged`).
final class RecordCaches: Sendable {
    /// Clients with their secret hashes, by client id: two reads per approval loop (the
    /// backchannel request and the token request). A change elsewhere is bounded by the
    /// lifetime even if its announcement is lost.
    let clients = RecordCache<String, ClientRecord>(lifetime: .seconds(30), capacity: 10_000)
    /// Every RADIUS client with its opened secret, read as one: the RADIUS listener matches each
    /// packet's source against all of them.
    let radiusClients = RecordCache<String, RADIUSClientDirectory.Snapshot>(lifetime: .seconds(30), capacity: 1)

    /// Whether this node hears the announcements of changes made through the other nodes: on
    /// PostgreSQL once its notification channel is listened to.
    private let hearing = Mutex(false)

    var hearsChanges: Bool { hearing.withLock { $0 } }

    /// The channel is listened to again: whatever was cached before may have been changed
    /// meanwhile, unannounced.
    func startedHearing() {
        hearing.withLock { $0 = true }
        forgetAll()
    }

    func stoppedHearing() {
        hearing.withLock { $0 = false }
    }

    func forget(_ record: ChangedRecord) {
        switch record {
        case .client(let id): clients.forget(id)
        case .radiusClients: radiusClients.forgetAll()
        }
    }

    func forgetAll() {
        clients.forgetAll()
        radiusClients.forgetAll()
    }
}

/// A client as client authentication reads it.
struct ClientRecord: Sendable {
    let client: Client
    let secretHash: Data
}
