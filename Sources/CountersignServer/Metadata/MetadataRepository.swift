import CountersignCore
import Foundation

/// Which metadata BLOB is loaded and how loading goes: what `GET /admin/v1/authenticator-metadata`
/// shows, read as the source row's columns are named.
struct MetadataSourceState: Sendable, Equatable, Codable {
    /// The loaded BLOB's serial number; nil: none loaded yet.
    var serial: Int64?
    var nextUpdate: String?
    var legalHeader: String?
    var entries: Int
    var loadedAt: Date?
    /// The last attempt to load, successful or not.
    var checkedAt: Date?
    /// Why the last attempt loaded nothing; nil after a load, or a BLOB that was not newer.
    var lastError: String?

    static let none = MetadataSourceState(entries: 0)

    /// Every member, null when unknown.
    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(serial, forKey: .serial)
        try container.encode(nextUpdate, forKey: .nextUpdate)
        try container.encode(legalHeader, forKey: .legalHeader)
        try container.encode(entries, forKey: .entries)
        try container.encode(loadedAt, forKey: .loadedAt)
        try container.encode(checkedAt, forKey: .checkedAt)
        try container.encode(lastError, forKey: .lastError)
    }

    enum CodingKeys: String, CodingKey {
        case serial, entries
        case nextUpdate = "next_update"
        case legalHeader = "legal_header"
        case loadedAt = "loaded_at"
        case checkedAt = "checked_at"
        case lastError = "last_error"
    }
}

/// The FIDO metadata on the server's database (SQLite or PostgreSQL): one source row, the
/// entries of the BLOB it names.
struct SQLMetadataRepository: Sendable {
    static let sourceID = "fido-mds"

    func state(on executor: any SQLExecutor) async throws -> MetadataSourceState {
        try await executor.first(
            """
            SELECT serial, next_update, legal_header, entries, loaded_at, checked_at, last_error
            FROM authenticator_metadata_source WHERE id = \(Self.sourceID)
            """, as: MetadataSourceState.self) ?? .none
    }

    /// The loaded BLOB's serial, read cheaply to tell whether a node's copy is current.
    func serial(on executor: any SQLExecutor) async throws -> Int64? {
        try await executor.first(
            "SELECT serial FROM authenticator_metadata_source WHERE id = \(Self.sourceID)", column: "serial", as: Int64?.self) ?? nil
    }

    /// Takes the load lease until `until` if no node holds it at `now`.
    func acquireLease(until: Date, now: Date, on executor: any SQLExecutor) async throws -> Bool {
        try await executor.run(
            """
            INSERT INTO authenticator_metadata_source (id, entries) VALUES (\(Self.sourceID), 0)
            ON CONFLICT (id) DO NOTHING
            """)
        return try await !executor.run(
            """
            UPDATE authenticator_metadata_source SET lease_until = \(until)
            WHERE id = \(Self.sourceID) AND (lease_until IS NULL OR lease_until <= \(now))
            RETURNING id
            """).isEmpty
    }

    /// Replaces every entry with `blob`'s, records it, and gives the lease back.
    func replace(with blob: MetadataBLOB, at date: Date, on executor: any SQLExecutor) async throws {
        try await executor.run("DELETE FROM authenticator_metadata")
        var seen = Set<String>()
        for entry in blob.entries {
            // An entry names a model by AAGUID or U2F key identifiers; UAF entries (by AAID) do
            // not concern WebAuthn and are not kept.
            guard let key = entry.aaguid ?? entry.keyIdentifiers.first, seen.insert(key).inserted else { continue }
            try await executor.run(
                """
                INSERT INTO authenticator_metadata (entry_key, aaguid, key_identifiers, description, status_reports,
                    time_of_last_status_change, attestation_roots, statement)
                VALUES (\(key), \(entry.aaguid), \(Self.json(entry.keyIdentifiers)), \(entry.description),
                    \(Self.json(entry.statusReports)), \(entry.timeOfLastStatusChange),
                    \(Self.json(entry.attestationRoots.map { Data($0).base64EncodedString() })),
                    \(entry.statement.map { String(decoding: $0, as: UTF8.self) }))
                """)
        }
        try await executor.run(
            """
            UPDATE authenticator_metadata_source SET serial = \(blob.serial), next_update = \(blob.nextUpdate),
                legal_header = \(blob.legalHeader), entries = \(seen.count), loaded_at = \(date), checked_at = \(date),
                last_error = NULL, lease_until = NULL
            WHERE id = \(Self.sourceID)
            """)
    }

    /// Records an attempt that loaded nothing (`error` nil: the BLOB was not newer) and gives the
    /// lease back.
    func recordAttempt(error: String?, at date: Date, on executor: any SQLExecutor) async throws {
        try await executor.run(
            """
            UPDATE authenticator_metadata_source SET checked_at = \(date), last_error = \(error), lease_until = NULL
            WHERE id = \(Self.sourceID)
            """)
    }

    func entries(on executor: any SQLExecutor) async throws -> [AuthenticatorMetadataEntry] {
        try await executor.all("SELECT \(raw: EntryRow.columns) FROM authenticator_metadata ORDER BY entry_key", as: EntryRow.self)
            .map { try $0.entry() }
    }

    private static func json(_ value: some Encodable) throws -> String {
        String(decoding: try JSONEncoder().encode(value), as: UTF8.self)
    }

    private struct EntryRow: Decodable {
        static let columns = CodingKeys.allCases.map(\.rawValue).joined(separator: ", ")

        var entryKey: String
        var aaguid: String?
        var keyIdentifiers: String
        var description: String?
        var statusReports: String
        var timeOfLastStatusChange: String?
        var attestationRoots: String
        var statement: String?

        enum CodingKeys: String, CodingKey, CaseIterable {
            case aaguid, description, statement
            case entryKey = "entry_key"
            case keyIdentifiers = "key_identifiers"
            case statusReports = "status_reports"
            case timeOfLastStatusChange = "time_of_last_status_change"
            case attestationRoots = "attestation_roots"
        }

        func entry() throws -> AuthenticatorMetadataEntry {
            let decoder = JSONDecoder()
            guard let identifiers = try? decoder.decode([String].self, from: Data(keyIdentifiers.utf8)),
                let reports = try? decoder.decode([MetadataStatusReport].self, from: Data(statusReports.utf8)),
                let roots = try? decoder.decode([String].self, from: Data(attestationRoots.utf8)),
                case let rootsDER = roots.compactMap({ Data(base64Encoded: $0).map(Array.init) }), rootsDER.count == roots.count
            else { throw StorageError.corrupt("authenticator_metadata \(entryKey)") }
            return AuthenticatorMetadataEntry(
                aaguid: aaguid, keyIdentifiers: identifiers, description: description, statusReports: reports,
                timeOfLastStatusChange: timeOfLastStatusChange, attestationRoots: rootsDER,
                statement: statement.map { Data($0.utf8) })
        }
    }
}
