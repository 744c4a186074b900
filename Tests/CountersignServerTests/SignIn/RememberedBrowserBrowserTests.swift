import CountersignCore
import CountersignKit
import Foundation
import Testing
@testable import CountersignServer

/// Remembered browsers in Chromium, with WebCrypto and IndexedDB for real: alice ticks "Remember
/// this browser" while her phone approves, signs in again without a push, and her cookie copied
/// into a second browser profile (which lacks the key) gets only a request to her phone.
@Suite("Remembered browsers in a browser",
       .enabled(if: Browser.isAvailable, "Chromium and chromedriver are not installed (apt-get install chromium chromium-driver)"))
struct RememberedBrowserBrowserTests {
    static func signIn(_ browser: Browser, _ server: TestServer) async throws {
        try await browser.open(server.base + "/account")
        try await browser.waitFor(text: "Sign in")
        try await browser.find("#username").type("alice")
        try await browser.find("#continue").click()
    }

    @Test("Remember this browser, sign in again without a push; the cookie copied into another profile only asks the phone")
    func rememberedAndCopied() async throws {
        try await TestServer.with(.sqlite) { server in
            try await server.setPolicy(["remembered_browser_days": 30])
            let user = try await server.enrolledUser("alice")
            let first = try await Browser.start(width: 420, height: 900)
            var copied = ""
            do {
                try await Self.signIn(first, server)
                try await first.waitFor(text: "Approve on your phone")
                try await first.find("#remember").click()
                try await first.approveOnThePhone(user)
                try await first.waitFor(text: "Your phones")
                try await first.waitFor(text: "Remembered browsers")
                #expect(try await first.bodyText().contains("(this browser)"))
                let cookies = try await first.cookies()
                let remembered = try #require(cookies.first { $0.name == "countersign-remembered" })
                #expect(remembered.httpOnly && remembered.sameSite == "Lax")

                // The session ends; the next sign-in signs the challenge with the stored key.
                try await first.deleteCookie("countersign-session")
                try await Self.signIn(first, server)
                try await first.waitFor(text: "Your phones", timeout: .seconds(20))
                #expect(try await user.kit.pendingRequests().isEmpty, "no push was sent")
                let rotated = try #require(try await first.cookies().first { $0.name == "countersign-remembered" })
                #expect(rotated.value != remembered.value, "the cookie got a new token")
                copied = rotated.value
            } catch {
                await AccountBrowserTests.keepFailure(first)
                await first.quit()
                throw error
            }
            await first.quit()

            // Another profile with the cookie and without the key: the phone is asked.
            let second = try await Browser.start(width: 420, height: 900)
            do {
                try await second.open(server.base + "/")
                try await second.addCookie("countersign-remembered", copied)
                try await Self.signIn(second, server)
                try await second.waitFor(text: "Approve on your phone", timeout: .seconds(20))
                #expect(try await user.kit.pendingRequests().count == 1, "the copy gets only a request to the phone")
            } catch {
                await AccountBrowserTests.keepFailure(second)
                await second.quit()
                throw error
            }
            await second.quit()
        }
    }
}
