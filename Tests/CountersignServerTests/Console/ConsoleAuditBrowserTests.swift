import CountersignKit
import Foundation
import Testing
@testable import CountersignServer

/// The console's audit log in real Chromium, at the width of a laptop's screen.
@Suite("Console audit log in a browser", .serialized,
       .enabled(if: Browser.isAvailable, "Chromium and chromedriver are not installed (apt-get install chromium chromium-driver)"))
struct ConsoleAuditBrowserTests {
    @Test("An administrator reads the audit log at 1280 px: each action on one line, nothing cut off, and who acted named and linked: the user who signed in, the phone that approved (to its user's page), the client that took the tokens")
    func administratorReadsTheAuditLogAtLaptopWidth() async throws {
        try await TestServer.with(.sqlite) { server in
            let admin = try await server.enrolledUser("root")
            #expect(try await server.admin(
                "PUT", "/admin/v1/tenants/default/users/\(admin.userID)/console-role", json: ["role": "system-admin"]).status == 200)
            let carol = try await server.enrolledUser("carol")
            let client = try await server.createClient(name: "Online banking")
            try await Browser.session(width: 1280, height: 900) { browser in
                try await browser.open(server.base + "/console")
                try await browser.waitFor(css: "#username").type("root")
                try await browser.find("#continue").click()
                try await browser.waitFor(text: "Approve on your phone")
                let request = try #require(try await admin.kit.pendingRequests().first)
                _ = try await admin.kit.approve(try await admin.kit.details(for: request))
                try await browser.waitFor(text: "Signed in as root")
                // The bank asks Carol's phone, the phone approves, the bank takes its tokens.
                let authReqID = try await server.startApproval(client, user: "carol")
                let pending = try #require(try await carol.kit.pendingRequests().first)
                _ = try await carol.kit.approve(try await carol.kit.details(for: pending))
                #expect(try await server.token(client, authReqID).status == 200)

                try await browser.open(server.base + "/console/audit")
                try await browser.waitFor(text: "console.signed_in")

                // Every time and action reads on one line, and no cell is wider than its column.
                let brokenActions: [String] = try await browser.execute(script: """
                    return Array.from(document.querySelectorAll("#events td.when span, #events td.action code")).filter(function (text) {
                      var range = document.createRange(); range.selectNodeContents(text);
                      return range.getClientRects().length > 1 || text.parentNode.scrollWidth > text.parentNode.clientWidth + 1;
                    }).map(function (text) { return text.textContent; });
                    """)
                #expect(brokenActions.isEmpty, "times or actions broken over lines or cut off: \(brokenActions)")
                let cutCells: [String] = try await browser.execute(script: """
                    return Array.from(document.querySelectorAll("#events td")).filter(function (cell) {
                      return cell.scrollWidth > cell.clientWidth + 1;
                    }).map(function (cell) { return cell.textContent; });
                    """)
                #expect(cutCells.isEmpty, "cells cut off: \(cutCells)")
                let fits: Bool = try await browser.execute(script: """
                    var table = document.getElementById("events").getBoundingClientRect();
                    var main = document.querySelector("main.page").getBoundingClientRect();
                    return table.right <= main.right + 1 && document.documentElement.scrollWidth <= window.innerWidth + 1;
                    """)
                #expect(fits, "the table is wider than the page")

                // Who acted, by name, each linked to their page.
                let signedIn = try await browser.find("a.actor[href='/console/users/\(admin.userID)']")
                #expect(try await signedIn.text() == "root")
                let phone = try await browser.find("a.actor[href='/console/users/\(carol.userID)#device-\(carol.enrollment.deviceID)']")
                #expect(try await phone.text() == "carol's phone")
                let asker = try await browser.find("a.actor[href='/console/clients/\(client.id)']")
                #expect(try await asker.text() == "Online banking")
                #expect(try await !browser.bodyText().contains("device:\(carol.enrollment.deviceID)"), "no raw actor id is shown")
                // The phone's link opens its user's page, at the phone.
                try await phone.click()
                try await browser.waitFor(text: "carol's phone")
                #expect(try await browser.find("#user-heading").text() == "carol")
            }
        }
    }
}
