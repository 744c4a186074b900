import Foundation
import Testing
@testable import CountersignServer

/// The console's RADIUS clients, driven in memory: every action is the administration API's
/// `…/radius-clients` call with the session's key, and a refusal is shown beside its field.
@Suite("Console: RADIUS clients")
struct ConsoleRADIUSClientTests {
    static let collection = "/admin/v1/tenants/default/radius-clients"

    static func secret(in text: String) -> String? {
        AccountBench.capture(#"<code id="radius-client-secret">([^<]+)</code>"#, in: text)
    }

    @Test("Adding a RADIUS client shows its generated secret once; a bad network is shown beside its field with the form as typed and nothing stored; edit, new secret, delete")
    func addEditRotateDelete() async throws {
        try await ConsoleTests.signedIn { bench in
            let refused = try await bench.post("/console/radius-clients", [
                ("name", "Office VPN"), ("networks", "192.0.2.0/33"), ("mode", "push"), ("wait_seconds", "20"),
                ("unenrolled_users", "reject"), ("reply_attributes", ""),
            ])
            #expect(refused.status == 400)
            #expect(refused.text.contains(#"id="networks-error""#), "\(refused.text.suffix(3000))")
            #expect(refused.text.contains(">192.0.2.0/33</textarea>") && refused.text.contains(#"value="Office VPN""#))
            #expect((try await bench.server.admin("GET", Self.collection)["items"] as? [Any])?.isEmpty == true, "nothing stored")

            let made = try await bench.post("/console/radius-clients", [
                ("name", "Office VPN"), ("networks", "192.0.2.0/24\n2001:db8::/32"), ("mode", "push-number"),
                ("wait_seconds", "30"), ("strip_realm", "yes"), ("unenrolled_users", "reject"),
                ("reply_attributes", "Filter-Id=vpn-users\nSession-Timeout = 3600"),
            ])
            #expect(made.status == 200, "\(made.text.suffix(3000))")
            let secret = try #require(Self.secret(in: made.text))
            #expect(made.text.contains("shown only now"))
            let id = try #require(AccountBench.capture(#"<code id="radius-client-id">([^<]+)</code>"#, in: made.text))
            let stored = try await bench.server.admin("GET", "\(Self.collection)/\(id)")
            #expect(stored["networks"] as? [String] == ["192.0.2.0/24", "2001:db8::/32"])
            #expect(stored["mode"] as? String == "push-number" && stored["wait_seconds"] as? Int == 30)
            #expect(stored["strip_realm"] as? Bool == true && stored["strip_domain"] as? Bool == false)
            #expect((stored["reply_attributes"] as? [[String: any Sendable]])?.compactMap { $0["value"] as? String } == ["vpn-users", "3600"])

            let shownAgain = try await bench.browser.get("/console/radius-clients/\(id)")
            #expect(!shownAgain.text.contains(secret), "the secret is shown once")
            #expect(shownAgain.text.contains(">Filter-Id=vpn-users\nSession-Timeout=3600</textarea>"))
            #expect(shownAgain.text.contains(#"name="strip_realm" value="yes" checked"#))
            let list = try await bench.browser.get("/console/radius-clients")
            #expect(list.text.contains(#"id="radius-client-\#(id)">Office VPN</a>"#) && list.text.contains("192.0.2.0/24, 2001:db8::/32"))
            #expect(list.text.contains(#"href="/console/radius-clients" aria-current="page""#), "in the navigation")
            let audit = try await bench.browser.get("/console/audit?action=radius_client.created")
            #expect(audit.text.contains(#"class="target" href="/console/radius-clients/\#(id)""#), "the audit links to its page")

            let tooLong = try await bench.post("/console/radius-clients/\(id)", [
                ("name", "Office VPN"), ("networks", "192.0.2.0/24"), ("mode", "push"), ("wait_seconds", "500"),
                ("unenrolled_users", "reject"),
            ])
            #expect(tooLong.status == 400 && tooLong.text.contains(#"id="wait-error""#), "\(tooLong.text.suffix(3000))")
            #expect(tooLong.text.contains(#"id="wait_seconds" name="wait_seconds" type="text" inputmode="numeric" autocomplete="off" value="500""#))
            #expect(try await bench.server.admin("GET", "\(Self.collection)/\(id)")["wait_seconds"] as? Int == 30, "nothing changed")

            let saved = try await bench.post("/console/radius-clients/\(id)", [
                ("name", "Branch VPN"), ("networks", "198.51.100.7"), ("mode", "passcode"), ("wait_seconds", "10"),
                ("strip_domain", "yes"), ("unenrolled_users", "accept"), ("reply_attributes", ""),
            ])
            #expect(saved.status == 200 && saved.text.contains(#"id="notice""#), "\(saved.text.prefix(2000))")
            let edited = try await bench.server.admin("GET", "\(Self.collection)/\(id)")
            #expect(edited["name"] as? String == "Branch VPN" && edited["mode"] as? String == "passcode")
            #expect(edited["networks"] as? [String] == ["198.51.100.7/32"] && edited["wait_seconds"] as? Int == 10)
            #expect(edited["strip_realm"] as? Bool == false && edited["strip_domain"] as? Bool == true)
            #expect(edited["unenrolled_users"] as? String == "accept" && (edited["reply_attributes"] as? [Any])?.isEmpty == true)

            let renewed = try await bench.post("/console/radius-clients/\(id)/secret", [])
            let second = try #require(Self.secret(in: renewed.text))
            #expect(second != secret)

            let unconfirmed = try await bench.post("/console/radius-clients/\(id)/delete", [])
            #expect(unconfirmed.status == 400 && unconfirmed.text.contains("Tick the box to confirm"))
            #expect(try await bench.server.admin("GET", "\(Self.collection)/\(id)").status == 200)
            let deleted = try await bench.post("/console/radius-clients/\(id)/delete", [("confirm", "yes")])
            #expect(deleted.status == 303 && deleted.header("Location") == "/console/radius-clients")
            #expect(try await bench.server.admin("GET", "\(Self.collection)/\(id)").status == 404)
        }
    }

    @Test("A shared secret typed when adding is used and never shown; a short one is refused beside its field and not put back into the page")
    func givenSecret() async throws {
        try await ConsoleTests.signedIn { bench in
            let short = try await bench.post("/console/radius-clients", [
                ("name", "Switch"), ("networks", "203.0.113.0/24"), ("mode", "push"), ("wait_seconds", ""),
                ("unenrolled_users", "reject"), ("secret", "tooShortSecret"),
            ])
            #expect(short.status == 400 && short.text.contains(#"id="secret-error""#), "\(short.text.suffix(3000))")
            #expect(!short.text.contains("tooShortSecret"))
            #expect((try await bench.server.admin("GET", Self.collection)["items"] as? [Any])?.isEmpty == true)

            let made = try await bench.post("/console/radius-clients", [
                ("name", "Switch"), ("networks", "203.0.113.0/24"), ("mode", "push"), ("wait_seconds", ""),
                ("unenrolled_users", "reject"), ("secret", "a-long-enough-shared-secret"),
            ])
            #expect(made.status == 200 && made.text.contains("Added, with the shared secret you gave."), "\(made.text.suffix(3000))")
            #expect(Self.secret(in: made.text) == nil && !made.text.contains("a-long-enough-shared-secret"))
            let items = try await bench.server.admin("GET", Self.collection)["items"] as? [[String: any Sendable]]
            #expect(items?.first?["wait_seconds"] as? Int == RADIUSClient.defaultWaitSeconds, "an empty wait is the default")
        }
    }

    @Test("A network overlapping another RADIUS client's is refused beside the networks field, nothing stored")
    func overlappingNetwork() async throws {
        try await ConsoleTests.signedIn { bench in
            let first = try await bench.post("/console/radius-clients", [
                ("name", "Firewall"), ("networks", "10.0.0.0/8"), ("mode", "push"), ("unenrolled_users", "reject"),
            ])
            #expect(first.status == 200)
            let overlapping = try await bench.post("/console/radius-clients", [
                ("name", "Switch"), ("networks", "10.1.2.3"), ("mode", "push"), ("unenrolled_users", "reject"),
            ])
            #expect(overlapping.status == 409 && overlapping.text.contains(#"id="networks-error""#), "\(overlapping.text.suffix(3000))")
            #expect((try await bench.server.admin("GET", Self.collection)["items"] as? [Any])?.count == 1)
        }
    }
}
