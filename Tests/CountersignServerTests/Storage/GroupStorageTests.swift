import CountersignCore
import Foundation
import Testing
@testable import CountersignServer

/// Users' directory fields and groups on each engine: what directory sync and SCIM rely on.
@Suite("Groups and users' sources in storage")
struct GroupStorageTests {
    private let users = SQLUserRepository()
    private let groups = SQLGroupRepository()

    private func withTenant(_ engine: Engine, _ body: (any Database, String) async throws -> Void) async throws {
        try await ScratchDatabase.with(engine) { database in
            try await Migrations.migrate(database)
            var tenantIDs: [String] = []
            for slug in ["acme", "other"] {
                let date = Date()
                let tenant = Tenant(id: Identifier.make("ten", at: date), slug: slug, displayName: slug, isDefault: slug == "acme",
                                    signingKey: ECPublicJWK(x: "x", y: "y"), createdAt: date, updatedAt: date)
                try await SQLTenantRepository().insert(tenant, sealedSigningKey: Data([1]), on: database)
                tenantIDs.append(tenant.id)
            }
            try await body(database, tenantIDs[0])
        }
    }

    /// Now, to the millisecond that storage keeps, so that what is read back compares equal.
    private var now: Date { Date(timeIntervalSince1970: (Date().timeIntervalSince1970 * 1000).rounded(.down) / 1000) }

    private func user(_ name: String, tenantID: String, source: User.Source = .local, sourceID: String? = nil,
                      email: String? = nil, externalID: String? = nil) -> User {
        let date = now
        return User(id: Identifier.make("usr", at: date), tenantID: tenantID, username: name, displayName: nil, status: .active,
                    email: email, externalID: externalID, source: source, sourceID: sourceID, createdAt: date, updatedAt: date)
    }

    private func group(_ name: String, tenantID: String, source: User.Source = .local, sourceID: String? = nil) -> UserGroup {
        let date = now
        return UserGroup(id: Identifier.make("grp", at: date), tenantID: tenantID, name: name, externalID: nil, source: source,
                         sourceID: sourceID, createdAt: date, updatedAt: date)
    }

    @Test("a user's e-mail, external id, source and stable id round-trip and are found by each", arguments: Engine.available)
    func userSourceFields(engine: Engine) async throws {
        try await withTenant(engine) { database, tenantID in
            let ada = user("ada", tenantID: tenantID, source: .directory, sourceID: "5b8f-uuid", email: "Ada@Example.com",
                           externalID: "ext-1")
            try await users.insert(ada, on: database)
            try await users.insert(user("bob", tenantID: tenantID, email: "bob@example.com", externalID: "ext-1"), on: database)
            #expect(try await users.find(id: ada.id, tenantID: tenantID, on: database) == ada)
            #expect(try await users.find(sourceID: "5b8f-uuid", source: .directory, tenantID: tenantID, on: database)?.id == ada.id)
            #expect(try await users.find(sourceID: "5b8f-uuid", source: .scim, tenantID: tenantID, on: database) == nil)
            #expect(try await users.list(tenantID: tenantID, externalID: "ext-1", limit: 10, on: database).map(\.username)
                    == ["ada", "bob"])
            #expect(try await users.list(tenantID: tenantID, email: "ada@example.COM", limit: 10, on: database).map(\.id) == [ada.id])
            #expect(try await users.list(tenantID: tenantID, source: .directory, after: nil, limit: 10, on: database).map(\.id)
                    == [ada.id])
            var renamed = ada
            renamed.username = "ada.lovelace"
            renamed.email = nil
            renamed.externalID = nil
            try await users.update(renamed, on: database)
            #expect(try await users.find(sourceID: "5b8f-uuid", source: .directory, tenantID: tenantID, on: database) == renamed)
            let counts = try await users.count(tenantID: tenantID, on: database)
            #expect(counts.all == 2 && counts.active == 2)
            // One stable id per tenant and source.
            await #expect(throws: StorageError.uniqueViolation) {
                try await users.insert(user("twin", tenantID: tenantID, source: .directory, sourceID: "5b8f-uuid"), on: database)
            }
        }
    }

    @Test("members are added once, only from the group's tenant, listed, removed, and go with their user or group",
          arguments: Engine.available)
    func membership(engine: Engine) async throws {
        try await withTenant(engine) { database, tenantID in
            let otherTenant = try #require(try await SQLTenantRepository().find(slug: "other", on: database)).id
            let ada = user("ada", tenantID: tenantID), bob = user("bob", tenantID: tenantID)
            let stranger = user("eve", tenantID: otherTenant)
            for person in [ada, bob, stranger] { try await users.insert(person, on: database) }
            let staff = group("staff", tenantID: tenantID, source: .directory, sourceID: "g-1")
            let admins = group("admins", tenantID: tenantID)
            try await groups.insert(staff, on: database)
            try await groups.insert(admins, on: database)
            await #expect(throws: StorageError.uniqueViolation) {
                try await groups.insert(group("staff", tenantID: tenantID), on: database)
            }

            let added = try await groups.addMembers(
                groupID: staff.id, tenantID: tenantID, userIDs: [ada.id, bob.id, stranger.id, "usr_none", ada.id], on: database)
            #expect(Set(added) == [ada.id, bob.id])
            #expect(try await groups.addMembers(groupID: staff.id, tenantID: tenantID, userIDs: [ada.id], on: database).isEmpty)
            _ = try await groups.addMembers(groupID: admins.id, tenantID: tenantID, userIDs: [ada.id], on: database)
            #expect(try await groups.memberIDs(groupID: staff.id, on: database) == [ada.id, bob.id])
            let page = try await groups.members(groupID: staff.id, after: nil, limit: 1, on: database)
            #expect(page.count == 1)
            let rest = try await groups.members(groupID: staff.id, after: page.last?.userID, limit: 10, on: database)
            #expect(Set((page + rest).map(\.username)) == ["ada", "bob"])
            #expect(try await groups.groups(userID: ada.id, on: database).map(\.name) == ["admins", "staff"])
            #expect(try await groups.groupNames(userIDs: [ada.id, bob.id, stranger.id], on: database)
                    == [ada.id: ["admins", "staff"], bob.id: ["staff"]])
            #expect(try await groups.find(sourceID: "g-1", source: .directory, tenantID: tenantID, on: database) == staff)
            #expect(try await groups.list(tenantID: tenantID, source: nil, name: "STAFF", after: nil, limit: 10, on: database)
                    == [staff])
            #expect(try await groups.list(tenantID: tenantID, source: .local, name: nil, after: nil, limit: 10, on: database)
                    == [admins])
            #expect(try await groups.count(tenantID: tenantID, on: database) == 2)

            #expect(try await groups.removeMembers(groupID: staff.id, userIDs: [bob.id, stranger.id], on: database) == [bob.id])
            try await users.delete(id: ada.id, on: database)
            #expect(try await groups.memberIDs(groupID: staff.id, on: database).isEmpty)
            _ = try await groups.addMembers(groupID: staff.id, tenantID: tenantID, userIDs: [bob.id], on: database)
            try await groups.delete(id: staff.id, on: database)
            #expect(try await groups.find(id: staff.id, tenantID: tenantID, on: database) == nil)
            #expect(try await groups.groups(userID: bob.id, on: database).isEmpty)
            #expect(try await users.find(id: bob.id, tenantID: tenantID, on: database) != nil)
        }
    }
}
