import CountersignSCIM
import Foundation
import Testing

/// The documents around resources: lists, paging, projection and discovery (RFC 7644 §3.4.2, §4).
@Suite("SCIM wire documents")
struct SCIMWireDocumentTests {
    static let discovery = SCIMDiscovery(baseURL: "https://id.example.com/scim/v2/", maximumResults: 200)

    @Test("a list response counts its page and names its resources Resources")
    func listResponse() throws {
        let page = try SCIMPage(startIndex: "3", count: "2", maximumCount: 200)
        #expect(SCIMListResponse(totalResults: 10, page: page, resources: [["id": "a"], ["id": "b"]]).json == [
            "schemas": ["urn:ietf:params:scim:api:messages:2.0:ListResponse"], "totalResults": 10, "startIndex": 3, "itemsPerPage": 2,
            "Resources": [["id": "a"], ["id": "b"]],
        ])
        #expect(page.offset == 2)
    }

    @Test("paging forgives what RFC 7644 §3.4.2.4 says to forgive, and refuses what is not a number", arguments: [
        (nil, nil, 1, 200), ("0", "-5", 1, 0), ("-3", "1000", 1, 200), ("7", "50", 7, 50), ("99999999999999999999999", "1", Int.max / 2, 1),
    ] as [(String?, String?, Int, Int)])
    func paging(_ startIndex: String?, _ count: String?, _ expectedStart: Int, _ expectedCount: Int) throws {
        let page = try SCIMPage(startIndex: startIndex, count: count, maximumCount: 200)
        #expect(page.startIndex == expectedStart && page.count == expectedCount)
    }

    @Test("a page parameter that is not an integer is invalidValue")
    func badPaging() {
        #expect(throws: SCIMError.invalidValue(#"count must be an integer, not "ten"."#)) {
            try SCIMPage(startIndex: nil, count: "ten", maximumCount: 200)
        }
    }

    @Test("the service provider configuration says what Countersign supports")
    func serviceProviderConfig() {
        let config = Self.discovery.serviceProviderConfig
        #expect(config[caseInsensitive: "patch"] == ["supported": true])
        #expect(config[caseInsensitive: "bulk"]?[caseInsensitive: "supported"] == false)
        #expect(config[caseInsensitive: "filter"] == ["supported": true, "maxResults": 200])
        #expect(config[caseInsensitive: "changePassword"] == ["supported": false])
        #expect(config[caseInsensitive: "sort"] == ["supported": false])
        #expect(config[caseInsensitive: "etag"] == ["supported": true])
        #expect(config[caseInsensitive: "authenticationSchemes"]?.arrayValue?.first?[caseInsensitive: "type"] == "oauthbearertoken")
        #expect(config[caseInsensitive: "meta"]?[caseInsensitive: "location"] == "https://id.example.com/scim/v2/ServiceProviderConfig")
    }

    @Test("resource types and schemas list Users and Groups, with only the attributes Countersign keeps")
    func resourceTypesAndSchemas() {
        #expect(Self.discovery.resourceTypeList[caseInsensitive: "totalResults"] == 2)
        #expect(Self.discovery.resourceTypes.map { $0[caseInsensitive: "endpoint"] } == ["/Users", "/Groups"])
        let user = Self.discovery.schemas[0]
        #expect(user[caseInsensitive: "id"] == "urn:ietf:params:scim:schemas:core:2.0:User")
        let names = user[caseInsensitive: "attributes"]?.arrayValue?.compactMap { $0[caseInsensitive: "name"]?.stringValue }
        #expect(names == ["userName", "name", "displayName", "active", "emails", "groups"])
        let userName = user[caseInsensitive: "attributes"]?.arrayValue?.first
        #expect(userName?[caseInsensitive: "caseExact"] == false && userName?[caseInsensitive: "uniqueness"] == "server"
            && userName?[caseInsensitive: "required"] == true)
        #expect(Self.discovery.schemas[1][caseInsensitive: "meta"]?[caseInsensitive: "location"]
            == "https://id.example.com/scim/v2/Schemas/urn:ietf:params:scim:schemas:core:2.0:Group")
    }

    @Test("excludedAttributes=members leaves the members out; attributes keeps only what it names, id and schemas")
    func projection() throws {
        let group = SCIMGroup(id: "g1", externalId: "x", displayName: "Sales", members: [SCIMMember(value: "u1")]).json(baseURL: "https://h")
        let excluded = try SCIMProjection(attributes: nil, excludedAttributes: "members")
        #expect(excluded.excludes("members") && !excluded.excludes("displayName"))
        #expect(excluded.apply(to: group, schema: .group) == [
            "schemas": ["urn:ietf:params:scim:schemas:core:2.0:Group"], "id": "g1", "externalId": "x", "displayName": "Sales",
        ])
        let user = SCIMUser(id: "u1", userName: "b", name: SCIMName(familyName: "J", givenName: "B"), displayName: "Babs").json(baseURL: "https://h")
        let only = try SCIMProjection(attributes: "userName,name.givenName", excludedAttributes: nil)
        #expect(only.apply(to: user, schema: .user) == [
            "schemas": ["urn:ietf:params:scim:schemas:core:2.0:User"], "id": "u1", "userName": "b", "name": ["givenName": "B"],
        ])
        #expect(throws: SCIMError.invalidValue(#""na me" is not an attribute path."#)) {
            try SCIMProjection(attributes: "na me", excludedAttributes: nil)
        }
    }

    @Test("a GET's parameters and a .search body make the same query; sortBy is ignored")
    func query() throws {
        let fromParameters = try SCIMQuery(filter: #"displayName eq "Sales""#, startIndex: "2", count: "5", attributes: nil,
                                           excludedAttributes: "members", maximumCount: 200)
        let fromBody = try SCIMQuery(searchRequest: Data(#"""
            {"schemas": ["urn:ietf:params:scim:api:messages:2.0:SearchRequest"], "filter": "displayName eq \"Sales\"",
             "startIndex": 2, "count": 5, "excludedAttributes": ["members"], "sortBy": "displayName"}
            """#.utf8), maximumCount: 200)
        #expect(fromParameters == fromBody)
        #expect(try SCIMStoreQuery(groups: fromBody.filter) == .displayName(eq: "Sales") && fromBody.projection.excludes("members"))
        #expect(throws: SCIMError.invalidFilter(offset: 14, reason: "a value (a quoted string, a number, true, false or null) was expected after eq")) {
            try SCIMQuery(filter: "displayName eq", startIndex: nil, count: nil, attributes: nil, excludedAttributes: nil, maximumCount: 200)
        }
        #expect(throws: SCIMError.invalidSyntax("schemas must list urn:ietf:params:scim:api:messages:2.0:SearchRequest.")) {
            try SCIMQuery(searchRequest: Data(#"{"filter": "title pr"}"#.utf8), maximumCount: 200)
        }
        #expect(throws: SCIMError.invalidValue("count must be an integer, not a string.")) {
            try SCIMQuery(searchRequest: Data(#"{"schemas": ["urn:ietf:params:scim:api:messages:2.0:SearchRequest"], "count": "5"}"#.utf8),
                          maximumCount: 200)
        }
    }

    @Test("If-Match names a version by its weak tag, its strong form, in a list, or as *")
    func ifMatch() {
        let meta = SCIMMeta(created: Date(timeIntervalSince1970: 0), lastModified: Date(timeIntervalSince1970: 0), version: "3")
        #expect(meta.entityTag == #"W/"3""#)
        #expect(meta.isMatched(byIfMatch: #"W/"3""#) && meta.isMatched(byIfMatch: #""3""#) && meta.isMatched(byIfMatch: "*"))
        #expect(meta.isMatched(byIfMatch: #"W/"2", W/"3""#))
        #expect(!meta.isMatched(byIfMatch: #"W/"2""#) && !meta.isMatched(byIfMatch: "3") && !meta.isMatched(byIfMatch: ""))
    }

    @Test("JSON is written with sorted members and escapes, and decimals survive")
    func serialization() throws {
        let value: SCIMJSON = ["b": [1, .decimal(1.5), true, nil], "a": "line\n\"quoted\"\u{01}"]
        #expect(value.text == #"{"a":"line\n\"quoted\"\u0001","b":[1,1.5,true,null]}"#)
        #expect(try SCIMJSON(parsing: value.serialized) == value)
    }
}
