import CountersignLDAP
import Foundation
import Testing

/// The directory client against a real slapd (`SlapdHarness`): TLS and its refusals, binds,
/// failover, paging past the directory's size limit, Active Directory's filters and attributes,
/// groups, password checks and escaping. The tests only read, so they share one directory.
/// Serialized: several tests wait out timeouts on the client's eight directory threads, and
/// others measure how long a call takes; run at once, a call would wait for a thread and be
/// timed too long.
@Suite("LDAP client against slapd", .sharedSlapd, .serialized)
struct LDAPClientTests {
    /// A client of the shared directory as the service account, over LDAPS with the test CA unless
    /// told otherwise; nil when slapd is not installed.
    static func client(
        _ servers: ((SlapdHarness) -> [String])? = nil, security: LDAPConfiguration.Security = .ldaps,
        ca: ((SlapdHarness) -> String?)? = nil, password: String = DirectoryFixture.servicePassword,
        connectTimeout: Duration = .seconds(2), operationTimeout: Duration = .seconds(10)
    ) throws -> LDAPClient? {
        guard let slapd = SharedSlapd.current else { return nil }
        return LDAPClient(configuration: try LDAPConfiguration(
            servers: servers?(slapd) ?? [slapd.ldapsURL], security: security, caCertificatesPEM: ca?(slapd) ?? slapd.caPEM,
            bindDN: DirectoryFixture.serviceDN, bindPassword: password,
            connectTimeout: connectTimeout, operationTimeout: operationTimeout))
    }

    @Test("LDAPS with the directory's CA connects and binds as the service account")
    func ldapsWithTheDirectoryCA() async throws {
        guard let client = try Self.client() else { return }
        try await client.check()
    }

