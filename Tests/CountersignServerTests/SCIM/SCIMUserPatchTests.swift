import CountersignSCIM
import Foundation
import Testing

/// PATCH of users (RFC 7644 §3.5.2) with the bodies Entra ID and Okta document sending, their
/// deviations from the RFC included, and the refusals SCIM names.
@Suite("SCIM user PATCH")
struct SCIMUserPatchTests {
    static let meta = SCIMMeta(created: Date(timeIntervalSince1970: 1_700_000_000), lastModified: Date(timeIntervalSince1970: 1_700_000_000),
                               version: "1")
    static let user = SCIMUser(
        id: "2819c223", externalId: "0a21f0f2-8d2a-4f8e-bf98-7363c4aed4ef", userName: "Test_User_ab6490ee@testuser.com",
        name: SCIMName(formatted: "givenName familyName", familyName: "familyName", givenName: "givenName"),
        emails: [SCIMEmail(value: "Test_User_fd0ea19b@testuser.com", type: "work", primary: true)],
        groups: [SCIMGroupReference(value: "g1", display: "Sales")], meta: meta)

    static func patch(_ body: String) throws -> SCIMPatchRequest {
        try SCIMPatchRequest(parsing: Data(body.utf8))
    }

    @Test("Entra ID: Replace of a work e-mail's value through a filter, and of name.familyName")
    func entraMultiValuedUpdate() throws {
        let patched = try Self.user.applying(Self.patch(#"""
            {
                "schemas": ["urn:ietf:params:scim:api:messages:2.0:PatchOp"],
                "Operations": [
                    {"op": "Replace", "path": "emails[type eq \"work\"].value", "value": "updatedEmail@microsoft.com"},
                    {"op": "Replace", "path": "name.familyName", "value": "updatedFamilyName"}
                ]
            }
            """#))
        #expect(patched.emails == [SCIMEmail(value: "updatedEmail@microsoft.com", type: "work", primary: true)])
        #expect(patched.name == SCIMName(formatted: "givenName familyName", familyName: "updatedFamilyName", givenName: "givenName"))
        #expect(patched.id == "2819c223" && patched.meta == Self.meta && patched.groups == Self.user.groups)
    }

    @Test("Entra ID: Replace of userName")
    func entraSingleValuedUpdate() throws {
        let patched = try Self.user.applying(Self.patch(#"""
            {"schemas": ["urn:ietf:params:scim:api:messages:2.0:PatchOp"],
             "Operations": [{"op": "Replace", "path": "userName", "value": "5b50642d-79fc-4410-9e90-4c077cdd1a59@testuser.com"}]}
            """#))
        #expect(patched.userName == "5b50642d-79fc-4410-9e90-4c077cdd1a59@testuser.com")
    }

    @Test("Entra ID: disabling with active false, and with the string \"False\" it used to send", arguments: ["false", #""False""#, #""FALSE""#])
    func entraDisable(_ value: String) throws {
        let patched = try Self.user.applying(Self.patch(#"""
            {"Operations": [{"op": "Replace", "path": "active", "value": \#(value)}],
             "schemas": ["urn:ietf:params:scim:api:messages:2.0:PatchOp"]}
            """#))
        #expect(patched.active == false)
        let enabled = try patched.applying(Self.patch(#"""
            {"schemas": ["urn:ietf:params:scim:api:messages:2.0:PatchOp"], "Operations": [{"op": "Replace", "path": "active", "value": "True"}]}
            """#))
        #expect(enabled.active)
    }

    @Test("Entra ID: a replace without a path of several attributes, with a filtered path and an enterprise extension attribute as keys")
    func entraReplaceWithoutPath() throws {
        let patched = try Self.user.applying(Self.patch(#"""
            {
              "schemas": ["urn:ietf:params:scim:api:messages:2.0:PatchOp"],
              "Operations": [{
                  "op": "replace",
                  "value": {
                    "displayName": "Pvlo",
                    "emails[type eq \"work\"].value": "TestBcwqnm@test.microsoft.com",
                    "name.givenName": "Gtfd",
                    "name.familyName": "Pkqf",
                    "externalId": "Eqpj",
                    "urn:ietf:params:scim:schemas:extension:enterprise:2.0:User:employeeNumber": "Eqpj"
                  }
              }]
            }
            """#))
        #expect(patched.displayName == "Pvlo" && patched.externalId == "Eqpj")
        #expect(patched.emails == [SCIMEmail(value: "TestBcwqnm@test.microsoft.com", type: "work", primary: true)])
        #expect(patched.name == SCIMName(formatted: "givenName familyName", familyName: "Pkqf", givenName: "Gtfd"))
    }

    @Test("Entra ID: Add of a work e-mail's value to a user without one makes the work e-mail")
    func entraAddCreatesFilteredValue() throws {
        var user = Self.user
        user.emails = []
        let patched = try user.applying(Self.patch(#"""
            {"schemas": ["urn:ietf:params:scim:api:messages:2.0:PatchOp"],
             "Operations": [{"op": "Add", "path": "emails[type eq \"work\"].value", "value": "new@example.com"},
                            {"op": "Add", "path": "nickName", "value": "Babs"},
                            {"op": "Add", "path": "phoneNumbers[type eq \"work\"].value", "value": "+1 555 0100"},
                            {"op": "Add", "path": "urn:ietf:params:scim:schemas:extension:enterprise:2.0:User:department", "value": "Sales"}]}
            """#))
        #expect(patched.emails == [SCIMEmail(value: "new@example.com", type: "work")])
    }

    @Test("Okta: deactivation is a replace without a path of {\"active\": false}")
    func oktaDeactivate() throws {
        let patched = try Self.user.applying(Self.patch(#"""
            {"schemas": ["urn:ietf:params:scim:api:messages:2.0:PatchOp"],
             "Operations": [{"op": "replace", "value": {"active": false}}]}
            """#))
        #expect(!patched.active)
        #expect(patched.userName == Self.user.userName && patched.emails == Self.user.emails)
    }

    @Test("an added primary e-mail makes the others not primary; an e-mail already there is not added twice")
    func addEmails() throws {
        let patched = try Self.user.applying(Self.patch(#"""
            {"schemas": ["urn:ietf:params:scim:api:messages:2.0:PatchOp"],
             "Operations": [{"op": "add", "path": "emails", "value": [{"value": "home@example.org", "type": "home", "primary": true},
                                                                      {"value": "TEST_USER_fd0ea19b@testuser.com", "type": "work"}]}]}
            """#))
        #expect(patched.emails == [SCIMEmail(value: "Test_User_fd0ea19b@testuser.com", type: "work", primary: false),
                                   SCIMEmail(value: "home@example.org", type: "home", primary: true)])
    }

    @Test("remove of a filtered value, of a sub-attribute, and of a whole attribute")
    func removals() throws {
        let patched = try Self.user.applying(Self.patch(#"""
            {"schemas": ["urn:ietf:params:scim:api:messages:2.0:PatchOp"],
             "Operations": [{"op": "remove", "path": "emails[type eq \"work\"]"},
                            {"op": "remove", "path": "name.formatted"},
                            {"op": "remove", "path": "externalId"},
                            {"op": "remove", "path": "emails[type eq \"home\"]"}]}
            """#))
        #expect(patched.emails.isEmpty && patched.externalId == nil)
        #expect(patched.name == SCIMName(familyName: "familyName", givenName: "givenName"))
    }

    @Test("op names are read in any case; path attribute names too")
    func caseInsensitiveOperations() throws {
        let patched = try Self.user.applying(Self.patch(#"""
            {"schemas": ["urn:ietf:params:scim:api:messages:2.0:PatchOp"],
             "Operations": [{"op": "REPLACE", "path": "DisplayName", "value": "B"}, {"Op": "add", "Path": "NAME.GIVENNAME", "Value": "G"}]}
            """#))
        #expect(patched.displayName == "B" && patched.name?.givenName == "G")
    }

    struct Refusal: CustomTestStringConvertible, Sendable {
        let operations: String
        let error: SCIMError
        var testDescription: String { operations }
    }

    static let refusals = [
        Refusal(operations: #"{"op": "replace", "path": "id", "value": "other"}"#, error: .mutability("id is read-only.")),
        Refusal(operations: #"{"op": "replace", "path": "meta.lastModified", "value": "2020-01-01T00:00:00Z"}"#,
                error: .mutability("meta is read-only.")),
        Refusal(operations: #"{"op": "add", "path": "groups", "value": [{"value": "g2"}]}"#, error: .mutability("groups is read-only.")),
        Refusal(operations: #"{"op": "replace", "value": {"groups": []}}"#, error: .mutability("groups is read-only.")),
        Refusal(operations: #"{"op": "remove", "path": "id"}"#, error: .mutability("id is read-only.")),
        Refusal(operations: #"{"op": "remove", "path": "userName"}"#, error: .invalidValue("userName is required.")),
        Refusal(operations: #"{"op": "replace", "path": "active", "value": "maybe"}"#,
                error: .invalidValue("active must be a boolean, not a string.")),
        Refusal(operations: #"{"op": "replace", "path": "userName", "value": 42}"#, error: .invalidValue("userName must be a string, not an integer.")),
        Refusal(operations: #"{"op": "replace", "path": "name", "value": "Babs"}"#, error: .invalidValue("name must be an object, not a string.")),
        Refusal(operations: #"{"op": "replace", "path": "emails[value eq \"nobody@example.com\" or type eq \"x\"].type", "value": "home"}"#,
                error: .noTarget(#"No value of emails matches [value eq "nobody@example.com" or type eq "x"]."#)),
        Refusal(operations: #"{"op": "replace", "path": "userName[value eq \"x\"]", "value": "y"}"#,
                error: .invalidPath(#"userName has no sub-attributes, so "userName[value eq "x"]" names nothing."#)),
        Refusal(operations: #"{"op": "replace", "path": "name[givenName eq \"x\"]", "value": {}}"#,
                error: .invalidPath("name has one value, which a filter cannot select.")),
        Refusal(operations: #"{"op": "replace", "path": "emails[type eq ]", "value": "y"}"#,
                error: .invalidPath(#"The path "emails[type eq ]" is not valid at byte 15: a value (a quoted string, a number, true, false or null) was expected after eq."#)),
        Refusal(operations: #"{"op": "remove"}"#, error: .noTarget("Operations[0] removes without a path.")),
        Refusal(operations: #"{"op": "add", "path": "displayName"}"#, error: .invalidSyntax("Operations[0] (add) needs a value.")),
        Refusal(operations: #"{"op": "move", "path": "displayName", "value": "x"}"#,
                error: .invalidSyntax(#"Operations[0].op must be "add", "remove" or "replace"."#)),
        Refusal(operations: #"{"op": "replace", "value": false}"#,
                error: .invalidValue("Operations[0] has no path, so its value must be an object of attributes.")),
    ]

    @Test("operations SCIM refuses, each with its scimType", arguments: refusals)
    func refusal(_ refusal: Refusal) {
        #expect(throws: refusal.error) {
            try Self.user.applying(Self.patch(#"{"schemas": ["urn:ietf:params:scim:api:messages:2.0:PatchOp"], "Operations": [\#(refusal.operations)]}"#))
        }
    }

    @Test("a read-only attribute sent unchanged is no change (Okta repeats id)")
    func unchangedReadOnly() throws {
        let patched = try Self.user.applying(Self.patch(#"""
            {"schemas": ["urn:ietf:params:scim:api:messages:2.0:PatchOp"],
             "Operations": [{"op": "replace", "value": {"id": "2819c223", "displayName": "Babs"}}]}
            """#))
        #expect(patched.displayName == "Babs" && patched.id == "2819c223")
    }

    @Test("a body that is not a PatchOp message is invalidSyntax", arguments: [
        #"{"Operations": [{"op": "remove", "path": "title"}]}"#,
        #"{"schemas": ["urn:ietf:params:scim:api:messages:2.0:Error"], "Operations": [{"op": "remove", "path": "title"}]}"#,
        #"{"schemas": ["urn:ietf:params:scim:api:messages:2.0:PatchOp"]}"#,
        #"{"schemas": ["urn:ietf:params:scim:api:messages:2.0:PatchOp"], "Operations": []}"#,
        #"{"schemas": ["urn:ietf:params:scim:api:messages:2.0:PatchOp"], "Operations": [5]}"#,
        #"[]"#,
        #"{"schemas": ["urn:ietf:params:scim:api:messages:2.0:PatchOp"], "Operations": [{"op": "add"}], "Operations": []}"#,
        #"{"schemas": "#,
    ])
    func notAPatchOp(_ body: String) {
        let error = #expect(throws: SCIMError.self) { try Self.patch(body) }
        #expect(error?.scimType == "invalidSyntax")
    }
}
