import CountersignSCIM
import Testing

/// SCIM filters (RFC 7644 §3.4.2.2) read into their syntax tree: the RFC's own examples, its
/// precedence, case-insensitive names and operators, and every refusal naming where it went wrong.
@Suite("SCIM filter parsing")
struct SCIMFilterParserTests {
    static func path(_ name: String, _ sub: String? = nil, schema: String? = nil) -> SCIMAttributePath {
        SCIMAttributePath(schema: schema, name: name, subAttribute: sub)
    }

    /// The examples RFC 7644 §3.4.2.2 lists, each of which must parse and print back to itself.
    static let rfcExamples = [
        #"userName eq "bjensen""#,
        #"name.familyName co "O'Malley""#,
        #"userName sw "J""#,
        #"urn:ietf:params:scim:schemas:core:2.0:User:userName sw "J""#,
        #"title pr"#,
        #"meta.lastModified gt "2011-05-13T04:42:34Z""#,
        #"meta.lastModified ge "2011-05-13T04:42:34Z""#,
        #"meta.lastModified lt "2011-05-13T04:42:34Z""#,
        #"meta.lastModified le "2011-05-13T04:42:34Z""#,
        #"title pr and userType eq "Employee""#,
        #"title pr or userType eq "Intern""#,
        #"schemas eq "urn:ietf:params:scim:schemas:extension:enterprise:2.0:User""#,
        #"userType eq "Employee" and (emails co "example.com" or emails.value co "example.org")"#,
        #"userType ne "Employee" and not (emails co "example.com" or emails.value co "example.org")"#,
        #"userType eq "Employee" and (emails.type eq "work")"#,
        #"userType eq "Employee" and emails[type eq "work" and value co "@example.com"]"#,
        #"emails[type eq "work" and value co "@example.com"] or ims[type eq "xmpp" and value co "@foo.com"]"#,
    ]

    @Test("each of RFC 7644's examples parses, and its printed form parses to the same filter", arguments: rfcExamples)
    func rfcExampleRoundTrips(_ text: String) throws {
        let filter = try SCIMFilter(parsing: text)
        #expect(try SCIMFilter(parsing: filter.description) == filter)
    }

    @Test("a comparison names its attribute, operator and JSON value")
    func comparison() throws {
        #expect(try SCIMFilter(parsing: #"userName eq "bjensen""#) == .compare(Self.path("userName"), .eq, "bjensen"))
        #expect(try SCIMFilter(parsing: "meta.version eq 1.5") == .compare(Self.path("meta", "version"), .eq, .decimal(1.5)))
        #expect(try SCIMFilter(parsing: "x.count ge -3") == .compare(Self.path("x", "count"), .ge, -3))
        #expect(try SCIMFilter(parsing: "active eq true") == .compare(Self.path("active"), .eq, true))
        #expect(try SCIMFilter(parsing: "active eq FALSE") == .compare(Self.path("active"), .eq, false))
        #expect(try SCIMFilter(parsing: "nickName eq null") == .compare(Self.path("nickName"), .eq, .null))
        #expect(try SCIMFilter(parsing: #"displayName eq "a \"quoted\" \u00e9""#) == .compare(Self.path("displayName"), .eq, "a \"quoted\" é"))
    }

