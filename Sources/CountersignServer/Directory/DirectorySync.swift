import CountersignCore
import CountersignLDAP
import Foundation

/// Why a sync (or a connection test, or a lookup) changed nothing.
enum DirectorySyncError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The tenant has no directory.
    case notConfigured
    /// Another node or request is syncing this directory.
    case alreadyRunning
    /// The directory could not be read: nothing was changed.
    case directory(LDAPError)
    /// The directory's answer would disable every user it keeps: taken as a mistake (a filter
    /// or base that matches nothing), and nothing was changed.
    case emptyAnswer(keptUsers: Int)

    var description: String {
        switch self {
        case .notConfigured: "this tenant has no directory"
        case .alreadyRunning: "a sync of this directory is already running"
        case .directory(let error): "the directory could not be read, so nothing was changed: \(error)"
        case .emptyAnswer(let kept):
            "the directory returned no users, which would disable all \(kept) users it keeps; nothing was changed (check user_base_dn and user_filter)"
        }
    }
}

/// Reads a tenant's directory and makes its users and groups match: creates the users that
/// appeared, renames and updates those that changed (kept by their stable id, so a rename in the
/// directory is the same Countersign user), disables those that are gone or disabled there, and
/// enables those it had disabled that are back. It never deletes a user or a device, and never
/// touches a user it does not keep, except that a local user of the same name is adopted (the
/// directory becomes where that user is kept). Groups it keeps are created, renamed, deleted and
/// given their members.
///
/// The whole directory is read before anything is written, and everything is written in one
/// transaction with an audit record per change and one for the sync: a directory that fails
/// mid-read changes nothing, and a dry run reads the same and writes nothing.
struct DirectorySync: Sendable {
    let database: any Database
    let directories: any DirectoryRepository
    let users: any UserRepository
    let groups: any GroupRepository
    var sessions = SQLBrowserSessionRepository()
    let audit: AuditLog
    let sealer: SecretSealer
    let now: @Sendable () -> Date

    /// How long a node may hold a directory's sync before another may take it over.
    static let lease: TimeInterval = 15 * 60
    static let actor = "directory-sync"

    /// The password's sealing context: a sealed password copied to another tenant's row does
    /// not open there.
    static func sealingContext(tenantID: String) -> String { "directory-bind-password:\(tenantID)" }

    /// The tenant's directory and a client for it.
    func client(tenantID: String) async throws -> (Directory, LDAPClient) {
        guard let (directory, sealed) = try await directories.find(tenantID: tenantID, on: database) else {
            throw DirectorySyncError.notConfigured
        }
        let password = String(decoding: try sealer.open(sealed, context: Self.sealingContext(tenantID: tenantID)), as: UTF8.self)
        do {
            return (directory, LDAPClient(configuration: try directory.ldapConfiguration(password: password)))
        } catch {
            throw DirectorySyncError.directory(error)
        }
    }

    /// Syncs the tenant's directory (`actor` asked, `schedule` for the scheduler) and records
    /// the outcome on the directory, failure included. With `leased`, the caller holds the
    /// lease already (the scheduler took it with the due check).
    func run(tenantID: String, dryRun: Bool, actor: String, leased: Bool = false) async throws -> DirectorySyncSummary {
        let (directory, client) = try await client(tenantID: tenantID)
        let startedAt = now()
        if !dryRun, !leased {
            guard try await directories.acquireLease(
                tenantID: tenantID, until: startedAt.addingTimeInterval(Self.lease), now: startedAt, due: false, on: database)
            else { throw DirectorySyncError.alreadyRunning }
        }
        do {
            let snapshot = try await read(directory, with: client)
            let summary: DirectorySyncSummary
            if dryRun {
                summary = try await apply(snapshot, directory: directory, startedAt: startedAt, dryRun: true, actor: actor,
                                          on: database)
            } else {
                summary = try await database.transaction { executor in
                    let summary = try await apply(snapshot, directory: directory, startedAt: startedAt, dryRun: false,
                                                  actor: actor, on: executor)
                    try await directories.finishSync(
                        tenantID: tenantID, record: DirectorySyncRecord(at: summary.finishedAt, actor: actor, summary: summary),
                        nextSyncAt: directory.nextSync(after: summary.finishedAt), on: executor)
                    return summary
                }
            }
            return summary
        } catch {
            if !dryRun {
                let failedAt = now()
                let message = (error as? DirectorySyncError)?.description ?? "the sync failed: \(error)"
                try? await directories.finishSync(
                    tenantID: tenantID, record: DirectorySyncRecord(at: failedAt, actor: actor, error: message),
                    nextSyncAt: directory.nextSync(after: failedAt), on: database)
                try? await audit.record(
                    "directory.sync_failed", actor: actor, tenantID: tenantID, target: ("directory", tenantID),
                    details: ["error": message], at: failedAt, on: database)
            }
            throw error
        }
    }