    @Test("LDAPS trusting only the system's CAs, or another CA, is a TLS error")
    func ldapsWithoutTheCAIsRefused() async throws {
        guard let slapd = SharedSlapd.current else { return }
        for ca in [nil, slapd.otherCAPEM] {
            let client = LDAPClient(configuration: try LDAPConfiguration(
                servers: [slapd.ldapsURL], caCertificatesPEM: ca, bindDN: DirectoryFixture.serviceDN,
                bindPassword: DirectoryFixture.servicePassword, connectTimeout: .seconds(2)))
            await #expect {
                try await client.check()
            } throws: { error in
                guard case LDAPError.tls(let message) = error else { return false }
                return message.contains(slapd.ldapsURL)
            }
        }
    }

    @Test("a certificate whose subjectAltNames do not name the host is a TLS error, though its CA is trusted and its CN names it")
    func certificateForAnotherHostIsRefused() async throws {
        guard let slapd = SharedSlapd.current, let client = try Self.client({ [$0.ldapsURLForAnotherName] }) else { return }
        await #expect {
            try await client.check()
        } throws: { error in
            guard case LDAPError.tls(let message) = error else { return false }
            return message.contains(slapd.ldapsURLForAnotherName)
        }
    }

    @Test("CA certificates that do not load are a configuration error, not a server's failure")
    func caThatDoesNotLoad() async throws {
        let garbage = "-----BEGIN CERTIFICATE-----\nbm90IGEgY2VydGlmaWNhdGU=\n-----END CERTIFICATE-----\n"
        guard let client = try Self.client(ca: { _ in garbage }) else { return }
        await #expect {
            try await client.check()
        } throws: { error in
            guard case LDAPError.configuration(let message) = error else { return false }
            return message.contains("CA certificates")
        }
    }

    @Test("StartTLS upgrades ldap:// before the bind, with the same certificate checks")
    func startTLS() async throws {
        guard let client = try Self.client({ [$0.ldapURL] }, security: .startTLS) else { return }
        try await client.check()
        guard let untrusted = try Self.client({ [$0.ldapURL] }, security: .startTLS, ca: { $0.otherCAPEM }) else { return }
        await #expect {
            try await untrusted.check()
        } throws: { error in
            if case LDAPError.tls = error { true } else { false }
        }
    }

    @Test("ldap:// without TLS works only when plain is chosen")
    func plainOnlyWhenChosen() async throws {
        guard let slapd = SharedSlapd.current else { return }
        #expect(throws: LDAPError.self) {
            try LDAPConfiguration(servers: [slapd.ldapURL], bindDN: DirectoryFixture.serviceDN,
                                  bindPassword: DirectoryFixture.servicePassword)
        }
        guard let client = try Self.client({ [$0.ldapURL] }, security: .plain) else { return }
        try await client.check()
    }

    @Test("configurations that cannot work are refused before any connection, saying why", arguments: [
        (["ldaps://dc1.example.com"], LDAPConfiguration.Security.startTLS, "needs security ldaps"),
        (["ldap://dc1.example.com"], .ldaps, "is an ldap:// server"),
        (["https://dc1.example.com"], .ldaps, "is not an ldap:// or ldaps:// URL"),
        (["ldaps://dc1.example.com/dc=example,dc=com"], .ldaps, "more than a host and port"),
        (["ldaps://dc1.example.com:0"], .ldaps, "invalid port"),
        ([], .ldaps, "no directory server"),
    ])
    func invalidConfigurations(servers: [String], security: LDAPConfiguration.Security, message: String) {
        #expect {
            try LDAPConfiguration(servers: servers, security: security, bindDN: DirectoryFixture.serviceDN, bindPassword: "x")
        } throws: { error in
            guard case LDAPError.configuration(let text) = error else { return false }
            return text.contains(message)
        }
    }

    @Test("a service account without a password, or an empty one, is a configuration error, never an anonymous bind")
    func serviceAccountNeedsAPassword() {
        for password in [nil, ""] as [String?] {
            #expect {
                try LDAPConfiguration(servers: ["ldaps://dc1.example.com"], bindDN: DirectoryFixture.serviceDN, bindPassword: password)
            } throws: { error in
                if case LDAPError.configuration = error { true } else { false }
            }
        }
    }

    @Test("the configuration's description and the errors never hold the service password")
    func passwordNeverShown() async throws {
        let configuration = try LDAPConfiguration(
            servers: ["ldaps://127.0.0.1:\(try freeTCPPort())"], bindDN: DirectoryFixture.serviceDN, bindPassword: "s3cret-pw")
        #expect(!configuration.description.contains("s3cret-pw"))
        var dumped = ""
        dump(configuration, to: &dumped)
        #expect(!dumped.contains("s3cret-pw"))
        do {
            try await LDAPClient(configuration: configuration).check()
        } catch {
            #expect(!error.description.contains("s3cret-pw"))
        }
    }

    @Test("a wrong service password is invalidCredentials, and the next server is not tried")
    func wrongServicePassword() async throws {
        // Were the second server tried, its refused connection would make the error unreachable.
        let dead = "ldaps://127.0.0.1:\(try freeTCPPort())"
        guard let client = try Self.client({ [$0.ldapsURL, dead] }, password: "not-the-password") else { return }
        await #expect(throws: LDAPError.invalidCredentials) { try await client.check() }
    }

    @Test("a first server that refuses connections is passed over for the second")
    func failoverToTheSecondServer() async throws {
        let dead = "ldaps://127.0.0.1:\(try freeTCPPort())"
        guard let client = try Self.client({ [dead, $0.ldapsURL] }) else { return }
        let found = try await client.search(
            base: DirectoryFixture.people, filter: .equality("uid", "alice"), attributes: ["uid"])
        #expect(found.map(\.dn) == [DirectoryFixture.personDN("alice")])
    }

    @Test("when every server is down the error names each and why, within the connect timeout")
    func allServersDown() async throws {
        guard SharedSlapd.current != nil else { return }
        let servers = ["ldaps://127.0.0.1:\(try freeTCPPort())", "ldaps://127.0.0.1:\(try freeTCPPort())"]
        guard let client = try Self.client({ _ in servers }) else { return }
        let started = ContinuousClock.now
        let error = await #expect(throws: LDAPError.self) { try await client.check() }
        #expect(ContinuousClock.now - started < .seconds(2))
        guard case .unreachable(let failures) = error else {
            Issue.record("expected unreachable, got \(String(describing: error))")
            return
        }
        #expect(failures.map(\.server) == servers)
        #expect(failures.allSatisfy { $0.reason.contains("refused") })
    }

    @Test("a paged search reads all 2,500 bulk users though the directory answers at most 500 at once")
    func pagedSearchPastTheSizeLimit() async throws {
        guard let client = try Self.client() else { return }
        let users = try await client.search(
            base: DirectoryFixture.bulk, scope: .oneLevel, filter: LDAPFilter("(objectClass=inetOrgPerson)"),
            attributes: ["uid"], pageSize: SlapdHarness.sizeLimit)
        #expect(users.count == DirectoryFixture.bulkCount)
        #expect(Set(users.compactMap { $0.string("uid") }).count == DirectoryFixture.bulkCount)
    }

    @Test("a page larger than the directory allows is refused by it, with its reason")
    func pageLargerThanTheDirectoryAllows() async throws {
        guard let client = try Self.client() else { return }
        await #expect {
            _ = try await client.search(base: DirectoryFixture.bulk, filter: LDAPFilter("(uid=*)"), attributes: ["uid"],
                                        pageSize: SlapdHarness.sizeLimit * 2)
        } throws: { error in
            guard case LDAPError.protocol(let code, let message) = error else { return false }
            return code == 11 && message.contains("pagedResults")
        }
    }

    @Test("Active Directory's filter for enabled accounts (bitwise and on userAccountControl) leaves out the disabled one")
    func disabledAccountsFilteredOut() async throws {
        guard let client = try Self.client() else { return }
        let accounts = LDAPFilter("(objectClass=activeDirectoryAccount)")
        let enabled = LDAPFilter.and([accounts, LDAPFilter("(!(userAccountControl:1.2.840.113556.1.4.803:=2))")])
        let all = try await client.search(base: DirectoryFixture.people, filter: accounts, attributes: ["sAMAccountName"])
        let active = try await client.search(base: DirectoryFixture.people, filter: enabled, attributes: ["sAMAccountName"])
        #expect(Set(all.compactMap { $0.string("sAMAccountName") }) == ["alice", "bob"])
        #expect(active.compactMap { $0.string("sAMAccountName") } == ["alice"])
    }

    @Test("a user's attributes: memberOf by any case, UTF-8 names, objectGUID as AD shows it, entryUUID otherwise")
    func userAttributes() async throws {
        guard let client = try Self.client() else { return }
        let people = try await client.search(
            base: DirectoryFixture.people, filter: LDAPFilter("(|(uid=alice)(uid=carol))"),
            attributes: ["uid", "displayName", "mail", "memberOf", "objectGUID", "entryUUID", "userPrincipalName"])
        let alice = try #require(people.first { $0.string("uid") == "alice" })
        let carol = try #require(people.first { $0.string("uid") == "carol" })
        #expect(alice.strings("memberOf") == [DirectoryFixture.groupDN("staff")])
        #expect(alice.strings("MEMBEROF") == alice.strings("memberof"))
        #expect(alice.objectID?.description == DirectoryFixture.aliceGUID)
        #expect(alice.string("userPrincipalName") == "alice@example.test")
        #expect(carol.string("displayName") == "Carol Lučić")
        #expect(carol.strings("memberOf") == [DirectoryFixture.groupDN("engineering")])
        let carolID = try #require(carol.objectID)
        #expect(carolID == DirectoryObjectID(entryUUID: try #require(carol.string("entryUUID"))))
    }

    @Test("a nested group's members expand to the people in the groups it holds")
    func nestedGroupMembers() async throws {
        guard let client = try Self.client() else { return }
        var people: Set<String> = []
        var pending = [DirectoryFixture.groupDN("everyone")]
        var seen: Set<String> = []
        while let dn = pending.popLast() {
            guard seen.insert(dn).inserted else { continue }
            let entries = try await client.search(
                base: dn, scope: .base, filter: LDAPFilter("(objectClass=*)"), attributes: ["objectClass", "member"])
            let entry = try #require(entries.first)
            if entry.strings("objectClass").contains("groupOfNames") {
                pending += entry.strings("member")
            } else {
                people.insert(try #require(DistinguishedName(parsing: entry.dn).leafValue))
            }
        }
        #expect(people == ["alice", "carol", "dave"])
        #expect(seen.contains(DirectoryFixture.groupDN("staff")))
    }

    @Test("a user's password is checked by binding as them: right is true, wrong is false")
    func verifyPassword() async throws {
        guard let client = try Self.client() else { return }
        let alice = DirectoryFixture.personDN("alice")
        #expect(try await client.verifyPassword(dn: alice, password: DirectoryFixture.password("alice")))
        #expect(try await client.verifyPassword(dn: alice, password: "wrong") == false)
        #expect(try await client.verifyPassword(dn: DirectoryFixture.personDN("nobody"), password: "wrong") == false)
    }

    @Test("an empty password is refused before any connection: the directory would take it as an anonymous bind")
    func emptyPasswordNeverBinds() async throws {
        guard let slapd = SharedSlapd.current else { return }
        // A directory that accepts unauthenticated binds: an empty password "verifies" there.
        let anonymousBind = await ChildProcess.spawnedStatus(
            "ldapwhoami", ["-x", "-H", slapd.ldapURL, "-D", DirectoryFixture.personDN("alice"), "-w", ""])
        #expect(anonymousBind == 0)
        let dead = "ldaps://127.0.0.1:\(try freeTCPPort())"
        guard let client = try Self.client({ _ in [dead] }) else { return }
        // No server answers, so only a refusal made without connecting can return.
        #expect(try await client.verifyPassword(dn: DirectoryFixture.personDN("alice"), password: "") == false)
    }

    @Test("filter metacharacters in a username are escaped: * and an injected clause match nobody", arguments: [
        "*", "alice)(uid=*", "*)(|(uid=*", #"alice\"#,
    ])
    func usernamesCannotInject(username: String) async throws {
        guard let client = try Self.client() else { return }
        let found = try await client.search(
            base: DirectoryFixture.people, filter: .equality("uid", username), attributes: ["uid"])
        #expect(found.isEmpty)
    }

    @Test("a search base that does not exist is noSuchObject; a filter that does not parse is a configuration error")
    func missingBaseAndBadFilter() async throws {
        guard let client = try Self.client() else { return }
        let nowhere = "ou=nowhere,\(DirectoryFixture.suffix)"
        await #expect(throws: LDAPError.noSuchObject(base: nowhere)) {
            _ = try await client.search(base: nowhere, filter: LDAPFilter("(uid=*)"), attributes: ["uid"])
        }
        await #expect {
            _ = try await client.search(base: DirectoryFixture.people, filter: LDAPFilter("(uid=alice"), attributes: ["uid"])
        } throws: { error in
            if case LDAPError.configuration = error { true } else { false }
        }
    }

    @Test("a server that accepts the connection and never answers times out within the operation timeout")
    func silentServerTimesOut() async throws {
        guard SharedSlapd.current != nil else { return }
        let silent = try PortHolder()
        guard let client = try Self.client({ _ in ["ldap://127.0.0.1:\(silent.port)"] }, security: .plain,
                                           operationTimeout: .seconds(1)) else { return }
        let started = ContinuousClock.now
        await #expect(throws: LDAPError.timeout) { try await client.check() }
        #expect(ContinuousClock.now - started < .seconds(3))
        withExtendedLifetime(silent) {}
    }

    @Test("calls waiting on a silent directory leave Swift's concurrency pool free for other tasks")
    func waitsAreOffTheConcurrencyPool() async throws {
        guard SharedSlapd.current != nil else { return }
        let silent = try PortHolder()
        guard let client = try Self.client({ _ in ["ldap://127.0.0.1:\(silent.port)"] }, security: .plain,
                                           operationTimeout: .seconds(2)) else { return }
        // More waiting calls than the pool has threads (one per core), each waiting 2 s; were
        // they waiting on the pool, a task that needs it would wait as long. The margin is for
        // a loaded machine running the whole suite.
        let waiting = (0..<4).map { _ in Task { try? await client.check() } }
        try await Task.sleep(for: .milliseconds(100))
        let started = ContinuousClock.now
        try await Task.sleep(for: .milliseconds(10))
        #expect(ContinuousClock.now - started < .seconds(1))
        for task in waiting { await task.value }
        withExtendedLifetime(silent) {}
    }

    @Test("a server that never completes the TLS handshake is unreachable within the connect timeout")
    func silentTLSServerIsUnreachable() async throws {
        guard SharedSlapd.current != nil else { return }
        let silent = try PortHolder()
        guard let client = try Self.client({ _ in ["ldaps://127.0.0.1:\(silent.port)"] }, connectTimeout: .seconds(1)) else { return }
        let started = ContinuousClock.now
        let error = await #expect(throws: LDAPError.self) { try await client.check() }
        #expect(ContinuousClock.now - started < .seconds(3))
        guard case .unreachable(let failures) = error else {
            Issue.record("expected unreachable, got \(String(describing: error))")
            return
        }
        #expect(failures.first?.reason.contains("TLS handshake") == true, "\(failures)")
        withExtendedLifetime(silent) {}
    }
}

extension ChildProcess {
    /// The exit status of `name` (found on PATH) run with `arguments`, ldap.conf not read.
    static func spawnedStatus(_ name: String, _ arguments: [String]) async -> Int32? {
        guard let executable = find(name) else { return nil }
        let environment = ProcessInfo.processInfo.environment.merging(["LDAPNOINIT": "1"]) { $1 }
        return try? await spawned(executable, arguments, environment: environment).status
    }
}
