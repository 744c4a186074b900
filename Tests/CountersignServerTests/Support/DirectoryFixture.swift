import Foundation

/// The test directory's contents (`SlapdHarness`): a service account, people shaped both as
/// OpenLDAP keeps them (uid, cn, mail; entryUUID from slapd) and as Active Directory does
/// (sAMAccountName, userPrincipalName, objectGUID, userAccountControl), groups with one nested in
/// another, and as many bulk users as a paging test needs.
enum DirectoryFixture {
    static let suffix = "dc=example,dc=test"
    static let rootDN = "cn=admin,dc=example,dc=test"
    static let rootPassword = "directory-root-secret"
    static let serviceDN = "cn=countersign,ou=services,dc=example,dc=test"
    static let servicePassword = "service-account-secret"
    static let people = "ou=people,dc=example,dc=test"
    static let groups = "ou=groups,dc=example,dc=test"
    static let bulk = "ou=bulk,dc=example,dc=test"
    static let bulkCount = 2_500

    static func personDN(_ uid: String) -> String { "uid=\(uid),\(people)" }
    static func groupDN(_ cn: String) -> String { "cn=\(cn),\(groups)" }
    static func password(_ uid: String) -> String { "password-of-\(uid)" }

    /// Alice's objectGUID as AD stores it; its GUID text is `aliceGUID`.
    static let aliceObjectGUID: [UInt8] = [0x8b, 0x2b, 0xa3, 0xd8, 0x11, 0x11, 0x22, 0x22,
                                           0x33, 0x33, 0x44, 0x44, 0x55, 0x55, 0x66, 0x66]
    static let aliceGUID = "d8a32b8b-1111-2222-3333-444455556666"

    /// Stands in for Active Directory's schema: its attributes under their own OIDs, with the
    /// matching rules AD gives them (userAccountControl an INTEGER with integerMatch, so that
    /// AD's bitwise-and rule 1.2.840.113556.1.4.803, which OpenLDAP implements as
    /// integerBitAndMatch, filters on it), in an auxiliary class any person can carry.
    static let schema = """
        attributetype ( 1.2.840.113556.1.4.221 NAME 'sAMAccountName'
            EQUALITY caseIgnoreMatch SUBSTR caseIgnoreSubstringsMatch
            SYNTAX 1.3.6.1.4.1.1466.115.121.1.15 SINGLE-VALUE )
        attributetype ( 1.2.840.113556.1.4.656 NAME 'userPrincipalName'
            EQUALITY caseIgnoreMatch SUBSTR caseIgnoreSubstringsMatch
            SYNTAX 1.3.6.1.4.1.1466.115.121.1.15 SINGLE-VALUE )
        attributetype ( 1.2.840.113556.1.4.2 NAME 'objectGUID'
            EQUALITY octetStringMatch
            SYNTAX 1.3.6.1.4.1.1466.115.121.1.40 SINGLE-VALUE )
        attributetype ( 1.2.840.113556.1.4.8 NAME 'userAccountControl'
            EQUALITY integerMatch
            SYNTAX 1.3.6.1.4.1.1466.115.121.1.27 SINGLE-VALUE )
        objectclass ( 1.3.6.1.4.1.4203.666.11.40.1 NAME 'activeDirectoryAccount' SUP top AUXILIARY
            MAY ( sAMAccountName $ userPrincipalName $ objectGUID $ userAccountControl ) )

        """

    /// The tree, the service account and the people. Alice and bob are AD-shaped (bob disabled:
    /// userAccountControl 514 has bit 2, ACCOUNTDISABLE); carol and dave are plain inetOrgPersons.
    static var baseLDIF: String {
        var ldif = """
            dn: \(suffix)
            objectClass: dcObject
            objectClass: organization
            dc: example
            o: Example

            """
        for unit in ["people", "groups", "services", "bulk"] {
            ldif += "\ndn: ou=\(unit),\(suffix)\nobjectClass: organizationalUnit\nou: \(unit)\n"
        }
        ldif += """

            dn: \(serviceDN)
            objectClass: organizationalRole
            objectClass: simpleSecurityObject
            cn: countersign
            userPassword: \(servicePassword)

            """
        ldif += person("alice", displayName: "Alice Archer", activeDirectory: (512, aliceObjectGUID))
        ldif += person("bob", displayName: "Bob Baker", activeDirectory: (514, Array(repeating: 0xb0, count: 16)))
        ldif += person("carol", displayName: "Carol Lučić")
        ldif += person("dave", displayName: "Dave Davies")
        return ldif
    }

    private static func person(_ uid: String, displayName: String, activeDirectory: (control: Int, guid: [UInt8])? = nil) -> String {
        var ldif = """

            dn: \(personDN(uid))
            objectClass: inetOrgPerson
            \(activeDirectory == nil ? "" : "objectClass: activeDirectoryAccount\n")uid: \(uid)
            cn:: \(base64(displayName))
            sn:: \(base64(String(displayName.split(separator: " ").last ?? "")))
            displayName:: \(base64(displayName))
            mail: \(uid)@example.test
            userPassword: \(password(uid))

            """
        if let activeDirectory {
            // The auxiliary class is named beside inetOrgPerson above: slapadd read an entry whose
            // objectClass lines stood apart as having only the later one.
            ldif += """
                sAMAccountName: \(uid)
                userPrincipalName: \(uid)@example.test
                userAccountControl: \(activeDirectory.control)
                objectGUID:: \(Data(activeDirectory.guid).base64EncodedString())

                """
        }
        return ldif
    }

    /// LDIF's form for a value that may not be ASCII.
    private static func base64(_ text: String) -> String {
        Data(text.utf8).base64EncodedString()
    }

    /// `count` people under ou=bulk, `user0000` on.
    static func bulkLDIF(count: Int) -> String {
        (0..<count).map { index in
            let uid = "user" + String(index).leftPadded(to: 4)
            return "\ndn: uid=\(uid),\(bulk)\nobjectClass: inetOrgPerson\nuid: \(uid)\ncn: \(uid)\nsn: \(uid)\n"
        }.joined()
    }

    /// Staff holds alice; engineering holds carol; everyone holds both groups and dave, so that
    /// alice and carol are in it only through a nested group.
    static let groupsLDIF = """
        dn: \(groupDN("staff"))
        objectClass: groupOfNames
        cn: staff
        member: \(personDN("alice"))

        dn: \(groupDN("engineering"))
        objectClass: groupOfNames
        cn: engineering
        member: \(personDN("carol"))

        dn: \(groupDN("everyone"))
        objectClass: groupOfNames
        cn: everyone
        member: \(groupDN("staff"))
        member: \(groupDN("engineering"))
        member: \(personDN("dave"))

        """
}

private extension String {
    func leftPadded(to length: Int) -> String {
        String(repeating: "0", count: max(0, length - count)) + self
    }
}