    /// Everything the sync needs from the directory: its users, and its groups when they are kept.
    func read(_ directory: Directory, with client: LDAPClient) async throws(DirectorySyncError) -> DirectorySnapshot {
        let attributes = directory.attributes
        do {
            let people = try await client.search(
                base: directory.userBaseDN, filter: LDAPFilter(directory.userFilter),
                attributes: [attributes.username, attributes.displayName, attributes.email, attributes.id,
                             attributes.memberOf],
                pageSize: directory.pageSize)
            var groupEntries: [LDAPEntry] = []
            if directory.groups.enabled {
                groupEntries = try await client.search(
                    base: directory.groups.baseDN ?? directory.userBaseDN, filter: LDAPFilter(directory.groups.filter),
                    attributes: [directory.groups.nameAttribute, directory.groups.memberAttribute, attributes.id,
                                 attributes.memberOf],
                    pageSize: directory.pageSize)
            }
            return DirectorySnapshot(users: people, groups: groupEntries, directory: directory)
        } catch {
            throw .directory(error)
        }
    }

    /// Compares the snapshot with what the tenant keeps and, unless `dryRun`, writes the
    /// difference on `executor` (one transaction).
    func apply(_ snapshot: DirectorySnapshot, directory: Directory, startedAt: Date, dryRun: Bool, actor: String,
               on executor: any SQLExecutor) async throws -> DirectorySyncSummary {
        let tenantID = directory.tenantID
        let date = now()
        var summary = DirectorySyncSummary(
            dryRun: dryRun, startedAt: startedAt, finishedAt: date, usersFound: snapshot.people.count,
            groupsFound: snapshot.groups.count, skipped: snapshot.skipped)

        // What the tenant has.
        var existing: [User] = []
        var page: [User]
        repeat {
            page = try await users.list(tenantID: tenantID, after: existing.last?.id, limit: 1_000, on: executor)
            existing += page
        } while page.count == 1_000
        var bySourceID: [String: User] = [:]
        var byUsername: [String: User] = [:]
        for user in existing {
            byUsername[user.username] = user
            if user.source == .directory, let id = user.sourceID { bySourceID[id] = user }
        }
        let kept = bySourceID.values.filter { $0.status == .active }.count
        if snapshot.people.isEmpty, kept > 0 { throw DirectorySyncError.emptyAnswer(keptUsers: kept) }

        // Users.
        var userIDBySourceID: [String: String] = [:]
        var seen: Set<String> = []
        for person in snapshot.people {
            if var user = bySourceID[person.sourceID] {
                seen.insert(user.id)
                let before = user
                if user.username != person.username {
                    if let holder = byUsername[person.username], holder.id != user.id {
                        summary.skipped.append(.init(dn: person.dn, reason: "renamed to \(person.username) in the directory, but another user (\(holder.id)) has that username; kept as \(user.username)"))
                    } else {
                        byUsername[user.username] = nil
                        user.username = person.username
                        byUsername[user.username] = user
                    }
                }
                user.displayName = person.displayName
                user.email = person.email
                var enabled = false
                if user.status == .disabled, user.disabledBySource {
                    user.status = .active
                    user.disabledBySource = false
                    enabled = true
                }
                userIDBySourceID[person.sourceID] = user.id
                guard user != before else { continue }
                user.updatedAt = date
                if enabled { summary.usersEnabled.append(user.username) } else { summary.usersUpdated.append(user.username) }
                if !dryRun {
                    try await users.update(user, on: executor)
                    var details = ["username": user.username, "source": "directory"]
                    if before.username != user.username { details["previous_username"] = before.username }
                    if enabled { (details["status"], details["previous_status"]) = ("active", "disabled") }
                    try await audit.record(
                        "user.updated", actor: actor, tenantID: tenantID, target: ("user", user.id), details: details,
                        at: date, on: executor)
                }
            } else if var user = byUsername[person.username] {
                guard user.source == .local else {
                    summary.skipped.append(.init(dn: person.dn, reason: "a user named \(person.username) is kept by \(user.source == .scim ? "a SCIM client" : "another directory entry")"))
                    continue
                }
                seen.insert(user.id)
                user.source = .directory
                user.sourceID = person.sourceID
                user.displayName = person.displayName ?? user.displayName
                user.email = person.email ?? user.email
                user.updatedAt = date
                userIDBySourceID[person.sourceID] = user.id
                summary.usersAdopted.append(user.username)
                if !dryRun {
                    try await users.update(user, on: executor)
                    try await audit.record(
                        "user.adopted", actor: actor, tenantID: tenantID, target: ("user", user.id),
                        details: ["username": user.username, "source": "directory", "source_id": person.sourceID],
                        at: date, on: executor)
                }
            } else {
                let user = User(
                    id: Identifier.make("usr", at: date), tenantID: tenantID, username: person.username,
                    displayName: person.displayName, status: .active, email: person.email, source: .directory,
                    sourceID: person.sourceID, createdAt: date, updatedAt: date)
                byUsername[user.username] = user
                userIDBySourceID[person.sourceID] = user.id
                summary.usersCreated.append(user.username)
                if !dryRun {
                    try await users.insert(user, on: executor)
                    try await audit.record(
                        "user.created", actor: actor, tenantID: tenantID, target: ("user", user.id),
                        details: ["username": user.username, "source": "directory"], at: date, on: executor)
                }
            }
        }
        for var user in bySourceID.values.sorted(by: { $0.id < $1.id }) where !seen.contains(user.id) && user.status == .active {
            user.status = .disabled
            user.disabledBySource = true
            user.updatedAt = date
            summary.usersDisabled.append(user.username)
            guard !dryRun else { continue }
            try await users.update(user, on: executor)
            // As when an admin disables a user: their browser sessions end for good.
            let ended = try await sessions.revokeAll(tenantID: tenantID, userID: user.id, at: date, on: executor)
            var details = ["username": user.username, "status": "disabled", "previous_status": "active", "source": "directory",
                           "reason": "gone from the directory or disabled there"]
            if ended > 0 { details["sessions_ended"] = String(ended) }
            try await audit.record(
                "user.updated", actor: actor, tenantID: tenantID, target: ("user", user.id), details: details, at: date,
                on: executor)
        }

        // Groups, and who is in them: left as they are when the directory's groups are not synced.
        if directory.groups.enabled {
            try await applyGroups(snapshot, userIDs: userIDBySourceID, tenantID: tenantID, dryRun: dryRun, actor: actor,
                                  at: date, to: &summary, on: executor)
        }

        summary.finishedAt = now()
        if !dryRun {
            try await audit.record(
                "directory.synced", actor: actor, tenantID: tenantID, target: ("directory", tenantID),
                details: summary.auditDetails, at: summary.finishedAt, on: executor)
        }
        return summary
    }

