import Foundation

/// What the records an audit page names are called now: the username of a user, the name of a
/// client, a device, an admin key or a group, and the user a device belongs to. Events keep ids (a name
/// changes, the event does not); a reader is shown names, read for a whole page at once, one
/// statement per kind of record, never one per event.
struct AuditNames: Sendable, Equatable {
    /// A record an event names: a kind (`user`, `client`, `device`, `admin_key`, `group`) and its id.
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

    static let kinds: Set<String> = ["user", "client", "device", "admin_key", "group"]

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
        var names = AuditNames()
        func add(_ kind: String, _ found: [String: String]) {
            for (id, name) in found {
                if let reference = Reference(kind: kind, id: id) { names.byReference[reference] = Name(name: name, userID: nil) }
            }
        }
        // Each from the feature that owns the records.
        add("user", try await SQLUserRepository().usernames(ids: wanted["user"] ?? [], tenantID: tenantID, on: database))
        add("client", try await SQLClientRepository().names(ids: wanted["client"] ?? [], tenantID: tenantID, on: database))
        add("admin_key", try await SQLAdminKeyRepository().names(ids: wanted["admin_key"] ?? [], tenantID: tenantID, on: database))
        add("group", try await SQLGroupRepository().names(ids: wanted["group"] ?? [], tenantID: tenantID, on: database))
        for (id, device) in try await SQLDeviceRepository().names(ids: wanted["device"] ?? [], tenantID: tenantID, on: database) {
            if let reference = Reference(kind: "device", id: id) {
                names.byReference[reference] = Name(name: device.name, userID: device.userID)
            }
        }
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
