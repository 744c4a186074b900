import CountersignCore
import CountersignSCIM
import Crypto
import Foundation
import HTTPTypes

/// A SCIM request refused for what the tenant holds (the wire format's own refusals are
/// `SCIMError`s): each is one SCIM error document.
enum SCIMRefusal: Error, Equatable, WireFailure {
    case notFound(String)
    /// Another user or group has that name (`uniqueness`, 409).
    case uniqueness(String)
    /// The resource is kept by the tenant's directory, whose sync would undo the change.
    case keptByDirectory(String)
    /// `If-Match` named another version (412).
    case versionMismatch

    var wireError: WireError {
        switch self {
        case .notFound(let detail): WireError(.notFound, code: nil, description: detail)
        case .uniqueness(let detail): WireError(.conflict, code: "uniqueness", description: detail)
        case .keptByDirectory(let what):
            WireError(.badRequest, code: "mutability",
                      description: "\(what) is kept by this tenant's directory, whose sync would undo the change; change it in the directory")
        case .versionMismatch:
            WireError(.preconditionFailed, code: nil, description: "If-Match names another version of the resource")
        }
    }
}

extension SCIMError: WireFailure {
    var wireError: WireError {
        WireError(HTTPResponse.Status(code: status), code: scimType, description: detail)
    }
}

/// What the SCIM routes read and write: the tenant's users and groups through their
/// repositories, each write one transaction with its audit record. A SCIM client keeps the
/// users it creates (`source` `scim`) and takes over local users it writes; users and groups the
/// tenant's directory keeps are read-only here. Deleting a user disables and deprovisions them
/// (devices and history stay); creating the same username again brings them back.
struct SCIMStore: Sendable {
    let database: any Database
    let users: any UserRepository
    let groups: any GroupRepository
    var sessions = SQLBrowserSessionRepository()
    let audit: AuditLog

    // MARK: Users

    func users(tenantID: String, matching match: UserMatch?, offset: Int, limit: Int,
               withGroups: Bool) async throws -> (total: Int, users: [SCIMUser]) {
        let (total, found) = try await users.list(tenantID: tenantID, matching: match, offset: offset, limit: limit,
                                                  on: database)
        // The page's profiles and groups in a query each, not two per user.
        let ids = found.map(\.id)
        let profiles = try await users.scimProfiles(userIDs: ids, on: database)
        let memberships = withGroups ? try await groups.memberships(userIDs: ids, on: database) : [:]
        return (total, found.map { user in
            resource(user, profile: profiles[user.id],
                     groups: withGroups ? (memberships[user.id] ?? []).map { SCIMGroupReference(value: $0.id, display: $0.name) } : nil)
        })
    }

    func user(id: String, tenantID: String) async throws -> (User, SCIMUser) {
        guard let user = try await users.find(id: id, tenantID: tenantID, on: database), user.deprovisionedAt == nil else {
            throw SCIMRefusal.notFound("No user has the id \(id).")
        }
        return (user, try await resource(user, withGroups: true, on: database))
    }

    /// Creates the user, or brings back the deprovisioned user of that username.
    func create(_ resource: SCIMUser, tenantID: String, actor: String, at date: Date) async throws -> SCIMUser {
        let fields = try Fields(resource)
        return try await database.transaction { executor in
            var user: User
            let action: String
            var details: [String: String] = [:]
            if var existing = try await users.find(username: fields.username, tenantID: tenantID, on: executor) {
                guard existing.deprovisionedAt != nil else {
                    throw SCIMRefusal.uniqueness("A user named \(fields.username) exists already.")
                }
                existing.deprovisionedAt = nil
                let wasActive = existing.status == .active
                fields.apply(to: &existing, at: date)
                if wasActive != (existing.status == .active) { details["previous_status"] = wasActive ? "active" : "disabled" }
                user = existing
                action = "user.updated"
                try await users.update(user, on: executor)
            } else {
                user = User(id: Identifier.make("usr", at: date), tenantID: tenantID, username: fields.username,
                            displayName: nil, status: .active, source: .scim, createdAt: date, updatedAt: date)
                fields.apply(to: &user, at: date)
                action = "user.created"
                try await insert(user, on: executor)
            }
            try await users.setSCIMProfile(userID: user.id, fields.profile, on: executor)
            try await audit.record(
                action, actor: actor, tenantID: tenantID, target: ("user", user.id),
                details: fields.details(user).merging(details) { $1 }, at: date, on: executor)
            return try await self.resource(user, withGroups: true, on: executor)
        }
    }

