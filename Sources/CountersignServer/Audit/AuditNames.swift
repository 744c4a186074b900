import Foundation

/// What the records an audit page names are called now: the username of a user, the name of a
/// client, a device or an admin key, and the user a device belongs to. Events keep ids (a name
/// changes, the event does not); a reader is shown names, read for a whole page at once, one
/// statement per kind of record, never one per event.
struct AuditNames: Sendable, Equatable {
    /// A record an event names: a kind (`user`, `client`, `device`, `admin_key`) and its id.
    struct Reference: Hashable, Sendable {
        let kind: String
        let id: String

        /// The record `actor` (`user:<id>`, `device:<id>`, `client:<id>`, `admin-key:<id>`)
        /// names; nil for `system`, `recovery` and the like.
        init?(actor: String) {
            guard let colon = actor.firstIndex(of: ":") else { return nil }
            let kind = actor[..<colon] == "admin-key" ? "admin_key" : String(actor[..<colon])
            self.init(kind: kind, id: String(actor[actor.index(after: colon)...]))
        }

        /// The target of an event, when it is a record with a name.
        init?(kind: String, id: String) {
            guard AuditNames.kinds.contains(kind), !id.isEmpty else { return nil }
            (self.kind, self.id) = (kind, id)
        }
    }

    struct Name: Sendable, Equatable {
        let name: String
        /// For a device: its user.
        let userID: String?
    }

    static let kinds: Set<String> = ["user", "client", "device", "admin_key"]

    var byReference: [Reference: Name] = [:]

    subscript(_ reference: Reference?) -> Name? { reference.flatMap { byReference[$0] } }

    /// Every record `events` name, actor and target.
    static func references(of events: [AuditEvent]) -> [String: [String]] {
        var ids: [String: Set<String>] = [:]
        for event in events {
            for reference in [Reference(actor: event.actor), Reference(kind: event.targetType, id: event.targetID)] {
                if let reference { ids[reference.kind, default: []].insert(reference.id) }
            }
        }
        return ids.mapValues { $0.sorted() }
    }

    /// The names of the records `events` name, within `tenantID` (every tenant's for nil).
    /// A system admin key (of no tenant) is named in every tenant's log, since it acts there.
    static func read(for events: [AuditEvent], tenantID: String?, on database: any Database) async throws -> AuditNames {
        let wanted = references(of: events)
        let tenant = tenantID ?? ""
        var names = AuditNames()
        func add(_ kind: String, _ rows: [SQLRow], name column: String, user: Bool = false) throws {
            for row in rows {
                guard let reference = Reference(kind: kind, id: try row.decode(column: "id", as: String.self)) else { continue }
                names.byReference[reference] = Name(
                    name: try row.decode(column: column, as: String.self),
                    userID: user ? try row.decode(column: "user_id", as: String.self) : nil)
            }
        }
        try add("user", try await database.run(chunking: wanted["user"] ?? []) { part in
            "SELECT id, username FROM users WHERE id IN (\(list: part)) AND (\(tenant) = '' OR tenant_id = \(tenant))"
        }, name: "username")
        try add("client", try await database.run(chunking: wanted["client"] ?? []) { part in
            "SELECT id, name FROM clients WHERE id IN (\(list: part)) AND (\(tenant) = '' OR tenant_id = \(tenant))"
        }, name: "name")
        try add("device", try await database.run(chunking: wanted["device"] ?? []) { part in
            "SELECT id, name, user_id FROM devices WHERE id IN (\(list: part)) AND (\(tenant) = '' OR tenant_id = \(tenant))"
        }, name: "name", user: true)
        try add("admin_key", try await database.run(chunking: wanted["admin_key"] ?? []) { part in
            """
            SELECT id, name FROM admin_keys
            WHERE id IN (\(list: part)) AND (\(tenant) = '' OR tenant_id = \(tenant) OR tenant_id IS NULL)
            """
        }, name: "name")
        return names
    }
}

/// An event as the administration API answers it: the stored event, with the names of its
/// actor and target as they are now (`AuditNames`), where they still exist.
struct AuditEventView: Encodable, Sendable {
    let event: AuditEvent
    let actorName: AuditNames.Name?
    let targetName: AuditNames.Name?

    init(_ event: AuditEvent, names: AuditNames) {
        self.event = event
        actorName = names[AuditNames.Reference(actor: event.actor)]
        targetName = names[AuditNames.Reference(kind: event.targetType, id: event.targetID)]
    }

    enum CodingKeys: String, CodingKey {
        case actorName = "actor_name"
        case actorUserID = "actor_user_id"
        case targetName = "target_name"
        case targetUserID = "target_user_id"
    }

    func encode(to encoder: any Encoder) throws {
        try event.encode(to: encoder)
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encodeIfPresent(actorName?.name, forKey: .actorName)
        try container.encodeIfPresent(actorName?.userID, forKey: .actorUserID)
        try container.encodeIfPresent(targetName?.name, forKey: .targetName)
        try container.encodeIfPresent(targetName?.userID, forKey: .targetUserID)
    }
}