    @Test("a schema URN before the attribute is kept apart from it, dots in the URN and all")
    func schemaQualifiedPath() throws {
        let filter = try SCIMFilter(parsing: #"urn:ietf:params:scim:schemas:core:2.0:User:name.givenName eq "Barbara""#)
        #expect(filter == .compare(Self.path("name", "givenName", schema: "urn:ietf:params:scim:schemas:core:2.0:User"), .eq, "Barbara"))
    }

    @Test("operators, keywords and attribute names are case-insensitive")
    func caseInsensitivity() throws {
        let lower = try SCIMFilter(parsing: #"username eq "a" and not (title pr)"#)
        let upper = try SCIMFilter(parsing: #"USERNAME EQ "a" AND NOT (title PR)"#)
        #expect(lower == upper)
        #expect(try SCIMFilter(parsing: #"userName Eq "a""#) == .compare(Self.path("USERNAME"), .eq, "a"))
    }

    @Test("and binds more tightly than or; parentheses and not group")
    func precedence() throws {
        let a = SCIMFilter.present(Self.path("a")), b = SCIMFilter.present(Self.path("b")), c = SCIMFilter.present(Self.path("c"))
        #expect(try SCIMFilter(parsing: "a pr or b pr and c pr") == .or(a, .and(b, c)))
        #expect(try SCIMFilter(parsing: "a pr and b pr or c pr") == .or(.and(a, b), c))
        #expect(try SCIMFilter(parsing: "(a pr or b pr) and c pr") == .and(.or(a, b), c))
        #expect(try SCIMFilter(parsing: "not(a pr) and b pr") == .and(.not(a), b))
        #expect(try SCIMFilter(parsing: "a pr and b pr and c pr") == .and(.and(a, b), c))
        #expect(try SCIMFilter(parsing: "(a pr or b pr) and c pr").description == "(a pr or b pr) and c pr")
    }

    @Test("a value path filters the values of a multi-valued attribute")
    func valuePath() throws {
        let filter = try SCIMFilter(parsing: #"emails[type eq "work" and value co "@example.com"]"#)
        #expect(filter == .valuePath(Self.path("emails"), .and(.compare(Self.path("type"), .eq, "work"),
                                                              .compare(Self.path("value"), .co, "@example.com"))))
    }

    @Test("an attribute called not is an attribute when no parenthesis follows")
    func notAsAttributeName() throws {
        #expect(try SCIMFilter(parsing: "not pr") == .present(Self.path("not")))
    }

    struct Refusal: CustomTestStringConvertible, Sendable {
        let filter: String
        let offset: Int
        let reason: String
        var testDescription: String { filter }
    }

    static let refusals = [
        Refusal(filter: "", offset: 0, reason: "the filter is empty"),
        Refusal(filter: "userName", offset: 8, reason: "an operator (eq, ne, co, sw, ew, gt, ge, lt, le or pr) was expected after userName"),
        Refusal(filter: #"userName is "x""#, offset: 9, reason: #""is" is not an operator (eq, ne, co, sw, ew, gt, ge, lt, le or pr)"#),
        Refusal(filter: "userName eq", offset: 11, reason: "a value (a quoted string, a number, true, false or null) was expected after eq"),
        Refusal(filter: "userName eq bjensen", offset: 12, reason: "a value (a quoted string, a number, true, false or null) was expected after eq"),
        Refusal(filter: #"userName eq "bjensen"#, offset: 12, reason: "the string is not terminated"),
        Refusal(filter: #"(userName eq "a""#, offset: 16, reason: "')' was expected"),
        Refusal(filter: #"userName eq "a")"#, offset: 15, reason: "the filter should end here"),
        Refusal(filter: #"userName eq "a" and"#, offset: 19, reason: "an attribute path, 'not' or '(' was expected"),
        Refusal(filter: #"userName eq "a" xor title pr"#, offset: 16, reason: "the filter should end here"),
        Refusal(filter: #"emails[type eq "work""#, offset: 21, reason: "']' was expected"),
        Refusal(filter: #"emails[type eq "work" and x[y pr]]"#, offset: 27, reason: "a value filter cannot hold another"),
        Refusal(filter: #"name.givenName.first eq "x""#, offset: 0, reason: #""name.givenName.first" is not an attribute path"#),
        Refusal(filter: #"1name eq "x""#, offset: 0, reason: "an attribute path, 'not' or '(' was expected"),
        Refusal(filter: #"userName eq 01"#, offset: 12, reason: "a number must not start with 0"),
        Refusal(filter: #"userName eq "a" & title pr"#, offset: 16, reason: "unexpected character"),
        Refusal(filter: #"schema:userName eq "a""#, offset: 0, reason: #""schema:userName" is not an attribute path"#),
    ]

    @Test("a filter outside the grammar is refused as invalidFilter at the byte where it fails", arguments: refusals)
    func refusal(_ refusal: Refusal) {
        #expect(throws: SCIMError.invalidFilter(offset: refusal.offset, reason: refusal.reason)) {
            try SCIMFilter(parsing: refusal.filter)
        }
    }

    @Test("the error is SCIM's invalidFilter, with HTTP 400 and the position in its detail")
    func errorDocument() {
        let error = SCIMError.invalidFilter(offset: 11, reason: "a value was expected")
        #expect(error.scimType == "invalidFilter" && error.status == 400)
        #expect(error.document.json == [
            "schemas": ["urn:ietf:params:scim:api:messages:2.0:Error"], "status": "400", "scimType": "invalidFilter",
            "detail": "The filter is not valid at byte 11: a value was expected.",
        ])
    }

    @Test("nesting, length and the number of comparisons are bounded")
    func limits() throws {
        let deep = String(repeating: "(", count: 17) + "a pr" + String(repeating: ")", count: 17)
        #expect(throws: SCIMError.invalidFilter(offset: 17, reason: "filters may nest at most 16 deep")) { try SCIMFilter(parsing: deep) }
        let shallow = String(repeating: "(", count: 16) + "a pr" + String(repeating: ")", count: 16)
        #expect(try SCIMFilter(parsing: shallow) == .present(Self.path("a")))
        let nots = String(repeating: "not (", count: 20) + "a pr" + String(repeating: ")", count: 20)
        #expect(throws: SCIMError.self) { try SCIMFilter(parsing: nots) }
        let long = #"userName eq ""# + String(repeating: "x", count: 4096) + "\""
        #expect(throws: SCIMError.invalidFilter(offset: 4096, reason: "a filter may be at most 4096 bytes long")) { try SCIMFilter(parsing: long) }
        let many = Array(repeating: "a pr", count: 65).joined(separator: " or ")
        #expect(throws: SCIMError.invalidFilter(offset: 64 * 8, reason: "a filter may hold at most 64 comparisons")) { try SCIMFilter(parsing: many) }
        #expect(throws: Never.self) { try SCIMFilter(parsing: Array(repeating: "a pr", count: 64).joined(separator: " or ")) }
    }
}