    /// Replaces the user's attributes (PUT, and PATCH once applied), unless `ifMatch` names
    /// another version.
    func replace(id: String, with resource: SCIMUser, tenantID: String, ifMatch: String?, actor: String,
                 at date: Date) async throws -> SCIMUser {
        let fields = try Fields(resource)
        return try await database.transaction { executor in
            guard var user = try await users.find(id: id, tenantID: tenantID, on: executor), user.deprovisionedAt == nil else {
                throw SCIMRefusal.notFound("No user has the id \(id).")
            }
            try Self.check(ifMatch, version: try await self.resource(user, withGroups: true, on: executor).meta?.version)
            guard user.source != .directory else { throw SCIMRefusal.keptByDirectory("User \(user.username)") }
            if fields.username != user.username,
               let holder = try await users.find(username: fields.username, tenantID: tenantID, on: executor),
               holder.id != user.id {
                throw SCIMRefusal.uniqueness("A user named \(fields.username) exists already.")
            }
            let wasActive = user.status == .active
            fields.apply(to: &user, at: date)
            user.source = .scim
            try await users.update(user, on: executor)
            try await users.setSCIMProfile(userID: user.id, fields.profile, on: executor)
            var details = fields.details(user)
            if wasActive != (user.status == .active) { details["previous_status"] = wasActive ? "active" : "disabled" }
            if wasActive, user.status == .disabled {
                let ended = try await sessions.revokeAll(tenantID: tenantID, userID: user.id, at: date, on: executor)
                if ended > 0 { details["sessions_ended"] = String(ended) }
            }
            try await audit.record(
                "user.updated", actor: actor, tenantID: tenantID, target: ("user", user.id), details: details, at: date,
                on: executor)
            return try await self.resource(user, withGroups: true, on: executor)
        }
    }

    /// Disables and deprovisions the user: SCIM no longer shows them; Countersign keeps them.
    func delete(id: String, tenantID: String, ifMatch: String?, actor: String, at date: Date) async throws {
        try await database.transaction { executor in
            guard var user = try await users.find(id: id, tenantID: tenantID, on: executor), user.deprovisionedAt == nil else {
                throw SCIMRefusal.notFound("No user has the id \(id).")
            }
            try Self.check(ifMatch, version: try await self.resource(user, withGroups: true, on: executor).meta?.version)
            guard user.source != .directory else { throw SCIMRefusal.keptByDirectory("User \(user.username)") }
            user.status = .disabled
            user.disabledBySource = true
            user.deprovisionedAt = date
            user.source = .scim
            user.updatedAt = date
            try await users.update(user, on: executor)
            let ended = try await sessions.revokeAll(tenantID: tenantID, userID: user.id, at: date, on: executor)
            try await audit.record(
                "user.deprovisioned", actor: actor, tenantID: tenantID, target: ("user", user.id),
                details: ["username": user.username, "sessions_ended": String(ended)], at: date, on: executor)
        }
    }

    private func insert(_ user: User, on executor: any SQLExecutor) async throws {
        do {
            try await users.insert(user, on: executor)
        } catch StorageError.uniqueViolation {
            throw SCIMRefusal.uniqueness("A user named \(user.username) exists already.")
        }
    }

