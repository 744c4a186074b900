import CountersignCore
import CountersignLDAP
import Foundation
import Logging
import Synchronization

/// Just-in-time users: a username that sign-in, CIBA, RADIUS, PAM or a trusted issuer names and
/// the tenant does not have is looked up in the tenant's directory (when it has one with
/// `just_in_time` on) and, if the directory's user search finds exactly that person, created
/// as the next sync would create them, with the kept groups they are directly in.
///
/// A username the directory does not have is remembered for a minute, so that a stream of
/// unknown names (a typo retried, or someone probing) asks the directory once each, not once
/// per request. A directory that cannot be reached makes the lookup find no one: the request
/// fails as for an unknown user, and the failure is logged.
final class DirectoryLookup: Sendable {
    let database: any Database
    let directories: any DirectoryRepository
    let users: any UserRepository
    let groups: any GroupRepository
    let sync: DirectorySync
    let audit: AuditLog
    let logger: Logger
    let now: @Sendable () -> Date

    /// (tenant, username) → until when it is known to be absent.
    private let misses = Mutex<[String: Date]>([:])
    static let missLifetime: TimeInterval = 60
    static let maximumMisses = 10_000
    static let actor = "directory-jit"

    init(database: any Database, directories: any DirectoryRepository, users: any UserRepository,
         groups: any GroupRepository, sync: DirectorySync, audit: AuditLog, logger: Logger,
         now: @escaping @Sendable () -> Date) {
        self.database = database
        self.directories = directories
        self.users = users
        self.groups = groups
        self.sync = sync
        self.audit = audit
        self.logger = logger
        self.now = now
    }

    /// The user named `username` in the tenant, created from the directory when the directory
    /// has them; nil when it does not, when just-in-time lookup is off, or the directory failed.
    func provision(username: String, tenantID: String) async -> User? {
        guard (try? UserRegistration.username(username)) != nil else { return nil }
        let key = tenantID + "\u{0}" + username
        let date = now()
        if let until = misses.withLock({ $0[key] }), until > date { return nil }
        do {
            guard let (directory, client) = try await enabledClient(tenantID: tenantID),
                  let person = try await person(named: username, in: directory, with: client)
            else {
                remember(miss: key, at: date)
                return nil
            }
            let groupIDs = try await directGroups(of: username, in: directory, with: client)
            return try await create(person, groupIDs: groupIDs, directory: directory)
        } catch {
            logger.warning("directory lookup failed", metadata: ["tenant": "\(tenantID)", "error": "\(error)"])
            return nil
        }
    }

    /// The tenant's directory and a client for it, when it has one with just-in-time lookup on.
    private func enabledClient(tenantID: String) async throws -> (Directory, LDAPClient)? {
        guard try await directories.find(tenantID: tenantID, on: database) != nil else { return nil }
        let (directory, client) = try await sync.client(tenantID: tenantID)
        return directory.justInTime ? (directory, client) : nil
    }

    /// The one person the user search finds with that username; nil for none or several.
    private func person(named username: String, in directory: Directory, with client: LDAPClient)
        async throws(LDAPError) -> DirectorySnapshot.Person? {
        let attributes = directory.attributes
        let filter = LDAPFilter.and([LDAPFilter(directory.userFilter), .equality(attributes.username, username)])
        let entries = try await client.search(
            base: directory.userBaseDN, filter: filter,
            attributes: [attributes.username, attributes.displayName, attributes.email, attributes.id, attributes.memberOf],
            pageSize: 2)
        // Groups are read apart (`directGroups`).
        var noGroups = directory
        noGroups.groups.enabled = false
        let snapshot = DirectorySnapshot(users: entries, groups: [], directory: noGroups)
        // The directory matches names case-insensitively; Countersign's usernames are exact.
        guard snapshot.people.count == 1, let person = snapshot.people.first, person.username == username,
              entries.count == 1 else { return nil }
        return person
    }

    /// The stable ids of the groups `person`'s entry lists in memberOf (direct ones only; the
    /// next sync adds the nested), each read from its own entry. At most 100.
    private func directGroups(of username: String, in directory: Directory, with client: LDAPClient)
        async throws(LDAPError) -> Set<String> {
        guard directory.groups.enabled, directory.groups.membership == .memberOf else { return [] }
        let attributes = directory.attributes
        let filter = LDAPFilter.and([LDAPFilter(directory.userFilter), .equality(attributes.username, username)])
        guard let entry = try await client.search(
            base: directory.userBaseDN, filter: filter, attributes: [attributes.memberOf], pageSize: 2).first
        else { return [] }
        var ids: Set<String> = []
        for dn in entry.strings(attributes.memberOf).prefix(100) {
            let group = try await client.search(
                base: dn, scope: .base, filter: LDAPFilter(directory.groups.filter), attributes: [attributes.id], pageSize: 1)
            if let id = group.first.flatMap({ DirectorySnapshot.stableID(of: $0, attribute: attributes.id) }) { ids.insert(id) }
        }
        return ids
    }

    private func create(_ person: DirectorySnapshot.Person, groupIDs: Set<String>, directory: Directory) async throws -> User? {
        let date = now()
        let user = User(
            id: Identifier.make("usr", at: date), tenantID: directory.tenantID, username: person.username,
            displayName: person.displayName, status: .active, email: person.email, source: .directory,
            sourceID: person.sourceID, createdAt: date, updatedAt: date)
        do {
            try await database.transaction { [users, groups, audit] executor in
                // A directory user of this id under another name (renamed since the last sync)
                // is the next sync's to rename; creating a second user would split the person.
                if try await users.find(sourceID: person.sourceID, source: .directory, tenantID: directory.tenantID,
                                        on: executor) != nil {
                    throw StorageError.uniqueViolation
                }
                try await users.insert(user, on: executor)
                try await audit.record(
                    "user.created", actor: Self.actor, tenantID: user.tenantID, target: ("user", user.id),
                    details: ["username": user.username, "source": "directory", "reason": "first use"], at: date,
                    on: executor)
                for id in groupIDs.sorted() {
                    guard let group = try await groups.find(sourceID: id, source: .directory, tenantID: user.tenantID,
                                                            on: executor) else { continue }
                    _ = try await groups.addMembers(groupID: group.id, tenantID: user.tenantID, userIDs: [user.id], on: executor)
                }
            }
            return user
        } catch StorageError.uniqueViolation {
            // Created meanwhile by another request or node, or kept under another name.
            return try await users.find(username: person.username, tenantID: directory.tenantID, on: database)
        }
    }

    private func remember(miss key: String, at date: Date) {
        misses.withLock { misses in
            if misses.count >= Self.maximumMisses { misses = misses.filter { $0.value > date } }
            if misses.count >= Self.maximumMisses { misses.removeAll() }
            misses[key] = date.addingTimeInterval(Self.missLifetime)
        }
    }
}
