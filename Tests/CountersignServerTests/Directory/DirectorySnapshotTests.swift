import CountersignLDAP
import Foundation
import Testing
@testable import CountersignServer

/// Reading a directory's answers into people and groups (no server): ids, usernames, nested
/// groups (cycles included), both ways of listing membership, and what is skipped and why.
@Suite("Directory answers read into people and groups")
struct DirectorySnapshotTests {
    static func entry(_ dn: String, _ attributes: [String: [String]]) -> LDAPEntry {
        LDAPEntry(dn: dn, attributes: attributes.mapValues { $0.map { Array($0.utf8) } })
    }

    static func directory(_ kind: Directory.Kind = .openLDAP, membership: Directory.Membership? = nil,
                          nested: Bool = true) -> Directory {
        let defaults = Directory.defaults(for: kind)
        var groups = defaults.groups
        if let membership { groups.membership = membership }
        groups.nested = nested
        return Directory(
            tenantID: "ten_1", kind: kind, servers: ["ldaps://dc.example.com"], security: .ldaps, caCertificate: nil,
            bindDN: "cn=svc,dc=example,dc=com", connectTimeoutSeconds: 5, operationTimeoutSeconds: 30,
            userBaseDN: "dc=example,dc=com", userFilter: defaults.userFilter, attributes: defaults.attributes, groups: groups,
            pageSize: 500, syncIntervalMinutes: 0, justInTime: true, createdAt: Date(), updatedAt: Date())
    }

    static let uuids = (0..<10).map { String(format: "00000000-0000-0000-0000-%012d", $0) }

    static func person(_ uid: String, _ n: Int, memberOf: [String] = []) -> LDAPEntry {
        entry("uid=\(uid),ou=People,dc=example,dc=com", [
            "uid": [uid], "displayName": ["Person \(uid)"], "mail": ["\(uid)@example.com"], "entryUUID": [uuids[n]],
            "memberOf": memberOf,
        ])
    }

    static func group(_ cn: String, _ n: Int, members: [String]) -> LDAPEntry {
        entry("cn=\(cn),ou=Groups,dc=example,dc=com", ["cn": [cn], "entryUUID": [uuids[n]], "member": members])
    }

    @Test("member lists, nested groups and a cycle: everyone is in each group they reach, once")
    func nestedMembers() {
        let people = [Self.person("ada", 0), Self.person("bob", 1)]
        // staff ∋ ada; all ∋ staff, bob; staff ∋ all (a cycle); DNs written in another case.
        let groups = [
            Self.group("staff", 5, members: ["UID=ada,OU=people,DC=example,DC=com", "cn=all,ou=groups,dc=example,dc=com"]),
            Self.group("all", 6, members: ["cn=Staff,ou=Groups,dc=example,dc=com", "uid=bob, ou=People, dc=example, dc=com"]),
        ]
        let snapshot = DirectorySnapshot(users: people, groups: groups, directory: Self.directory())
        #expect(snapshot.skipped.isEmpty)
        let byName = Dictionary(uniqueKeysWithValues: snapshot.people.map { ($0.username, $0.groupIDs) })
        #expect(byName["ada"] == [Self.uuids[5], Self.uuids[6]])
        #expect(byName["bob"] == [Self.uuids[5], Self.uuids[6]], "bob reaches staff through the cycle")
        let flat = DirectorySnapshot(users: people, groups: groups, directory: Self.directory(nested: false))
        #expect(Dictionary(uniqueKeysWithValues: flat.people.map { ($0.username, $0.groupIDs) })
                == ["ada": [Self.uuids[5]], "bob": [Self.uuids[6]]])
    }

    @Test("memberOf on people and on groups, as Active Directory lists membership")
    func memberOf() {
        let staff = "CN=Staff,OU=Groups,DC=example,DC=com", all = "CN=All,OU=Groups,DC=example,DC=com"
        var directory = Self.directory(.activeDirectory)
        directory.attributes.id = "entryUUID"
        let people = [Self.entry("CN=Ada,OU=People,DC=example,DC=com", [
            "sAMAccountName": ["ada"], "entryUUID": [Self.uuids[0]], "memberOf": [staff, "CN=Elsewhere,DC=other"],
        ])]
        let groups = [
            Self.entry(staff, ["cn": ["Staff"], "entryUUID": [Self.uuids[5]], "memberOf": [all]]),
            Self.entry(all, ["cn": ["All"], "entryUUID": [Self.uuids[6]]]),
        ]
        let snapshot = DirectorySnapshot(users: people, groups: groups, directory: directory)
        #expect(snapshot.people.map(\.groupIDs) == [[Self.uuids[5], Self.uuids[6]]])
        #expect(snapshot.groups.map(\.name) == ["Staff", "All"])
    }

    @Test("objectGUID ids read as AD shows them; entries that cannot be kept are skipped with why")
    func idsAndSkips() {
        var directory = Self.directory(.activeDirectory)
        directory.groups.enabled = false
        let guid: [UInt8] = [0x8b, 0x2b, 0xa3, 0xd8, 0x11, 0x11, 0x22, 0x22, 0x33, 0x33, 0x44, 0x44, 0x55, 0x55, 0x66, 0x66]
        let people = [
            LDAPEntry(dn: "CN=Ada,DC=x", attributes: ["sAMAccountName": [Array("ada".utf8)], "objectGUID": [guid],
                                                      "mail": [Array("not an address".utf8)]]),
            LDAPEntry(dn: "CN=NoID,DC=x", attributes: ["sAMAccountName": [Array("noid".utf8)]]),
            LDAPEntry(dn: "CN=Spaced,DC=x", attributes: ["sAMAccountName": [Array("has space".utf8)], "objectGUID": [Array(repeating: 1, count: 16)]]),
            LDAPEntry(dn: "CN=Twin,DC=x", attributes: ["sAMAccountName": [Array("ada".utf8)], "objectGUID": [Array(repeating: 2, count: 16)]]),
            LDAPEntry(dn: "CN=Short,DC=x", attributes: ["sAMAccountName": [Array("short".utf8)], "objectGUID": [[1, 2, 3]]]),
        ]
        let snapshot = DirectorySnapshot(users: people, groups: [], directory: directory)
        #expect(snapshot.people.map(\.username) == ["ada"])
        #expect(snapshot.people.first?.sourceID == "d8a32b8b-1111-2222-3333-444455556666")
        #expect(snapshot.people.first?.email == nil, "an address no mail server takes is left out, the person kept")
        #expect(snapshot.skipped.map(\.dn) == ["CN=NoID,DC=x", "CN=Spaced,DC=x", "CN=Twin,DC=x", "CN=Short,DC=x"])
        #expect(snapshot.skipped[2].reason == "another entry has the username ada")
    }

    @Test("DNs compare without regard to case, spacing or escapes")
    func dnKeys() {
        #expect(DirectorySnapshot.key(ofDN: "CN=Sales\\, EMEA , OU=Groups,DC=Example") == DirectorySnapshot.key(ofDN: "cn=sales\\2C emea,ou=groups,dc=example"))
        #expect(DirectorySnapshot.key(ofDN: "") == nil)
        #expect(DirectorySnapshot.key(ofDN: "not a dn") == nil)
    }
}