    /// The user as SCIM shows them: Countersign's fields, the names and e-mails the client sent
    /// (unless an admin changed the address since), and their groups.
    private func resource(_ user: User, withGroups: Bool, on executor: any SQLExecutor) async throws -> SCIMUser {
        let groupReferences = withGroups
            ? try await groups.groups(userID: user.id, on: executor).map { SCIMGroupReference(value: $0.id, display: $0.name) }
            : nil
        return resource(user, profile: try await users.scimProfile(userID: user.id, on: executor), groups: groupReferences)
    }

    /// The user as SCIM shows them, from their stored SCIM profile and, when given, their groups.
    private func resource(_ user: User, profile text: String?, groups groupReferences: [SCIMGroupReference]?) -> SCIMUser {
        var resource = SCIMUser(
            id: user.id, externalId: user.externalID, userName: user.username, displayName: user.displayName,
            active: user.status == .active)
        if let text, let profile = try? SCIMUser(json: SCIMJSON(parsing: Data(text.utf8))) {
            resource.name = profile.name
            resource.emails = profile.emails
        }
        if Fields.mainEmail(resource.emails) != user.email {
            resource.emails = user.email.map { [SCIMEmail(value: $0, type: "work", primary: true)] } ?? []
        }
        if let groupReferences { resource.groups = groupReferences }
        resource.meta = SCIMMeta(created: user.createdAt, lastModified: user.updatedAt,
                                 version: Self.version(of: resource.json(baseURL: "")))
        return resource
    }

    // MARK: Groups

    func groups(tenantID: String, matching match: GroupMatch?, offset: Int, limit: Int,
                withMembers: Bool) async throws -> (total: Int, groups: [SCIMGroup]) {
        let (total, found) = try await groups.list(tenantID: tenantID, matching: match, offset: offset, limit: limit,
                                                   on: database)
        var resources: [SCIMGroup] = []
        for group in found { resources.append(try await resource(group, withMembers: withMembers, on: database)) }
        return (total, resources)
    }

    func group(id: String, tenantID: String, withMembers: Bool = true) async throws -> (UserGroup, SCIMGroup) {
        guard let group = try await groups.find(id: id, tenantID: tenantID, on: database) else {
            throw SCIMRefusal.notFound("No group has the id \(id).")
        }
        return (group, try await resource(group, withMembers: withMembers, on: database))
    }

    func create(_ resource: SCIMGroup, tenantID: String, actor: String, at date: Date) async throws -> SCIMGroup {
        let name = try Self.groupName(resource.displayName)
        return try await database.transaction { executor in
            let group = UserGroup(id: Identifier.make("grp", at: date), tenantID: tenantID, name: name,
                                  externalID: resource.externalId, source: .scim, sourceID: nil, createdAt: date,
                                  updatedAt: date)
            do {
                try await groups.insert(group, on: executor)
            } catch StorageError.uniqueViolation {
                throw SCIMRefusal.uniqueness("A group named \(name) exists already.")
            }
            try await audit.record(
                "group.created", actor: actor, tenantID: tenantID, target: ("group", group.id),
                details: ["name": name, "source": "scim"], at: date, on: executor)
            try await setMembers(of: group, to: resource.members.map(\.value), actor: actor, at: date, on: executor)
            return try await self.resource(group, withMembers: true, on: executor)
        }
    }

