import CountersignCore
import CountersignLDAP
import Foundation

/// The people and groups a directory holds, as a sync reads them: every entry checked and
/// turned into what Countersign keeps, nested memberships resolved, and every entry that cannot
/// be kept listed with why. Made from the search answers alone, so that nothing is written until
/// the whole directory has been read.
struct DirectorySnapshot: Sendable, Equatable {
    struct Person: Sendable, Equatable {
        /// The directory's stable id (`DirectoryObjectID`'s text for `objectGUID` and `entryUUID`).
        var sourceID: String
        var dn: String
        var username: String
        var displayName: String?
        var email: String?
        /// The stable ids of every group the person is in, directly or through nested groups.
        var groupIDs: Set<String>
    }

    struct Group: Sendable, Equatable {
        var sourceID: String
        var dn: String
        var name: String
    }

    var people: [Person]
    var groups: [Group]
    var skipped: [DirectorySyncSummary.Skipped]

    /// Reads the answers of the user search and the group search (empty when groups are off).
    init(users: [LDAPEntry], groups groupEntries: [LDAPEntry], directory: Directory) {
        var skipped: [DirectorySyncSummary.Skipped] = []
        let settings = directory.groups

        // Groups first: people's memberships name them by DN.
        var groups: [Group] = []
        var groupKeys: [String] = []
        var groupByDN: [String: Int] = [:]
        var groupNames: Set<String> = []
        var groupIDs: Set<String> = []
        for entry in settings.enabled ? groupEntries : [] {
            guard let id = Self.stableID(of: entry, attribute: directory.attributes.id) else {
                skipped.append(.init(dn: entry.dn, reason: "the group has no \(directory.attributes.id)"))
                continue
            }
            guard let key = Self.key(ofDN: entry.dn) else {
                skipped.append(.init(dn: entry.dn, reason: "the group's DN cannot be read"))
                continue
            }
            let raw = entry.string(settings.nameAttribute) ?? (try? DistinguishedName(parsing: entry.dn))?.leafValue ?? ""
            guard let name = Self.groupName(raw) else {
                skipped.append(.init(dn: entry.dn, reason: "the group's \(settings.nameAttribute) is not a name Countersign keeps (1 to 128 characters without control or format characters)"))
                continue
            }
            guard !groupIDs.contains(id) else {
                skipped.append(.init(dn: entry.dn, reason: "another group has the same \(directory.attributes.id)"))
                continue
            }
            guard groupNames.insert(name.lowercased()).inserted else {
                skipped.append(.init(dn: entry.dn, reason: "another group is named \(name)"))
                continue
            }
            groupIDs.insert(id)
            groupByDN[key] = groups.count
            groupKeys.append(key)
            groups.append(Group(sourceID: id, dn: entry.dn, name: name))
        }

        // Who is directly in what: from the groups' member lists, and from the entries' own
        // memberOf when that is how the directory lists membership. Keys are group indices;
        // members are normalised DNs (people and groups alike).
        var members: [Int: Set<String>] = [:]
        var memberOf: [String: Set<Int>] = [:]
        for entry in groupEntries {
            guard let key = Self.key(ofDN: entry.dn), let index = groupByDN[key] else { continue }
            for value in entry.strings(settings.memberAttribute) {
                if let member = Self.key(ofDN: value) { members[index, default: []].insert(member) }
            }
            if settings.membership == .memberOf {
                for value in entry.strings(directory.attributes.memberOf) {
                    if let parent = Self.key(ofDN: value).flatMap({ groupByDN[$0] }) { memberOf[key, default: []].insert(parent) }
                }
            }
        }
        for (index, names) in members {
            for member in names { memberOf[member, default: []].insert(index) }
        }

        /// The groups `key` is in: directly, and through nested groups when they count.
        func groupsOf(_ key: String, extra: Set<Int>) -> Set<Int> {
            var found = extra.union(memberOf[key] ?? [])
            guard settings.nested else { return found }
            var queue = Array(found)
            while let next = queue.popLast() {
                for parent in memberOf[groupKeys[next]] ?? [] where found.insert(parent).inserted {
                    queue.append(parent)
                }
            }
            return found
        }

        var people: [Person] = []
        var usernames: Set<String> = []
        var personIDs: Set<String> = []
        for entry in users {
            guard let id = Self.stableID(of: entry, attribute: directory.attributes.id) else {
                skipped.append(.init(dn: entry.dn, reason: "the entry has no \(directory.attributes.id)"))
                continue
            }
            guard let raw = entry.string(directory.attributes.username),
                  let username = try? UserRegistration.username(raw) else {
                skipped.append(.init(dn: entry.dn, reason: "the entry's \(directory.attributes.username) is missing or not a username Countersign keeps (1 to 128 characters without white space, control or format characters)"))
                continue
            }
            guard personIDs.insert(id).inserted else {
                skipped.append(.init(dn: entry.dn, reason: "another entry has the same \(directory.attributes.id)"))
                continue
            }
            guard usernames.insert(username).inserted else {
                skipped.append(.init(dn: entry.dn, reason: "another entry has the username \(username)"))
                continue
            }
            var direct: Set<Int> = []
            if settings.enabled, settings.membership == .memberOf {
                for value in entry.strings(directory.attributes.memberOf) {
                    if let index = Self.key(ofDN: value).flatMap({ groupByDN[$0] }) { direct.insert(index) }
                }
            }
            let key = Self.key(ofDN: entry.dn) ?? ""
            let inGroups = settings.enabled ? groupsOf(key, extra: direct) : []
            people.append(Person(
                sourceID: id, dn: entry.dn, username: username,
                displayName: entry.string(directory.attributes.displayName).flatMap { try? AdminFields.name($0) },
                email: entry.string(directory.attributes.email).flatMap { try? UserRegistration.email($0) },
                groupIDs: Set(inGroups.map { groups[$0].sourceID })))
        }
        self.people = people
        self.groups = groups
        self.skipped = skipped
    }

    /// The entry's stable id: `objectGUID` as a GUID, a UUID's text as a UUID, any other
    /// attribute's text as it is.
    static func stableID(of entry: LDAPEntry, attribute: String) -> String? {
        if attribute.lowercased() == "objectguid" {
            return entry.values(attribute).first.flatMap { DirectoryObjectID(objectGUID: $0) }?.description
        }
        guard let text = entry.string(attribute), !text.isEmpty, text.utf8.count <= 256 else { return nil }
        return DirectoryObjectID(entryUUID: text)?.description ?? text
    }

    /// A DN as compared: types and values in lower case, in RFC 4514's form. The attributes that
    /// name entries (`cn`, `ou`, `dc`, `uid`) match case-insensitively, so `CN=Sales,DC=Example`
    /// and `cn=sales,dc=example` are one entry.
    static func key(ofDN text: String) -> String? {
        guard let dn = try? DistinguishedName(parsing: text), !dn.rdns.isEmpty else { return nil }
        return DistinguishedName(rdns: dn.rdns.map { rdn in
            rdn.map { DistinguishedName.Attribute(type: $0.type.lowercased(), value: $0.value.lowercased()) }
                .sorted { ($0.type, $0.value) < ($1.type, $1.value) }
        }).description
    }

    /// Group names: 1–128 characters once trimmed, no control or format characters.
    static func groupName(_ raw: String) -> String? {
        let name = raw.trimmingCharacters(in: .whitespacesAndNewlines)
        guard (1...128).contains(name.count), !NameCharacters.refuses(name) else { return nil }
        return name
    }
}
