import CountersignSCIM
import Foundation
import Testing

/// PATCH of groups: membership as a delta storage applies without loading the members, with
/// Entra ID's and Okta's documented bodies.
@Suite("SCIM group PATCH")
struct SCIMGroupPatchTests {
    static let group = SCIMGroup(id: "abf4dd94", externalId: "8aa1a0c0", displayName: "Sales",
                                 members: [SCIMMember(value: "u1", display: "Ann"), SCIMMember(value: "u2", display: "Bob")])

    static func patch(_ operations: String) throws -> SCIMPatchRequest {
        try SCIMPatchRequest(parsing: Data(#"{"schemas": ["urn:ietf:params:scim:api:messages:2.0:PatchOp"], "Operations": [\#(operations)]}"#.utf8))
    }

    @Test("Entra ID: Add of members with a value array, $ref null")
    func entraAddMembers() throws {
        let result = try Self.group.applying(Self.patch(#"{"op": "Add", "path": "members", "value": [{"$ref": null, "value": "f648f8d5ea4e4cd38e9c"}]}"#))
        #expect(result.members.added == [SCIMMember(value: "f648f8d5ea4e4cd38e9c")])
        #expect(result.members.removed.isEmpty && !result.members.removesAll)
        #expect(result.group.members.map(\.value) == ["u1", "u2", "f648f8d5ea4e4cd38e9c"])
    }

    @Test("Entra ID: Remove of members with a value array")
    func entraRemoveMembersByValue() throws {
        let result = try Self.group.applying(Self.patch(#"{"op": "Remove", "path": "members", "value": [{"$ref": null, "value": "u1"}]}"#))
        #expect(result.members.removed == ["u1"] && result.members.added.isEmpty)
        #expect(result.group.members == [SCIMMember(value: "u2", display: "Bob")])
    }

    @Test("Entra ID and Okta: Remove with the path members[value eq \"id\"], which needs no members loaded")
    func removeByFilter() throws {
        var unloaded = Self.group
        unloaded.members = []
        let result = try unloaded.applying(Self.patch(#"{"op": "Remove", "path": "members[value eq \"89bb1940-b905-4575-9e7f-6f887cfb368e\"]"}"#))
        #expect(result.members.removed == ["89bb1940-b905-4575-9e7f-6f887cfb368e"])
        #expect(result.group.displayName == "Sales" && result.group.id == "abf4dd94")
    }

    @Test("a removal filter on another sub-attribute is evaluated against the members given")
    func removeByOtherFilter() throws {
        let result = try Self.group.applying(Self.patch(#"{"op": "remove", "path": "members[display sw \"a\"]"}"#))
        #expect(result.members.removed == ["u1"])
    }

    @Test("Entra ID: Remove of members without a value removes all; Okta: replace of members sets them")
    func removeAllAndReplace() throws {
        let cleared = try Self.group.applying(Self.patch(#"{"op": "Remove", "path": "members"}"#))
        #expect(cleared.members.removesAll && cleared.group.members.isEmpty)
        let replaced = try Self.group.applying(Self.patch(#"{"op": "replace", "path": "members", "value": [{"value": "u2"}, {"value": "u3", "display": "Cy"}]}"#))
        #expect(replaced.members.removesAll && replaced.members.added.map(\.value) == ["u2", "u3"])
        #expect(replaced.group.members.map(\.value) == ["u2", "u3"])
    }

    @Test("Okta: add of members with display, and a rename that repeats the group's id")
    func okta() throws {
        let added = try Self.group.applying(Self.patch(#"""
            {"op": "add", "path": "members", "value": [{"value": "23a35c27-23d3-4c03-b4c5-6443c09e7173", "display": "test.user@okta.local"}]}
            """#))
        #expect(added.members.added == [SCIMMember(value: "23a35c27-23d3-4c03-b4c5-6443c09e7173", display: "test.user@okta.local")])
        let renamed = try Self.group.applying(Self.patch(#"{"op": "replace", "value": {"id": "abf4dd94", "displayName": "Test SCIMv2"}}"#))
        #expect(renamed.group.displayName == "Test SCIMv2" && renamed.members.isEmpty)
        #expect(renamed.group.members == Self.group.members)
    }

    @Test("operations apply in order: a member added then removed is only removed, one removed then added only added")
    func orderOfOperations() throws {
        let result = try Self.group.applying(Self.patch(#"""
            {"op": "add", "path": "members", "value": [{"value": "u3"}, {"value": "u4"}, {"value": "u3"}]},
            {"op": "remove", "path": "members[value eq \"u3\" or value eq \"u1\"]"},
            {"op": "remove", "path": "members", "value": [{"value": "u2"}]},
            {"op": "add", "path": "members", "value": [{"value": "u2"}]},
            {"op": "replace", "path": "displayName", "value": "Renamed"}
            """#))
        #expect(result.members.added.map(\.value) == ["u4", "u2"])
        #expect(result.members.removed == ["u3", "u1"])
        #expect(result.group.members.map(\.value) == ["u2", "u4"])
        #expect(result.group.displayName == "Renamed")
    }

    @Test("members in a no-path value are membership changes too")
    func membersWithoutPath() throws {
        let result = try Self.group.applying(Self.patch(#"{"op": "add", "value": {"members": [{"value": "u9"}], "externalId": "x"}}"#))
        #expect(result.members.added.map(\.value) == ["u9"] && result.group.externalId == "x")
    }

    @Test("ten thousand members added in one operation make one delta")
    func largeAdd() throws {
        let values = (0..<10_000).map { #"{"value": "user-\#($0)"}"# }.joined(separator: ",")
        var unloaded = Self.group
        unloaded.members = []
        let result = try unloaded.applying(Self.patch(#"{"op": "Add", "path": "members", "value": [\#(values)]}"#))
        #expect(result.members.added.count == 10_000 && result.group.members.count == 10_000)
    }

    @Test("refusals: members changed other than by adding and removing, read-only ids, bad member values", arguments: [
        (#"{"op": "replace", "path": "members[value eq \"u1\"].display", "value": "x"}"#,
         SCIMError.invalidPath(#"Members are added and removed, not changed: "members[value eq "u1"].display" names a sub-attribute of them."#)),
        (#"{"op": "add", "path": "members[value eq \"u1\"]", "value": {"value": "u1"}}"#,
         SCIMError.invalidPath("A filter on members selects members to remove; add takes the path members.")),
        (#"{"op": "add", "path": "members", "value": [{"display": "no value"}]}"#, SCIMError.invalidValue("members[0].value is required.")),
        (#"{"op": "add", "path": "members", "value": ["u1"]}"#, SCIMError.invalidValue("members[0] must be an object.")),
        (#"{"op": "replace", "path": "id", "value": "other"}"#, SCIMError.mutability("id is read-only.")),
        (#"{"op": "remove", "path": "displayName"}"#, SCIMError.invalidValue("displayName is required.")),
    ])
    func refusal(_ operations: String, _ error: SCIMError) {
        #expect(throws: error) { try Self.group.applying(Self.patch(operations)) }
    }
}