    /// Renames the group and applies the member changes (`changes`), or with `members` sets
    /// them all (PUT).
    func update(id: String, to resource: SCIMGroup, changes: SCIMMemberChanges?, tenantID: String, ifMatch: String?,
                actor: String, at date: Date) async throws -> SCIMGroup {
        let name = try Self.groupName(resource.displayName)
        return try await database.transaction { executor in
            guard var group = try await groups.find(id: id, tenantID: tenantID, on: executor) else {
                throw SCIMRefusal.notFound("No group has the id \(id).")
            }
            try Self.check(ifMatch, version: try await self.resource(group, withMembers: true, on: executor).meta?.version)
            guard group.source != .directory else { throw SCIMRefusal.keptByDirectory("Group \(group.name)") }
            let previous = group.name
            group.name = name
            group.externalID = resource.externalId
            group.source = .scim
            group.updatedAt = date
            do {
                try await groups.update(group, on: executor)
            } catch StorageError.uniqueViolation {
                throw SCIMRefusal.uniqueness("A group named \(name) exists already.")
            }
            var details = ["name": name, "source": "scim"]
            if previous != name { details["previous_name"] = previous }
            try await audit.record(
                "group.updated", actor: actor, tenantID: tenantID, target: ("group", group.id), details: details, at: date,
                on: executor)
            if let changes {
                if changes.removesAll {
                    try await setMembers(of: group, to: changes.added.map(\.value), actor: actor, at: date, on: executor)
                } else {
                    try await change(group, adding: changes.added.map(\.value), removing: changes.removed, actor: actor,
                                     at: date, on: executor)
                }
            } else {
                try await setMembers(of: group, to: resource.members.map(\.value), actor: actor, at: date, on: executor)
            }
            return try await self.resource(group, withMembers: true, on: executor)
        }
    }

    func delete(groupID id: String, tenantID: String, ifMatch: String?, actor: String, at date: Date) async throws {
        try await database.transaction { executor in
            guard let group = try await groups.find(id: id, tenantID: tenantID, on: executor) else {
                throw SCIMRefusal.notFound("No group has the id \(id).")
            }
            try Self.check(ifMatch, version: try await self.resource(group, withMembers: true, on: executor).meta?.version)
            guard group.source != .directory else { throw SCIMRefusal.keptByDirectory("Group \(group.name)") }
            try await groups.delete(id: group.id, on: executor)
            try await audit.record(
                "group.deleted", actor: actor, tenantID: tenantID, target: ("group", group.id),
                details: ["name": group.name, "source": "scim"], at: date, on: executor)
        }
    }

    private func setMembers(of group: UserGroup, to wanted: [String], actor: String, at date: Date,
                            on executor: any SQLExecutor) async throws {
        let current = try await groups.memberIDs(groupID: group.id, on: executor)
        let target = Set(wanted)
        try await change(group, adding: Array(target.subtracting(current)), removing: Array(current.subtracting(target)),
                         actor: actor, at: date, on: executor)
    }

    /// Adds and removes members; a member that is no user of the tenant is refused (invalidValue).
    private func change(_ group: UserGroup, adding: [String], removing: [String], actor: String, at date: Date,
                        on executor: any SQLExecutor) async throws {
        guard !(adding.isEmpty && removing.isEmpty) else { return }
        let added = try await groups.addMembers(groupID: group.id, tenantID: group.tenantID, userIDs: adding, on: executor)
        let current = try await groups.memberIDs(groupID: group.id, on: executor)
        if let unknown = Set(adding).subtracting(current).sorted().first {
            throw SCIMError.invalidValue("members: no user of this tenant has the id \(unknown).")
        }
        let removed = try await groups.removeMembers(groupID: group.id, userIDs: removing, on: executor)
        guard !(added.isEmpty && removed.isEmpty) else { return }
        var touched = group
        touched.updatedAt = date
        try await groups.update(touched, on: executor)
        try await audit.record(
            "group.members_changed", actor: actor, tenantID: group.tenantID, target: ("group", group.id),
            details: ["name": group.name, "added": String(added.count), "removed": String(removed.count), "source": "scim"],
            at: date, on: executor)
    }

    private func resource(_ group: UserGroup, withMembers: Bool, on executor: any SQLExecutor) async throws -> SCIMGroup {
        var members: [SCIMMember] = []
        if withMembers {
            var page: [GroupMember]
            repeat {
                page = try await groups.members(groupID: group.id, after: members.last?.value, limit: 1_000, on: executor)
                // Without `display`: it is the client's to give (RFC 7643 §4.2), and a client
                // compares the members it sent with those it reads back.
                members += page.map { SCIMMember(value: $0.userID) }
            } while page.count == 1_000
        }
        var resource = SCIMGroup(id: group.id, externalId: group.externalID, displayName: group.name, members: members)
        // Without its members the version could not tell a membership change: read them for it.
        let versioned = withMembers ? resource : try await self.resource(group, withMembers: true, on: executor)
        resource.meta = SCIMMeta(created: group.createdAt, lastModified: group.updatedAt,
                                 version: versioned.meta?.version ?? Self.version(of: resource.json(baseURL: "")))
        return resource
    }

