import Foundation
import Testing
@testable import CountersignServer

/// The console's forms for what names groups and the directory: a RADIUS client's and a
/// client's directory password and allowed groups, a RADIUS client's group reply attributes,
/// and the tenant's group floors. Groups are shown by name and kept by id; a refusal of the
/// API's (a name of no group, no directory) is shown beside its field and nothing is saved.
@Suite("Console: groups and the directory password in clients and policies")
struct ConsoleGroupPolicyTests {
    static let tenant = "/admin/v1/tenants/default"

    /// The RADIUS client form with `changes` made to its usual fields.
    static func radiusForm(_ changes: [(String, String)] = []) -> [(String, String)] {
        var fields: [(String, String)] = [
            ("name", "Office VPN"), ("networks", "192.0.2.0/24"), ("mode", "push"), ("wait_seconds", "20"),
            ("unenrolled_users", "reject"), ("reply_attributes", "Filter-Id=vpn-users"),
        ]
        for (name, value) in changes {
            fields.removeAll { $0.0 == name }
            fields.append((name, value))
        }
        return fields
    }

    /// The client form with `changes` made to its usual fields.
    static func clientForm(_ changes: [(String, String)] = []) -> [(String, String)] {
        var fields: [(String, String)] = [
            ("name", "Bank"), ("token_delivery_mode", "poll"), ("token_endpoint_auth_method", "client_secret_basic"),
            ("redirect_uris", "https://bank.example/callback"),
        ]
        for (name, value) in changes {
            fields.removeAll { $0.0 == name }
            fields.append((name, value))
        }
        return fields
    }

    /// A directory for the tenant: never reached (no sync is scheduled), but there.
    static func setDirectory(_ server: TestServer) async throws {
        let set = try await server.admin("PUT", tenant + "/directory", json: [
            "kind": "openldap", "servers": ["ldaps://ldap.example.test"], "security": "ldaps",
            "bind_dn": "cn=countersign,dc=example,dc=test", "bind_password": "service-password",
            "user_base_dn": "ou=people,dc=example,dc=test", "sync_interval_minutes": 0,
        ])
        #expect(set.status == 201, "\(set.errorDescription ?? "")")
    }

    static func radiusClientID(_ page: TestServer.Answer) throws -> String {
        try #require(AccountBench.capture(#"<code id="radius-client-id">([^<]+)</code>"#, in: page.text), "\(page.text.suffix(3000))")
    }

    @Test("RADIUS client: allowed groups ticked by name and group reply attributes as GROUP: Name=Value lines are kept by id and shown by name; the directory password needs the tenant's directory")
    func radiusClientGroupsRoundTrip() async throws {
        try await ConsoleTests.signedIn { bench in
            let staff = try await GroupPolicyTests.group(bench.server, "vpn-staff", members: [])
            let contractors = try await GroupPolicyTests.group(bench.server, "contractors", members: [])
            let empty = try await bench.browser.get("/console/radius-clients")
            #expect(empty.text.contains(#"<input type="checkbox" id="allowed-group-\#(staff)" name="allowed_groups.\#(staff)" value="yes"> vpn-staff"#),
                    "\(empty.text.suffix(4000))")

            let noDirectory = try await bench.post("/console/radius-clients", Self.radiusForm([
                ("directory_password", "yes"), ("allowed_groups.\(staff)", "yes"),
            ]))
            #expect(noDirectory.status == 400 && noDirectory.text.contains(#"id="directory-password-error""#), "\(noDirectory.text.suffix(4000))")
            #expect(noDirectory.text.contains("needs the tenant&#39;s directory") || noDirectory.text.contains("needs the tenant's directory"))
            #expect(noDirectory.text.contains(#"id="directory_password" name="directory_password" value="yes" checked"#), "as typed")
            #expect(noDirectory.text.contains(#"name="allowed_groups.\#(staff)" value="yes" checked"#), "as typed")
            #expect((try await bench.server.admin("GET", Self.tenant + "/radius-clients")["items"] as? [Any])?.isEmpty == true)

            try await Self.setDirectory(bench.server)
            let made = try await bench.post("/console/radius-clients", Self.radiusForm([
                ("directory_password", "yes"), ("allowed_groups.\(staff)", "yes"), ("allowed_groups.\(contractors)", "yes"),
                ("group_reply_attributes", "vpn-staff: Filter-Id=vpn-staff\ncontractors:Filter-Id=guests\nvpn-staff: Class=staff:full"),
            ]))
            #expect(made.status == 200, "\(made.text.suffix(3000))")
            let id = try Self.radiusClientID(made)
            let stored = try await bench.server.admin("GET", Self.tenant + "/radius-clients/\(id)")
            #expect(stored["directory_password"] as? Bool == true)
            #expect(Set(stored["allowed_groups"] as? [String] ?? []) == [staff, contractors], "kept by id")
            let replies = stored["group_reply_attributes"] as? [[String: any Sendable]] ?? []
            #expect(replies.map { $0["group"] as? String } == [staff, contractors])
            #expect((replies.first?["attributes"] as? [[String: any Sendable]])?.compactMap { $0["value"] as? String } == ["vpn-staff", "staff:full"],
                    "a value may hold a colon")

