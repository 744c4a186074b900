import CountersignKit
import Foundation
import Testing
@testable import CountersignServer

/// The console's RADIUS clients in real Chromium against a listening server.
@Suite("Console RADIUS clients in a browser", .serialized,
       .enabled(if: Browser.isAvailable, "Chromium and chromedriver are not installed (apt-get install chromium chromium-driver)"))
struct ConsoleRADIUSBrowserTests {
    @Test("An administrator opens RADIUS clients from the navigation, is told beside the field that a network is not one and that a group reply line names no group, adds the VPN gateway for the staff group with its Filter-Id and a generated secret shown once, and sees it listed, also at phone width")
    func administratorAddsAVPNGatewayAndSeesItListed() async throws {
        try await TestServer.with(.sqlite) { server in
            let admin = try await server.enrolledUser("root")
            let staff = try await GroupPolicyTests.group(server, "vpn-staff", members: [admin.userID])
            _ = try await GroupPolicyTests.group(server, "contractors", members: [])
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

                try await browser.find("nav a[href='/console/radius-clients']").click()
                try await browser.waitFor(text: "No RADIUS client is added.")
                try await browser.find("#name").type("Office VPN")
                try await browser.find("#networks").type("vpn.example")
                try await browser.find("#add-radius-client").click()
                let error = try await browser.waitFor(css: "#networks-error")
                #expect(try await error.text().contains("is not an IPv4 or IPv6 address or network"))
                #expect(try await browser.find("#name").property("value", as: String.self) == "Office VPN")

                try await browser.find("#networks").clear()
                try await browser.find("#networks").type("192.0.2.0/24")
                try await browser.find("#mode option[value='push-number']").click()
                try await browser.find("#strip_realm").click()
                try await browser.find("#allowed-group-\(staff)").click()
                try await browser.find("#group_reply_attributes").type("vpn-stafff: Filter-Id=vpn-staff")
                try await browser.find("#add-radius-client").click()
                let groupError = try await browser.waitFor(css: "#group-replies-error")
                #expect(try await groupError.text().contains("names no group of the tenant: vpn-stafff"))
                #expect(try await browser.find("#allowed-group-\(staff)").property("checked", as: Bool.self) == true, "the box stays ticked")

                try await browser.find("#group_reply_attributes").clear()
                try await browser.find("#group_reply_attributes").type("vpn-staff: Filter-Id=vpn-staff")
                try await browser.find("#add-radius-client").click()
                let secret = try await browser.waitFor(css: "#radius-client-secret").text()
                #expect(secret.count == 32)
                #expect(try await browser.bodyText().contains("The shared secret, shown only now"))
                let id = try await browser.find("#radius-client-id").text()
                #expect(try await browser.find("#radius-client-allowed-groups").text() == "vpn-staff")
                #expect(try await browser.find("#radius-client-group-replies").text().contains("vpn-staff: Filter-Id=vpn-staff"))
                try await CodeFlowBrowserTests.screenshot(browser, "console-radius-client")

                try await browser.find("a[href='/console/radius-clients']").click()
                let row = try await browser.waitFor(css: "#radius-client-\(id)")
                #expect(try await row.text() == "Office VPN")
                let listed = try await browser.bodyText()
                #expect(listed.contains("192.0.2.0/24") && listed.contains("push-number") && listed.contains("20 s"))
                #expect(!listed.contains(secret), "the secret is shown once")
                try await CodeFlowBrowserTests.screenshot(browser, "console-radius-clients")
                let stored = try await server.admin("GET", "/admin/v1/tenants/default/radius-clients/\(id)")
                #expect(stored["strip_realm"] as? Bool == true)
                #expect(stored["allowed_groups"] as? [String] == [staff])
                let replies = stored["group_reply_attributes"] as? [[String: any Sendable]]
                #expect(replies?.first?["group"] as? String == staff)
                #expect((replies?.first?["attributes"] as? [[String: any Sendable]])?.first?["value"] as? String == "vpn-staff")

                // At phone width the list and the page are one column, no wider than the screen.
                try await browser.windowSize(width: 390, height: 844)
                for page in ["/console/radius-clients", "/console/radius-clients/\(id)"] {
                    try await browser.open(server.base + page)
                    _ = try await browser.waitFor(css: "main.page h1")
                    let fits: Bool = try await browser.execute(
                        script: "return document.documentElement.scrollWidth <= window.innerWidth + 1")
                    #expect(fits, "\(page) is wider than a phone's screen")
                }
            }
        }
    }
}
