import CountersignLDAP
import Foundation
import Testing

/// The directory changing under the client: entries added, changed, renamed and deleted, and the
/// directory going down and coming back. Each test has a directory of its own.
@Suite("LDAP client while the directory changes")
struct LDAPDirectoryChangesTests {
    static func withDirectory(_ body: (SlapdHarness, LDAPClient) async throws -> Void) async throws {
        guard SlapdHarness.available else { return }
        let slapd = try await SlapdHarness.start()
        defer { slapd.shutdown() }
        let client = LDAPClient(configuration: try LDAPConfiguration(
            servers: [slapd.ldapsURL], caCertificatesPEM: slapd.caPEM, bindDN: DirectoryFixture.serviceDN,
            bindPassword: DirectoryFixture.servicePassword, connectTimeout: .seconds(2), operationTimeout: .seconds(10)))
        try await body(slapd, client)
    }

    @Test("an entry added, changed, renamed and deleted is seen so by the next search, its id unchanged by the rename")
    func changesAreSeen() async throws {
        try await Self.withDirectory { slapd, client in
            func erin() async throws -> LDAPEntry? {
                try await client.search(base: DirectoryFixture.people, filter: .equality("mail", "erin@example.test"),
                                        attributes: ["uid", "cn", "entryUUID"]).first
            }
            try await slapd.add("""
                dn: \(DirectoryFixture.personDN("erin"))
                objectClass: inetOrgPerson
                uid: erin
                cn: Erin
                sn: Evans
                mail: erin@example.test
                """)
            let added = try #require(try await erin())
            try await slapd.modify("""
                dn: \(DirectoryFixture.personDN("erin"))
                changetype: modify
                replace: cn
                cn: Erin Evans
                """)
            #expect(try await erin()?.string("cn") == "Erin Evans")
            try await slapd.rename(DirectoryFixture.personDN("erin"), to: "uid=erin.evans")
            let renamed = try #require(try await erin())
            #expect(renamed.dn == DirectoryFixture.personDN("erin.evans"))
            #expect(renamed.objectID == added.objectID)
            try await slapd.delete(renamed.dn)
            #expect(try await erin() == nil)
        }
    }

    @Test("while the directory is down every call is unreachable; once it is back, calls work again")
    func downAndBack() async throws {
        try await Self.withDirectory { slapd, client in
            try await client.check()
            slapd.stop()
            await #expect {
                try await client.check()
            } throws: { error in
                if case LDAPError.unreachable = error { true } else { false }
            }
            try await slapd.restart()
            try await client.check()
        }
    }
}