            let page = try await bench.browser.get("/console/radius-clients/\(id)")
            #expect(page.text.contains(#"<dd id="radius-client-allowed-groups">contractors, vpn-staff</dd>"#)
                    || page.text.contains(#"<dd id="radius-client-allowed-groups">vpn-staff, contractors</dd>"#), "\(page.text.prefix(3000))")
            #expect(page.text.contains(#"<span class="group-reply">vpn-staff: <code>Filter-Id=vpn-staff</code></span>"#))
            #expect(page.text.contains(#"<span class="group-reply">contractors: <code>Filter-Id=guests</code></span>"#))
            #expect(page.text.contains(#"<dd id="radius-client-directory-password">Asked first"#))
            #expect(page.text.contains(">vpn-staff: Filter-Id=vpn-staff\nvpn-staff: Class=staff:full\ncontractors: Filter-Id=guests</textarea>"),
                    "one line per attribute, grouped by group")
            #expect(page.text.contains(#"name="allowed_groups.\#(contractors)" value="yes" checked> contractors"#))

            // Saved again as shown, with one box cleared: the groups are saved, the lines kept.
            let saved = try await bench.post("/console/radius-clients/\(id)", Self.radiusForm([
                ("directory_password", "yes"), ("allowed_groups.\(staff)", "yes"),
                ("group_reply_attributes", "vpn-staff: Filter-Id=vpn-staff\nvpn-staff: Class=staff:full\ncontractors: Filter-Id=guests"),
            ]))
            #expect(saved.status == 200 && saved.text.contains(#"id="notice""#), "\(saved.text.suffix(3000))")
            let edited = try await bench.server.admin("GET", Self.tenant + "/radius-clients/\(id)")
            #expect(edited["allowed_groups"] as? [String] == [staff])
            #expect((edited["group_reply_attributes"] as? [Any])?.count == 2)

