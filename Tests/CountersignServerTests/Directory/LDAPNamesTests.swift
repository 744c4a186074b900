import CountersignLDAP
import Testing

/// What directories send, read without a directory: DNs (RFC 4514), object ids, filter values
/// (RFC 4515).
@Suite("LDAP names")
struct LDAPNamesTests {
    @Test("a DN splits into RDNs from the entry up, types as written, values unescaped")
    func dnSplitsIntoRDNs() throws {
        let dn = try DistinguishedName(parsing: "CN=VPN Users,OU=Groups,DC=example,DC=com")
        #expect(dn.rdns.map { $0.map(\.type) } == [["CN"], ["OU"], ["DC"], ["DC"]])
        #expect(dn.rdns.map { $0.map(\.value) } == [["VPN Users"], ["Groups"], ["example"], ["com"]])
        #expect(dn.leafValue == "VPN Users")
    }

    @Test("escaped and hex-escaped specials are the characters themselves", arguments: [
        (#"cn=Smith\, John,ou=People,dc=example,dc=com"#, "Smith, John"),
        (#"cn=Smith\2C John,ou=People,dc=example,dc=com"#, "Smith, John"),
        (#"cn=Smith\2c John,ou=People"#, "Smith, John"),
        (#"cn=a\+b\;c\<d\>e\"f\\g\=h"#, #"a+b;c<d>e"f\g=h"#),
        (##"cn=\#hash"##, "#hash"),
        (#"cn=\ leading and trailing\ "#, " leading and trailing "),
        (#"cn=Lu\C4\8Di\C4\87"#, "Lučić"),
        ("cn=Lučić,dc=example", "Lučić"),
        (#"cn="Smith, John",ou=People"#, "Smith, John"),
        (#"cn="say \"hi\"""#, #"say "hi""#),
        ("cn = spaced , ou = People", "spaced"),
        ("cn=#0C0548656C6C6F,dc=example", "Hello"),
        ("cn=#04024869,dc=example", "#04024869"),
        ("cn=", ""),
    ])
    func escapesAreUndone(text: String, leaf: String) throws {
        #expect(try DistinguishedName(parsing: text).leafValue == leaf)
    }

    @Test("a multi-valued RDN keeps its values together; ; separates RDNs as , does")
    func multiValuedAndSemicolon() throws {
        let dn = try DistinguishedName(parsing: "cn=John+uid=jsmith;ou=People")
        #expect(dn.rdns.count == 2)
        #expect(dn.rdns[0] == [.init(type: "cn", value: "John"), .init(type: "uid", value: "jsmith")])
        #expect(dn.rdns[1] == [.init(type: "ou", value: "People")])
    }

    @Test("numeric OIDs are attribute types; the empty DN has no RDN")
    func oidTypesAndEmpty() throws {
        #expect(try DistinguishedName(parsing: "2.5.4.3=Admins").rdns[0][0].type == "2.5.4.3")
        #expect(try DistinguishedName(parsing: "").rdns.isEmpty)
        #expect(try DistinguishedName(parsing: "").leafValue == nil)
    }

    @Test("malformed DNs are refused with where they went wrong", arguments: [
        ("cn", DistinguishedNameError.missingEquals(offset: 2)),
        ("=x", .invalidAttributeType(offset: 0)),
        ("2..5=x", .invalidAttributeType(offset: 2)),
        ("cn=a,", .invalidAttributeType(offset: 5)),
        (#"cn=a\"#, .invalidEscape(offset: 4)),
        (#"cn=a\zz"#, .invalidEscape(offset: 4)),
        (#"cn=a\4"#, .invalidEscape(offset: 4)),
        (#"cn=a"b"#, .unescapedCharacter(offset: 4)),
        ("cn=a<b", .unescapedCharacter(offset: 4)),
        (#"cn="open"#, .unterminatedQuote(offset: 3)),
        ("cn=#4", .invalidHexValue(offset: 4)),
        ("cn=#", .invalidHexValue(offset: 4)),
        (#"cn=\FF"#, .invalidUTF8(offset: 6)),
        (#"cn="a" b"#, .unexpectedCharacter(offset: 7)),
    ])
    func malformedDNsAreRefused(text: String, error: DistinguishedNameError) {
        #expect(throws: error) { try DistinguishedName(parsing: text) }
    }

    @Test("an escaped value reads back as itself", arguments: [
        "Smith, John", " leading", "trailing ", "#hash", "a+b", #"back\slash"#, #"quote""#, "<>;", "nul\u{0}byte",
        "Lučić", "  ", "", "=",
    ])
    func escapedValueRoundTrips(value: String) throws {
        let dn = try DistinguishedName(parsing: "cn=\(DistinguishedName.escape(value)),dc=example")
        #expect(dn.leafValue == value)
        #expect(try DistinguishedName(parsing: dn.description) == dn)
    }

    @Test("objectGUID's mixed-endian octets read as the GUID AD shows")
    func objectGUIDAsADShowsIt() throws {
        // d8a32b8b-1111-2222-3333-444455556666, as AD stores it: the first three fields reversed.
        let stored: [UInt8] = [0x8b, 0x2b, 0xa3, 0xd8, 0x11, 0x11, 0x22, 0x22,
                               0x33, 0x33, 0x44, 0x44, 0x55, 0x55, 0x66, 0x66]
        let id = try #require(DirectoryObjectID(objectGUID: stored))
        #expect(id.description == "d8a32b8b-1111-2222-3333-444455556666")
        #expect(id.objectGUID == stored)
        #expect(DirectoryObjectID(entryUUID: "D8A32B8B-1111-2222-3333-444455556666") == id)
    }

    @Test("an entryUUID is normalized to lowercase; anything not a UUID is no id", arguments: [
        ("003FBA04-84EB-1041-9416-2572ED813760", "003fba04-84eb-1041-9416-2572ed813760"),
        ("003fba04-84eb-1041-9416-2572ed813760", "003fba04-84eb-1041-9416-2572ed813760"),
        ("003fba0484eb104194162572ed813760", nil),
        ("003fba04-84eb-1041-9416-2572ed81376g", nil),
        ("003fba04-84eb-1041-9416-2572ed8137600", nil),
        ("", nil),
    ] as [(String, String?)])
    func entryUUIDs(text: String, expected: String?) {
        #expect(DirectoryObjectID(entryUUID: text)?.description == expected)
    }

    @Test("an objectGUID of other than 16 octets is no id")
    func objectGUIDLength() {
        #expect(DirectoryObjectID(objectGUID: Array(repeating: 1, count: 15)) == nil)
        #expect(DirectoryObjectID(objectGUID: Array(repeating: 1, count: 17)) == nil)
    }

    @Test("filter metacharacters in a value are escaped as RFC 4515 says", arguments: [
        ("*", #"\2a"#),
        ("admin)(uid=*", #"admin\29\28uid=\2a"#),
        (#"back\slash"#, #"back\5cslash"#),
        ("nul\u{0}", #"nul\00"#),
        ("Lučić", "Lučić"),
        ("plain.user-1", "plain.user-1"),
    ])
    func filterValuesAreEscaped(value: String, escaped: String) {
        #expect(LDAPFilter.escape(value) == escaped)
        #expect(LDAPFilter.equality("uid", value).text == "(uid=\(escaped))")
    }

    @Test("a binary value is escaped octet by octet; filters combine with and")
    func binaryAndConjunction() {
        #expect(LDAPFilter.equality("objectGUID", octets: [0x8b, 0x00, 0x2a]).text == #"(objectGUID=\8b\00\2a)"#)
        #expect(LDAPFilter.and([LDAPFilter("(objectClass=person)"), .equality("uid", "a*")]).text
            == #"(&(objectClass=person)(uid=a\2a))"#)
    }
}
