import CountersignKit
import Foundation
import Testing
@testable import CountersignServer

/// The console's directory page in real Chromium against a listening server and a real
/// directory (`SlapdHarness`).
@Suite("Console directory in a browser", .serialized,
       .enabled(if: Browser.isAvailable, "Chromium and chromedriver are not installed (apt-get install chromium chromium-driver)"),
       .enabled(if: SlapdHarness.available, "slapd and ldap-utils are not installed"))
struct ConsoleDirectoryBrowserTests {
    @Test("An administrator opens Directory from the navigation, picks OpenLDAP (its filters fill in), saves the settings, previews the sync, syncs, and finds the directory's people in the user list")
    func administratorConnectsTheDirectoryAndSeesItsPeople() async throws {
        let slapd = try await SlapdHarness.start()
        defer { slapd.shutdown() }
        try await TestServer.with(.sqlite) { server in
            let admin = try await server.enrolledUser("root")
            #expect(try await server.admin(
                "PUT", "/admin/v1/tenants/default/users/\(admin.userID)/console-role", json: ["role": "tenant-admin"]).status == 200)
            try await Browser.session(width: 1280, height: 900) { browser in
                try await browser.open(server.base + "/console")
                try await browser.waitFor(css: "#username").type("root")
                try await browser.find("#continue").click()
                try await browser.waitFor(text: "Approve on your phone")
                let request = try #require(try await admin.kit.pendingRequests().first)
                _ = try await admin.kit.approve(try await admin.kit.details(for: request))
                try await browser.waitFor(text: "Signed in as root")

                try await browser.find("nav a[href='/console/directory']").click()
                try await browser.waitFor(text: "No directory is set for this tenant.")
                #expect(try await browser.find("#username_attribute").property("value", as: String.self) == "sAMAccountName")
                try await browser.find("#kind option[value='openldap']").click()
                #expect(try await browser.find("#user_filter").property("value", as: String.self) == "(objectClass=inetOrgPerson)",
                        "choosing the kind fills in its filter")
                #expect(try await browser.find("#username_attribute").property("value", as: String.self) == "uid")
                #expect(try await browser.find("#group_membership").property("value", as: String.self) == "member")

                try await browser.find("#servers").type(slapd.ldapsURL)
                try await browser.find("#ca_certificate").type(slapd.caPEM)
                try await browser.find("#bind_dn").type(DirectoryFixture.serviceDN)
                try await browser.find("#bind_password").type(DirectoryFixture.servicePassword)
                try await browser.find("#user_base_dn").type(DirectoryFixture.people)
                try await browser.find("#group_base_dn").type(DirectoryFixture.groups)
                try await browser.find("#save-directory").click()
                let notice = try await browser.waitFor(css: "#notice")
                #expect(try await notice.text().contains("Saved"))
                #expect(try await browser.find("#bind_password").property("value", as: String.self) == "", "never shown back")

                try await browser.find("#test-directory").click()
                let tested = try await browser.waitFor(css: "#test-result-lead")
                #expect(try await tested.text().contains("found 4 users"))

                try await browser.find("#preview-sync").click()
                let preview = try await browser.waitFor(css: "#preview-result")
                let previewed = try await preview.text()
                #expect(previewed.contains("Users to create") && previewed.contains("alice"))
                try await CodeFlowBrowserTests.screenshot(browser, "console-directory-preview")

                try await browser.find("#sync-now").click()
                let synced = try await browser.waitFor(css: "#sync-result")
                #expect(try await synced.text().contains("Users created"))
                let record = try await browser.waitFor(css: "#last-sync-counts")
                #expect(try await record.text().hasPrefix("4 users found: 4 created"))

                try await browser.find("nav a[href='/console/users']").click()
                _ = try await browser.waitFor(css: "#user-carol")
                let listed = try await browser.bodyText()
                for username in ["alice", "bob", "carol", "dave"] {
                    #expect(listed.contains(username), "\(username) is in the user list")
                }
                #expect(listed.contains("Carol Lučić"), "with the directory's display name")
            }
        }
    }
}