            // Every box cleared and no line: everyone, no group attributes, no password.
            let cleared = try await bench.post("/console/radius-clients/\(id)", Self.radiusForm())
            #expect(cleared.status == 200, "\(cleared.text.suffix(3000))")
            let none = try await bench.server.admin("GET", Self.tenant + "/radius-clients/\(id)")
            #expect((none["allowed_groups"] as? [Any])?.isEmpty == true && (none["group_reply_attributes"] as? [Any])?.isEmpty == true)
            #expect(none["directory_password"] as? Bool == false)
            #expect(cleared.text.contains(#"<dd id="radius-client-allowed-groups">Everyone</dd>"#))
        }
    }

    @Test("RADIUS client: a group reply line naming no group, or without a group, is refused beside its field with the form as typed, and nothing is saved")
    func radiusClientUnknownGroupBesideItsField() async throws {
        try await ConsoleTests.signedIn { bench in
            let staff = try await GroupPolicyTests.group(bench.server, "vpn-staff", members: [])
            let made = try await bench.post("/console/radius-clients", Self.radiusForm([
                ("group_reply_attributes", "vpn-staff: Filter-Id=vpn-staff"),
            ]))
            let id = try Self.radiusClientID(made)

            let unknown = try await bench.post("/console/radius-clients/\(id)", Self.radiusForm([
                ("name", "Renamed"), ("group_reply_attributes", "vpn-staff: Filter-Id=vpn-staff\nnobody-group: Filter-Id=x"),
            ]))
            #expect(unknown.status == 400 && unknown.text.contains(#"<p class="field-error" id="group-replies-error">"#), "\(unknown.text.suffix(4000))")
            #expect(unknown.text.contains("names no group of the tenant: nobody-group"))
            #expect(unknown.text.contains(">vpn-staff: Filter-Id=vpn-staff\nnobody-group: Filter-Id=x</textarea>"), "as typed")
            #expect(unknown.text.contains(#"value="Renamed""#))
            let kept = try await bench.server.admin("GET", Self.tenant + "/radius-clients/\(id)")
            #expect(kept["name"] as? String == "Office VPN", "nothing saved")
            #expect((kept["group_reply_attributes"] as? [[String: any Sendable]])?.first?["group"] as? String == staff)

            let noGroup = try await bench.post("/console/radius-clients/\(id)", Self.radiusForm([
                ("group_reply_attributes", "Filter-Id=vpn-staff"),
            ]))
            #expect(noGroup.status == 400 && noGroup.text.contains(#"id="group-replies-error">Write each line as GROUP: Name=Value"#),
                    "\(noGroup.text.suffix(4000))")

            let unknownBox = try await bench.post("/console/radius-clients", Self.radiusForm([
                ("networks", "198.51.100.0/24"), ("allowed_groups.grp_nosuchgroup", "yes"),
            ]))
            #expect(unknownBox.status == 400 && unknownBox.text.contains(#"id="allowed-groups-error""#), "\(unknownBox.text.suffix(4000))")
            #expect(unknownBox.text.contains(#"name="allowed_groups.grp_nosuchgroup" value="yes" checked> (deleted group)"#))
            #expect((try await bench.server.admin("GET", Self.tenant + "/radius-clients")["items"] as? [Any])?.count == 1)
        }
    }

    @Test("RADIUS client: a group deleted since shows as (deleted group), stays while its fields are untouched, and its lines go when they change")
    func radiusClientDeletedGroup() async throws {
        try await ConsoleTests.signedIn { bench in
            let staff = try await GroupPolicyTests.group(bench.server, "vpn-staff", members: [])
            let gone = try await GroupPolicyTests.group(bench.server, "old-team", members: [])
            let made = try await bench.post("/console/radius-clients", Self.radiusForm([
                ("allowed_groups.\(gone)", "yes"), ("group_reply_attributes", "old-team: Filter-Id=old\nvpn-staff: Filter-Id=staff"),
            ]))
            let id = try Self.radiusClientID(made)
            #expect(try await bench.server.admin("DELETE", Self.tenant + "/groups/\(gone)").status == 204)

            let page = try await bench.browser.get("/console/radius-clients/\(id)")
            #expect(page.text.contains(#"<dd id="radius-client-allowed-groups">(deleted group)</dd>"#), "\(page.text.prefix(3000))")
            #expect(page.text.contains(#"<span class="group-reply">(deleted group): <code>Filter-Id=old</code></span>"#))
            #expect(page.text.contains(#"name="allowed_groups.\#(gone)" value="yes" checked> (deleted group) <code>\#(gone)</code>"#),
                    "still ticked: clearing it would admit everyone")
            #expect(page.text.contains(">\(gone): Filter-Id=old\nvpn-staff: Filter-Id=staff</textarea>"))

            // Another setting changed, the groups as shown: saved, the deleted group kept.
            let renamed = try await bench.post("/console/radius-clients/\(id)", Self.radiusForm([
                ("name", "Branch VPN"), ("allowed_groups.\(gone)", "yes"),
                ("group_reply_attributes", "\(gone): Filter-Id=old\nvpn-staff: Filter-Id=staff"),
            ]))
            #expect(renamed.status == 200, "\(renamed.text.suffix(3000))")
            let kept = try await bench.server.admin("GET", Self.tenant + "/radius-clients/\(id)")
            #expect(kept["name"] as? String == "Branch VPN" && kept["allowed_groups"] as? [String] == [gone])
            #expect((kept["group_reply_attributes"] as? [Any])?.count == 2)

            // The lines changed: the deleted group's go.
            let changed = try await bench.post("/console/radius-clients/\(id)", Self.radiusForm([
                ("name", "Branch VPN"), ("allowed_groups.\(gone)", "yes"),
                ("group_reply_attributes", "\(gone): Filter-Id=old\nvpn-staff: Filter-Id=staff-vpn"),
            ]))
            #expect(changed.status == 200, "\(changed.text.suffix(3000))")
            let replies = try await bench.server.admin("GET", Self.tenant + "/radius-clients/\(id)")["group_reply_attributes"]
            #expect((replies as? [[String: any Sendable]])?.map { $0["group"] as? String } == [staff])
        }
    }

    @Test("Client: the directory password needs the tenant's directory, said beside its box; allowed groups are ticked by name, kept by id, shown by name; a box of no group is refused beside the list")
    func clientDirectoryPasswordAndGroups() async throws {
        try await ConsoleTests.signedIn { bench in
            let payments = try await GroupPolicyTests.group(bench.server, "payments", members: [])
            let made = try await bench.post("/console/clients", Self.clientForm())
            let clientID = try #require(AccountBench.capture(#"<code id="client-id">([^<]+)</code>"#, in: made.text), "\(made.text.suffix(3000))")
            #expect(made.text.contains(#"<dd id="client-allowed-groups">Everyone</dd>"#))
            #expect(made.text.contains(#"id="allowed-group-\#(payments)" name="allowed_groups.\#(payments)" value="yes"> payments"#))

            let noDirectory = try await bench.post("/console/clients/\(clientID)", Self.clientForm([
                ("name", "Bank online"), ("directory_password", "yes"),
            ]))
            #expect(noDirectory.status == 400 && noDirectory.text.contains(#"id="directory-password-error""#), "\(noDirectory.text.suffix(4000))")
            #expect(noDirectory.text.contains(#"id="directory_password" name="directory_password" value="yes" checked"#))
            let unchanged = try await bench.server.admin("GET", Self.tenant + "/clients/\(clientID)")
            #expect(unchanged["name"] as? String == "Bank" && unchanged["directory_password"] as? Bool != true, "nothing saved")

            let unknown = try await bench.post("/console/clients/\(clientID)", Self.clientForm([
                ("allowed_groups.grp_nosuchgroup", "yes"),
            ]))
            #expect(unknown.status == 400 && unknown.text.contains(#"<p class="field-error" id="allowed-groups-error">"#), "\(unknown.text.suffix(4000))")
            #expect(unknown.text.contains("names no group of the tenant: grp_nosuchgroup"))
            #expect((try await bench.server.admin("GET", Self.tenant + "/clients/\(clientID)")["allowed_groups"] as? [Any] ?? []).isEmpty)

            try await Self.setDirectory(bench.server)
            let saved = try await bench.post("/console/clients/\(clientID)", Self.clientForm([
                ("directory_password", "yes"), ("allowed_groups.\(payments)", "yes"),
            ]))
            #expect(saved.status == 200 && saved.text.contains(#"id="notice""#), "\(saved.text.suffix(3000))")
            let stored = try await bench.server.admin("GET", Self.tenant + "/clients/\(clientID)")
            #expect(stored["directory_password"] as? Bool == true && stored["allowed_groups"] as? [String] == [payments])
            #expect(saved.text.contains(#"<dd id="client-allowed-groups">payments</dd>"#))
            #expect(saved.text.contains(#"<dd id="client-directory-password">Asked before the push"#))
            #expect(saved.text.contains(#"name="allowed_groups.\#(payments)" value="yes" checked"#))

            // The directory removed: saving another change leaves the password as it is.
            #expect(try await bench.server.admin("DELETE", Self.tenant + "/directory").status == 204)
            let renamed = try await bench.post("/console/clients/\(clientID)", Self.clientForm([
                ("name", "Bank online"), ("directory_password", "yes"), ("allowed_groups.\(payments)", "yes"),
            ]))
            #expect(renamed.status == 200, "\(renamed.text.suffix(3000))")
            let after = try await bench.server.admin("GET", Self.tenant + "/clients/\(clientID)")
            #expect(after["name"] as? String == "Bank online" && after["directory_password"] as? Bool == true)
        }
    }

    @Test("Policies: group floors as GROUP: class lines are kept by id and shown by name; a name of no group or a class Countersign does not know is refused beside the field and nothing changes")
    func groupFloorsRoundTrip() async throws {
        try await ConsoleTests.signedIn { bench in
            let staff = try await GroupPolicyTests.group(bench.server, "staff", members: [])
            let admins = try await GroupPolicyTests.group(bench.server, "admins", members: [])
            let shown = try await bench.browser.get("/console/policies")
            #expect(shown.text.contains(#"<textarea id="group_minimum_acr" name="group_minimum_acr" rows="3" class="mono"></textarea>"#),
                    "\(shown.text.prefix(4000))")
            #expect(shown.text.contains("A class is one of confirm, number-match, pin, biometric, custom."))
            let form: [(String, String)] = [("default_acr", ""), ("minimum_acr", ""), ("group_minimum_acr_shown", "yes")]

            let unknown = try await bench.post("/console/policies", form + [("group_minimum_acr", "staff: pin\nnobody-group: biometric")])
            #expect(unknown.status == 400 && unknown.text.contains(#"<p class="field-error" id="group_minimum_acr-error">"#),
                    "\(unknown.text.suffix(4000))")
            #expect(unknown.text.contains("names no group of the tenant: nobody-group"))
            #expect(unknown.text.contains(">staff: pin\nnobody-group: biometric</textarea>"), "as typed")
            let badClass = try await bench.post("/console/policies", form + [("group_minimum_acr", "staff: retina")])
            #expect(badClass.status == 400 && badClass.text.contains(#"id="group_minimum_acr-error""#), "\(badClass.text.suffix(4000))")
            let noGroup = try await bench.post("/console/policies", form + [("group_minimum_acr", "pin")])
            #expect(noGroup.status == 400 && noGroup.text.contains(#"id="group_minimum_acr-error">Write each line as GROUP: class"#))
            let untouched = try await bench.server.admin("GET", Self.tenant + "/authentication-policy")
            #expect((untouched["group_minimum_acr"] as? [Any] ?? []).isEmpty, "nothing saved")

            let saved = try await bench.post("/console/policies", form + [("group_minimum_acr", "staff: pin\nadmins:biometric")])
            #expect(saved.status == 200 && saved.text.contains("The policy is saved."), "\(saved.text.suffix(3000))")
            let policy = try await bench.server.admin("GET", Self.tenant + "/authentication-policy")
            let floors = (policy["group_minimum_acr"] as? [[String: any Sendable]] ?? []).map { ($0["group"] as? String ?? "", $0["minimum_acr"] as? String ?? "") }
            #expect(floors.map(\.0) == [staff, admins] && floors.map(\.1) == ["urn:countersign:acr:pin", "urn:countersign:acr:biometric"])
            #expect(saved.text.contains(">staff: pin\nadmins: biometric</textarea>"), "shown by name")

            let emptied = try await bench.post("/console/policies", form)
            #expect(emptied.status == 200)
            #expect((try await bench.server.admin("GET", Self.tenant + "/authentication-policy")["group_minimum_acr"] as? [Any] ?? [0]).isEmpty,
                    "an emptied field removes the floors")
        }
    }

    @Test("Policies: the risk rules are listed in order, in words, with a dry run said; saving the form keeps them")
    func riskRulesListed() async throws {
        try await ConsoleTests.signedIn { bench in
            let none = try await bench.browser.get("/console/policies")
            #expect(none.text.contains(#"id="no-risk-rules""#), "\(none.text.prefix(4000))")
            let set = try await bench.server.admin("PUT", Self.tenant + "/authentication-policy", json: [
                "risk_mode": "dry_run",
                "risk_rules": [
                    ["name": "new network", "signal": "new_network", "days": 30, "action": "number_match"],
                    ["name": "idle", "signal": "idle_device", "days": 90, "action": "passkey"],
                    ["name": "night", "signal": "time_of_day", "from": "07:00", "to": "20:00", "zone": "Europe/Berlin", "action": "notify"],
                ] as [[String: any Sendable]],
            ])
            #expect(set.status == 200, "\(set.errorDescription ?? "")")
            let page = try await bench.browser.get("/console/policies")
            #expect(page.text.contains(#"id="risk-dry-run""#))
            let rows = [
                "<tr><td>new network</td><td>a network the user approved no request from in 30 days</td><td>requires number matching</td></tr>",
                "<tr><td>idle</td><td>no phone of the user heard from in 90 days</td><td>asks for a passkey</td></tr>",
                "<tr><td>night</td><td>outside 07:00–20:00 Europe/Berlin</td><td>records it</td></tr>",
            ]
            let positions = rows.compactMap { page.text.range(of: $0)?.lowerBound }
            #expect(positions.count == 3 && positions == positions.sorted(), "in order: \(page.text.prefix(6000))")

            let saved = try await bench.post("/console/policies", [("default_acr", ""), ("pin_attempt_limit", "5")])
            #expect(saved.status == 200 && saved.text.contains("The policy is saved."))
            let policy = try await bench.server.admin("GET", Self.tenant + "/authentication-policy")
            #expect((policy["risk_rules"] as? [Any])?.count == 3 && policy["risk_mode"] as? String == "dry_run")
        }
    }

    @Test("Policies: a form without the group floors' field keeps them; a floor of a group deleted since shows its id and goes when the policy is saved")
    func groupFloorsKeptWhenNotEdited() async throws {
        try await ConsoleTests.signedIn { bench in
            let staff = try await GroupPolicyTests.group(bench.server, "staff", members: [])
            let gone = try await GroupPolicyTests.group(bench.server, "old-team", members: [])
            let set = try await bench.server.admin("PUT", Self.tenant + "/authentication-policy", json: [
                "group_minimum_acr": [["group": "staff", "minimum_acr": "urn:countersign:acr:pin"],
                                      ["group": "old-team", "minimum_acr": "urn:countersign:acr:number-match"]],
            ])
            #expect(set.status == 200, "\(set.errorDescription ?? "")")

            let withoutField = try await bench.post("/console/policies", [("default_acr", ""), ("pin_attempt_limit", "5")])
            #expect(withoutField.status == 200 && withoutField.text.contains("The policy is saved."), "\(withoutField.text.suffix(3000))")
            let kept = try await bench.server.admin("GET", Self.tenant + "/authentication-policy")
            #expect(kept["pin_attempt_limit"] as? Int == 5)
            #expect((kept["group_minimum_acr"] as? [[String: any Sendable]])?.map { $0["group"] as? String } == [staff, gone])

            #expect(try await bench.server.admin("DELETE", Self.tenant + "/groups/\(gone)").status == 204)
            let page = try await bench.browser.get("/console/policies")
            #expect(page.text.contains(">staff: pin\n\(gone): number-match</textarea>"), "\(page.text.prefix(4000))")
            let saved = try await bench.post("/console/policies", [
                ("pin_attempt_limit", "4"), ("group_minimum_acr_shown", "yes"),
                ("group_minimum_acr", "staff: pin\n\(gone): number-match"),
            ])
            #expect(saved.status == 200 && saved.text.contains("The policy is saved."), "\(saved.text.suffix(3000))")
            let policy = try await bench.server.admin("GET", Self.tenant + "/authentication-policy")
            #expect(policy["pin_attempt_limit"] as? Int == 4)
            #expect((policy["group_minimum_acr"] as? [[String: any Sendable]])?.map { $0["group"] as? String } == [staff],
                    "the deleted group's floor applied to nobody")
        }
    }
}
