import CountersignSCIM
import Foundation
import Testing

/// Users and groups read from POST and PUT bodies and written to responses (RFC 7643 §4, RFC 7644
/// §3.3): names in any case, read-only and unknown attributes ignored, wrong types refused.
@Suite("SCIM resources")
struct SCIMResourceTests {
    static let base = "https://id.example.com/scim/v2"

    static func user(_ body: String) throws -> SCIMUser { try SCIMUser(decoding: Data(body.utf8)) }

    @Test("Entra ID's create-user body, with the enterprise extension's schema, roles and meta")
    func entraCreateUser() throws {
        let user = try Self.user(#"""
            {
                "schemas": ["urn:ietf:params:scim:schemas:core:2.0:User", "urn:ietf:params:scim:schemas:extension:enterprise:2.0:User"],
                "externalId": "0a21f0f2-8d2a-4f8e-bf98-7363c4aed4ef",
                "userName": "Test_User_ab6490ee-1e48-479e-a20b-2d77186b5dd1",
                "active": true,
                "emails": [{"primary": true, "type": "work", "value": "Test_User_fd0ea19b-0777-472c-9f96-4f70d2226f2e@testuser.com"}],
                "meta": {"resourceType": "User"},
                "name": {"formatted": "givenName familyName", "familyName": "familyName", "givenName": "givenName"},
                "roles": []
            }
            """#)
        #expect(user == SCIMUser(
            externalId: "0a21f0f2-8d2a-4f8e-bf98-7363c4aed4ef", userName: "Test_User_ab6490ee-1e48-479e-a20b-2d77186b5dd1",
            name: SCIMName(formatted: "givenName familyName", familyName: "familyName", givenName: "givenName"),
            emails: [SCIMEmail(value: "Test_User_fd0ea19b-0777-472c-9f96-4f70d2226f2e@testuser.com", type: "work", primary: true)]))
    }

    @Test("Okta's PUT of the whole user: id, groups, meta and password ignored")
    func oktaPutUser() throws {
        let user = try Self.user(#"""
            {
                "schemas": ["urn:ietf:params:scim:schemas:core:2.0:User"],
                "id": "23a35c27-23d3-4c03-b4c5-6443c09e7173",
                "userName": "test.user@okta.local",
                "name": {"givenName": "Another", "familyName": "User"},
                "emails": [{"primary": true, "value": "test.user@okta.local", "type": "work"}],
                "displayName": "Another User",
                "locale": "en-US",
                "externalId": "00u1dhhb1fkIGP7RL1d8",
                "groups": [],
                "password": "1mz050nq",
                "active": true,
                "meta": {"resourceType": "User", "created": "2022-02-04T19:46:23.000Z", "lastModified": "2022-02-04T19:46:23.000Z"}
            }
            """#)
        #expect(user.id == nil && user.meta == nil && user.groups.isEmpty)
        #expect(user.userName == "test.user@okta.local" && user.displayName == "Another User" && user.externalId == "00u1dhhb1fkIGP7RL1d8")
        #expect(user.name == SCIMName(familyName: "User", givenName: "Another") && user.active)
    }

    @Test("attribute names are read in any case, and null is unassigned")
    func caseInsensitiveNames() throws {
        let user = try Self.user(#"{"USERNAME": "bjensen", "DisplayName": null, "Name": {"GIVENNAME": "B"}, "ACTIVE": false}"#)
        #expect(user == SCIMUser(userName: "bjensen", name: SCIMName(givenName: "B"), active: false))
    }

    @Test("wrong types, missing required attributes and bodies that are not objects are refused", arguments: [
        (#"{"displayName": "no userName"}"#, SCIMError.invalidValue("userName is required.")),
        (#"{"userName": ""}"#, SCIMError.invalidValue("userName is required.")),
        (#"{"userName": 7}"#, SCIMError.invalidValue("userName must be a string, not an integer.")),
        (#"{"userName": "a", "active": "true"}"#, SCIMError.invalidValue("active must be a boolean, not a string.")),
        (#"{"userName": "a", "emails": {"value": "a@b"}}"#, SCIMError.invalidValue("emails must be an array, not an object.")),
        (#"{"userName": "a", "emails": [{"type": "work"}]}"#, SCIMError.invalidValue("emails[0].value is required.")),
        (#"{"userName": "a", "emails": [{"value": "x", "primary": 1}]}"#, SCIMError.invalidValue("emails[0].primary must be a boolean, not an integer.")),
        (#"{"userName": "a", "emails": [{"value": "x", "primary": true}, {"value": "y", "primary": true}]}"#,
         SCIMError.invalidValue("At most one of emails may be primary.")),
        (#"{"userName": "a", "name": "A"}"#, SCIMError.invalidValue("name must be an object.")),
        (#"{"userName": "a", "username": "b"}"#, SCIMError.invalidValue("The attribute username appears twice, in different case.")),
        (#"["userName"]"#, SCIMError.invalidSyntax("The body must be a JSON object.")),
        (#"{"userName": "a""#, SCIMError.invalidSyntax("the body is not JSON: ',' or '}' was expected at byte 16")),
        (#"{"userName": "a", "userName": "b"}"#, SCIMError.invalidSyntax(#"the body is not JSON: the object names "userName" twice at byte 18"#)),
    ])
    func refusedUser(_ body: String, _ error: SCIMError) {
        #expect(throws: error) { try Self.user(body) }
    }

    @Test("a user writes with schemas, meta, a weak ETag and references under the base URL, and reads back the same")
    func userRoundTrip() throws {
        let created = Date(timeIntervalSince1970: 1_700_000_000.25)
        let user = SCIMUser(id: "2819c223", externalId: "ext", userName: "bjensen", name: SCIMName(givenName: "Barbara"),
                            displayName: "Babs", emails: [SCIMEmail(value: "b@example.com", type: "work", primary: true)], active: false,
                            groups: [SCIMGroupReference(value: "g1", display: "Sales")],
                            meta: SCIMMeta(created: created, lastModified: created, version: "7"))
        let json = user.json(baseURL: Self.base)
        #expect(json[caseInsensitive: "schemas"] == ["urn:ietf:params:scim:schemas:core:2.0:User"])
        #expect(json[caseInsensitive: "meta"] == [
            "resourceType": "User", "location": "https://id.example.com/scim/v2/Users/2819c223",
            "created": "2023-11-14T22:13:20.250Z", "lastModified": "2023-11-14T22:13:20.250Z", "version": "W/\"7\"",
        ])
        #expect(json[caseInsensitive: "groups"] == [["value": "g1", "display": "Sales", "$ref": "https://id.example.com/scim/v2/Groups/g1"]])
        var read = try SCIMUser(decoding: json.serialized)
        #expect(read.groups.isEmpty && read.id == nil)
        (read.id, read.meta, read.groups) = (user.id, user.meta, user.groups)
        #expect(read == user)
    }

    @Test("Entra ID's create-group body; members listed twice are one")
    func entraCreateGroup() throws {
        let group = try SCIMGroup(decoding: Data(#"""
            {
                "schemas": ["urn:ietf:params:scim:schemas:core:2.0:Group", "http://schemas.microsoft.com/2006/11/ResourceManagement/ADSCIM/2.0/Group"],
                "externalId": "8aa1a0c0-c4c3-4bc0-b4a5-2ef676900159",
                "displayName": "displayName",
                "meta": {"resourceType": "Group"},
                "members": [{"value": "u1"}, {"value": "u1", "display": "again"}]
            }
            """#.utf8))
        #expect(group == SCIMGroup(externalId: "8aa1a0c0-c4c3-4bc0-b4a5-2ef676900159", displayName: "displayName", members: [SCIMMember(value: "u1")]))
        #expect(throws: SCIMError.invalidValue("displayName is required.")) { try SCIMGroup(decoding: Data(#"{"members": []}"#.utf8)) }
    }

    @Test("a group writes its members with references to the users, and reads back the same")
    func groupRoundTrip() throws {
        let group = SCIMGroup(id: "g1", displayName: "Sales", members: [SCIMMember(value: "u1", display: "Ann")])
        let json = group.json(baseURL: Self.base)
        #expect(json[caseInsensitive: "members"] == [["value": "u1", "display": "Ann", "type": "User", "$ref": "https://id.example.com/scim/v2/Users/u1"]])
        var read = try SCIMGroup(decoding: json.serialized)
        read.id = "g1"
        #expect(read == group)
    }
}
