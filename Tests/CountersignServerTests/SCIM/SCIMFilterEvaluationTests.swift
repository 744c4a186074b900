import CountersignSCIM
import Foundation
import Testing

/// Filters evaluated against a resource in memory (RFC 7644 §3.4.2.2), with the case rules of
/// RFC 7643 §2.2 taken from the schema.
@Suite("SCIM filter evaluation")
struct SCIMFilterEvaluationTests {
    static let user = SCIMUser(
        id: "2819c223-7f76-453a-919d-413861904646", externalId: "Bjensen-EXT", userName: "bjensen@example.com",
        name: SCIMName(formatted: "Ms. Barbara J Jensen III", familyName: "O'Malley", givenName: "Barbara"),
        displayName: "Babs Jensen",
        emails: [SCIMEmail(value: "bjensen@example.com", type: "work", primary: true), SCIMEmail(value: "babs@jensen.org", type: "home")],
        active: true,
        meta: SCIMMeta(created: Date(timeIntervalSince1970: 1_305_261_754), lastModified: Date(timeIntervalSince1970: 1_305_261_754),
                       version: "3")
    ).json(baseURL: "https://id.example.com/scim/v2")

    static func matches(_ filter: String) throws -> Bool {
        try SCIMFilter(parsing: filter).matches(user, schema: .user)
    }

    @Test("filters that match the user", arguments: [
        #"userName eq "BJENSEN@example.com""#,
        #"userName sw "bjen""#,
        #"userName ew "EXAMPLE.COM""#,
        #"name.familyName co "o'mal""#,
        #"urn:ietf:params:scim:schemas:core:2.0:User:name.givenName eq "barbara""#,
        #"externalId eq "Bjensen-EXT""#,
        #"emails co "jensen.org""#,
        #"emails.value eq "babs@jensen.org""#,
        #"emails[type eq "work" and value co "@example.com"]"#,
        #"emails[type eq "WORK" and primary eq true]"#,
        #"active eq true"#,
        #"displayName pr and not (nickName pr)"#,
        #"nickName eq null"#,
        #"userName ne "alice""#,
        #"meta.lastModified gt "2011-05-13T04:42:33Z""#,
        #"meta.lastModified ge "2011-05-13T06:42:34+02:00""#,
        #"meta.created lt "2011-05-13T04:42:34.001Z""#,
        #"userName gt "alice" and userName lt "carol""#,
        #"title pr or userName pr"#,
    ])
    func matching(_ filter: String) throws {
        #expect(try Self.matches(filter))
    }

    @Test("filters that do not match the user", arguments: [
        #"userName eq "bjensen""#,
        #"externalId eq "bjensen-ext""#,
        #"id eq "2819C223-7F76-453A-919D-413861904646""#,
        #"emails[type eq "home" and value co "@example.com"]"#,
        #"active eq false"#,
        #"active gt false"#,
        #"active co "t""#,
        #"title pr"#,
        #"userName ne "BJensen@Example.com""#,
        #"meta.lastModified gt "2011-05-13T04:42:34Z""#,
        #"userName gt 5"#,
        #"not (userName pr)"#,
    ])
    func notMatching(_ filter: String) throws {
        #expect(try !Self.matches(filter))
    }
}

/// What storage answers of a filter: one indexed equality, or a refusal that says which are answered.
@Suite("SCIM store queries")
struct SCIMStoreQueryTests {
    @Test("the equality filters identity providers send become store queries")
    func supportedUserFilters() throws {
        func query(_ text: String) throws -> SCIMStoreQuery { try SCIMStoreQuery(users: SCIMFilter(parsing: text)) }
        #expect(try SCIMStoreQuery(users: nil) == .all)
        #expect(try query(#"userName eq "Test_User_00aa00aa-bb11-cc22-dd33-44ee44ee44ee""#)
            == .userName(eq: "Test_User_00aa00aa-bb11-cc22-dd33-44ee44ee44ee"))
        #expect(try query(#"USERNAME EQ "bjensen""#) == .userName(eq: "bjensen"))
        #expect(try query(#"urn:ietf:params:scim:schemas:core:2.0:User:userName eq "bjensen""#) == .userName(eq: "bjensen"))
        #expect(try query(#"externalId eq "0a21f0f2-8d2a-4f8e-bf98-7363c4aed4ef""#) == .externalId(eq: "0a21f0f2-8d2a-4f8e-bf98-7363c4aed4ef"))
        #expect(try query(#"id eq "2819c223""#) == .id(eq: "2819c223"))
        #expect(try query(#"displayName eq "Babs""#) == .displayName(eq: "Babs"))
        #expect(try query(#"emails.value eq "b@example.com""#) == .emailValue(eq: "b@example.com"))
        #expect(try query(#"emails eq "b@example.com""#) == .emailValue(eq: "b@example.com"))
        #expect(try query(#"emails[value eq "b@example.com"]"#) == .emailValue(eq: "b@example.com"))
        #expect(try SCIMStoreQuery(groups: SCIMFilter(parsing: #"displayName eq "Sales""#)) == .displayName(eq: "Sales"))
        #expect(try SCIMStoreQuery(groups: SCIMFilter(parsing: #"externalId eq "g-1""#)) == .externalId(eq: "g-1"))
    }

    @Test("any other filter is refused as invalidFilter, saying which filters are answered", arguments: [
        #"userName co "jensen""#,
        #"userName eq "a" or userName eq "b""#,
        #"userName eq 5"#,
        #"title eq "Tour Guide""#,
        #"urn:ietf:params:scim:schemas:extension:enterprise:2.0:User:employeeNumber eq "701984""#,
        #"emails[type eq "work"]"#,
        #"active eq true"#,
    ])
    func unsupportedUserFilter(_ text: String) throws {
        let filter = try SCIMFilter(parsing: text)
        let error = #expect(throws: SCIMError.self) { try SCIMStoreQuery(users: filter) }
        #expect(error?.scimType == "invalidFilter")
        #expect(error?.detail.contains(#"userName eq "…""#) == true)
    }

    @Test("groups are found by displayName, externalId or id only")
    func unsupportedGroupFilter() throws {
        let error = #expect(throws: SCIMError.self) { try SCIMStoreQuery(groups: SCIMFilter(parsing: #"userName eq "a""#)) }
        #expect(error == .unsupportedFilter(
            #"Countersign cannot answer the filter userName eq "a"; it answers one comparison of the forms displayName eq "…", externalId eq "…" or id eq "…"."#))
    }
}