    // MARK: Rules

    /// A resource's version: a digest of what it holds (without `meta`), so that any change,
    /// however soon after the last, gives another version, and none gives the same one.
    static func version(of json: SCIMJSON) -> String {
        let digest = SHA256.hash(data: json.serialized)
        return digest.prefix(12).map { String(format: "%02x", $0) }.joined()
    }

    static func check(_ ifMatch: String?, version: String?) throws(SCIMRefusal) {
        guard let ifMatch, let version else { return }
        let meta = SCIMMeta(created: Date(), lastModified: Date(), version: version)
        guard meta.isMatched(byIfMatch: ifMatch) else { throw .versionMismatch }
    }

    static func groupName(_ raw: String) throws(SCIMError) -> String {
        guard let name = DirectorySnapshot.groupName(raw) else {
            throw .invalidValue("displayName must be 1 to 128 characters without control or format characters.")
        }
        return name
    }

    /// A SCIM user's fields as Countersign keeps them, checked by Countersign's rules.
    struct Fields {
        var username: String
        var displayName: String?
        var email: String?
        var externalID: String?
        var active: Bool
        /// The names and e-mails as sent, kept beside the user (JSON).
        var profile: String?

        init(_ resource: SCIMUser) throws(SCIMError) {
            do {
                username = try UserRegistration.username(resource.userName)
            } catch {
                throw .invalidValue("userName must be 1 to 128 characters without white space, control or format characters.")
            }
            let formatted = resource.name?.formatted
                ?? [resource.name?.givenName, resource.name?.familyName].compactMap { $0 }.joined(separator: " ")
            let shown = resource.displayName ?? (formatted.isEmpty ? nil : formatted)
            do {
                displayName = try shown.map { raw throws(AdminError) in try AdminFields.name(raw, field: "displayName") }
            } catch {
                throw .invalidValue("displayName must be 1 to 100 characters without control or format characters.")
            }
            if let main = Self.mainEmail(resource.emails) {
                do {
                    email = try UserRegistration.email(main)
                } catch {
                    throw .invalidValue("emails: \(main) is not an e-mail address Countersign keeps.")
                }
            }
            externalID = resource.externalId
            if let id = externalID, id.isEmpty || id.utf8.count > 256 || NameCharacters.refuses(id) {
                throw .invalidValue("externalId must be 1 to 256 bytes without control or format characters.")
            }
            active = resource.active
            let kept = SCIMUser(userName: username, name: resource.name, emails: resource.emails)
            profile = resource.name == nil && resource.emails.isEmpty ? nil : kept.json(baseURL: "").text
        }

        /// The address mail goes to: the primary one, else the work one, else the first.
        static func mainEmail(_ emails: [SCIMEmail]) -> String? {
            (emails.first { $0.primary == true } ?? emails.first { $0.type == "work" } ?? emails.first)?.value
        }

        /// Sets the user's fields. `active` enables a user only when their source disabled them:
        /// a user an admin disabled stays disabled, whatever the identity provider sends.
        func apply(to user: inout User, at date: Date) {
            user.username = username
            user.displayName = displayName
            user.email = email
            user.externalID = externalID
            if active, user.status == .disabled, user.disabledBySource {
                user.status = .active
                user.disabledBySource = false
            } else if !active, user.status == .active {
                user.status = .disabled
                user.disabledBySource = true
            }
            user.updatedAt = date
        }

        func details(_ user: User) -> [String: String] {
            ["username": user.username, "status": user.status.rawValue, "source": "scim"]
        }
    }
}