    /// Makes the tenant's directory groups match the snapshot's, and their members the people's
    /// (`userIDs`: Countersign's user of each stable id), adding what it did to `summary`.
    private func applyGroups(_ snapshot: DirectorySnapshot, userIDs userIDBySourceID: [String: String], tenantID: String,
                             dryRun: Bool, actor: String, at date: Date, to summary: inout DirectorySyncSummary,
                             on executor: any SQLExecutor) async throws {
        var keptGroups: [UserGroup] = []
        var groupPage: [UserGroup]
        repeat {
            groupPage = try await groups.list(tenantID: tenantID, source: nil, name: nil, after: keptGroups.last?.id,
                                              limit: 1_000, on: executor)
            keptGroups += groupPage
        } while groupPage.count == 1_000
        var groupBySourceID: [String: UserGroup] = [:]
        var groupByName: [String: UserGroup] = [:]
        for group in keptGroups {
            groupByName[group.name.lowercased()] = group
            if group.source == .directory, let id = group.sourceID { groupBySourceID[id] = group }
        }
        var membersBySourceID: [String: Set<String>] = [:]
        for person in snapshot.people {
            guard let userID = userIDBySourceID[person.sourceID] else { continue }
            for groupID in person.groupIDs { membersBySourceID[groupID, default: []].insert(userID) }
        }
        var present: Set<String> = []
        for entry in snapshot.groups {
            var group: UserGroup
            if let found = groupBySourceID[entry.sourceID] {
                group = found
                present.insert(group.id)
                if group.name != entry.name {
                    if let holder = groupByName[entry.name.lowercased()], holder.id != group.id {
                        summary.skipped.append(.init(dn: entry.dn, reason: "renamed to \(entry.name) in the directory, but another group has that name; kept as \(group.name)"))
                    } else {
                        let previous = group.name
                        groupByName[previous.lowercased()] = nil
                        group.name = entry.name
                        group.updatedAt = date
                        groupByName[group.name.lowercased()] = group
                        summary.groupsUpdated.append(group.name)
                        if !dryRun {
                            try await groups.update(group, on: executor)
                            try await audit.record(
                                "group.updated", actor: actor, tenantID: tenantID, target: ("group", group.id),
                                details: ["name": group.name, "previous_name": previous, "source": "directory"], at: date,
                                on: executor)
                        }
                    }
                }
            } else {
                if let holder = groupByName[entry.name.lowercased()] {
                    summary.skipped.append(.init(dn: entry.dn, reason: "a group named \(holder.name) is kept by \(holder.source == .scim ? "a SCIM client" : holder.source == .local ? "Countersign (local)" : "another directory entry")"))
                    continue
                }
                group = UserGroup(id: Identifier.make("grp", at: date), tenantID: tenantID, name: entry.name, externalID: nil,
                                  source: .directory, sourceID: entry.sourceID, createdAt: date, updatedAt: date)
                groupByName[group.name.lowercased()] = group
                summary.groupsCreated.append(group.name)
                if !dryRun {
                    try await groups.insert(group, on: executor)
                    try await audit.record(
                        "group.created", actor: actor, tenantID: tenantID, target: ("group", group.id),
                        details: ["name": group.name, "source": "directory"], at: date, on: executor)
                }
            }
            let wanted = membersBySourceID[entry.sourceID] ?? []
            let current = present.contains(group.id) ? try await groups.memberIDs(groupID: group.id, on: executor) : []
            let adding = wanted.subtracting(current), removing = current.subtracting(wanted)
            summary.membershipsAdded += adding.count
            summary.membershipsRemoved += removing.count
            guard !dryRun, !(adding.isEmpty && removing.isEmpty) else { continue }
            _ = try await groups.addMembers(groupID: group.id, tenantID: tenantID, userIDs: Array(adding), on: executor)
            _ = try await groups.removeMembers(groupID: group.id, userIDs: Array(removing), on: executor)
            try await audit.record(
                "group.members_changed", actor: actor, tenantID: tenantID, target: ("group", group.id),
                details: ["name": group.name, "added": String(adding.count), "removed": String(removing.count),
                          "source": "directory"],
                at: date, on: executor)
        }
        for group in groupBySourceID.values.sorted(by: { $0.id < $1.id }) where !present.contains(group.id) {
            summary.groupsDeleted.append(group.name)
            guard !dryRun else { continue }
            try await groups.delete(id: group.id, on: executor)
            try await audit.record(
                "group.deleted", actor: actor, tenantID: tenantID, target: ("group", group.id),
                details: ["name": group.name, "source": "directory", "reason": "gone from the directory"], at: date,
                on: executor)
        }
    }

}

