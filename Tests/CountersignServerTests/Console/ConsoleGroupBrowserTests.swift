import CountersignKit
import Foundation
import Testing
@testable import CountersignServer

/// The console's groups in real Chromium against a listening server.
@Suite("Console groups in a browser", .serialized,
       .enabled(if: Browser.isAvailable, "Chromium and chromedriver are not installed (apt-get install chromium chromium-driver)"))
struct ConsoleGroupBrowserTests {
    @Test("An administrator opens Groups from the navigation, creates VPN users, is told beside the field that no user is named adaa, adds ada by username, sees the group on ada's page, and the group's page fits a phone")
    func administratorMakesAGroupAndAddsAUser() async throws {
        try await TestServer.with(.sqlite) { server in
            let admin = try await server.enrolledUser("root")
            #expect(try await server.admin(
                "PUT", "/admin/v1/tenants/default/users/\(admin.userID)/console-role", json: ["role": "tenant-admin"]).status == 200)
            let ada = try await server.createUser("ada")
            try await Browser.session(width: 1280, height: 900) { browser in
                try await browser.open(server.base + "/console")
                try await browser.waitFor(css: "#username").type("root")
                try await browser.find("#continue").click()
                try await browser.waitFor(text: "Approve on your phone")
                let request = try #require(try await admin.kit.pendingRequests().first)
                _ = try await admin.kit.approve(try await admin.kit.details(for: request))
                try await browser.waitFor(text: "Signed in as root")

                try await browser.find("nav a[href='/console/groups']").click()
                try await browser.waitFor(text: "No group is made yet.")
                try await browser.find("#name").type("VPN users")
                try await browser.find("#create-group").click()
                let heading = try await browser.waitFor(css: "#group-heading")
                #expect(try await heading.text() == "VPN users")
                let id = try await browser.find("#group-id").text()

                try await browser.find("#username").type("adaa")
                try await browser.find("#add-member").click()
                let error = try await browser.waitFor(css: "#username-error")
                #expect(try await error.text() == "No user of this tenant is named adaa.")
                #expect(try await browser.find("#username").property("value", as: String.self) == "adaa")

                try await browser.find("#username").clear()
                try await browser.find("#username").type("ada")
                try await browser.find("#add-member").click()
                let member = try await browser.waitFor(css: "#member-\(ada) a")
                #expect(try await member.text() == "ada")
                #expect(try await browser.find("#group-member-count").text() == "1")
                try await CodeFlowBrowserTests.screenshot(browser, "console-group")

                try await member.click()
                let link = try await browser.waitFor(css: "#groups a#group-\(id)")
                #expect(try await link.text() == "VPN users")
                try await browser.find("nav a[href='/console/groups']").click()
                let row = try await browser.waitFor(css: "#group-\(id)-members")
                #expect(try await row.text() == "1")
                try await CodeFlowBrowserTests.screenshot(browser, "console-groups")
                let members = try await server.admin("GET", "/admin/v1/tenants/default/groups/\(id)/members")
                #expect((members["items"] as? [[String: any Sendable]])?.map { $0["user_id"] as? String } == [ada])

                // At phone width the list and the page are one column, no wider than the screen.
                try await browser.windowSize(width: 390, height: 844)
                for page in ["/console/groups", "/console/groups/\(id)"] {
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
