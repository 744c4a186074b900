import CountersignKit
import Foundation
import Testing
@testable import CountersignServer

/// The way in for a person who only knows the server's address, in real Chromium.
@Suite("Landing page in a browser", .serialized,
       .enabled(if: Browser.isAvailable, "Chromium and chromedriver are not installed (apt-get install chromium chromium-driver)"))
struct LandingBrowserTests {
    @Test("A person opens the server's address, goes to sign in, mistypes their username, tries another and ends on their account page")
    func personSignsInFromTheLandingPageAfterAMistypedUsername() async throws {
        try await TestServer.with(.sqlite) { server in
            let alice = try await server.enrolledUser("alice")
            try await Browser.session(width: 1280, height: 900) { browser in
                try await browser.open(server.base + "/")
                try await browser.waitFor(css: "#landing-heading")
                #expect(try await browser.find("#landing-heading").text() == "Welcome to Default")
                try await browser.find("#account").click()
                try await browser.waitFor(css: "#username").type("alcie")
                try await browser.find("#continue").click()
                try await browser.waitFor(text: "No phone to ask")
                try await browser.find("#another-username").click()
                let field = try await browser.waitFor(css: "#username")
                #expect(try await field.property("value", as: String.self) == "", "the form starts empty")
                try await field.type("alice")
                try await browser.find("#continue").click()
                try await browser.waitFor(text: "Approve on your phone")
                let request = try #require(try await alice.kit.pendingRequests().first)
                _ = try await alice.kit.approve(try await alice.kit.details(for: request))
                try await browser.waitFor(text: "Your account")
                #expect(try await browser.currentURL().hasSuffix("/account"))
            }
        }
    }
}