extension DirectorySyncSummary {
    /// The counts, for the sync's audit record (the names are in each change's own record).
    var auditDetails: [String: String] {
        [
            "users_found": String(usersFound), "groups_found": String(groupsFound),
            "users_created": String(usersCreated.count), "users_adopted": String(usersAdopted.count),
            "users_updated": String(usersUpdated.count), "users_disabled": String(usersDisabled.count),
            "users_enabled": String(usersEnabled.count), "groups_created": String(groupsCreated.count),
            "groups_updated": String(groupsUpdated.count), "groups_deleted": String(groupsDeleted.count),
            "memberships_added": String(membershipsAdded), "memberships_removed": String(membershipsRemoved),
            "skipped": String(skipped.count),
        ]
    }
}

extension Directory {
    /// When the next scheduled sync is due after one at `date`; nil when syncs are on demand only.
    func nextSync(after date: Date) -> Date? {
        syncIntervalMinutes > 0 ? date.addingTimeInterval(TimeInterval(syncIntervalMinutes) * 60) : nil
    }

    /// The client's configuration, with the service account's password.
    func ldapConfiguration(password: String) throws(LDAPError) -> LDAPConfiguration {
        try LDAPConfiguration(
            servers: servers, security: security.ldap, caCertificatesPEM: caCertificate, bindDN: bindDN,
            bindPassword: password, connectTimeout: .seconds(connectTimeoutSeconds),
            operationTimeout: .seconds(operationTimeoutSeconds))
    }
}

extension Directory.Security {
    var ldap: LDAPConfiguration.Security {
        switch self {
        case .ldaps: .ldaps
        case .starttls: .startTLS
        case .plain: .plain
        }
    }
}
