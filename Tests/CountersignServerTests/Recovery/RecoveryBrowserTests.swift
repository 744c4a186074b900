import CountersignCore
import CountersignKit
import Foundation
import Testing
@testable import CountersignServer

/// Recovery in Chromium: alice makes recovery codes on her account page, loses her phone, and in
/// a second browser profile signs in with a code and enrolls a new phone by its QR code; the
/// recovery session shows nothing else.
@Suite("Recovery in a browser",
       .enabled(if: Browser.isAvailable, "Chromium and chromedriver are not installed (apt-get install chromium chromium-driver)"))
struct RecoveryBrowserTests {
    @Test("Make recovery codes, lose the phone, sign in with a code in another browser and enroll a new phone")
    func lostPhoneInABrowser() async throws {
        try await TestServer.with(.sqlite) { server in
            let user = try await server.enrolledUser("alice")
            var codes: [String] = []
            let first = try await Browser.start(width: 420, height: 900)
            do {
                try await first.open(server.base + "/account")
                try await first.waitFor(text: "Sign in")
                try await first.signInByPhone(user)
                try await first.waitFor(text: "Your phones")
                #expect(try await first.find("#no-recovery-codes").text().contains("No recovery codes"))
                try await first.find("#create-recovery-codes").click()
                try await first.waitFor(css: "#recovery-codes")
                for element in try await first.findAll("#recovery-codes code") { codes.append(try await element.text()) }
                #expect(codes.count == 10)
                let download = try await first.find("#download-codes")
                #expect(try await download.attribute("download") == "recovery-codes-default.txt")
                #expect(try await download.attribute("href")?.hasPrefix("data:text/plain;charset=utf-8,") == true)
                try await AccountBrowserTests.saveForDocs(try await first.screenshot(), "account-recovery-codes")
                try await first.find("#back-to-account").click()
                try await first.waitFor(css: "#recovery-summary")
                #expect(try await first.find("#recovery-summary").text().hasPrefix("10 of 10 unused"))
            } catch {
                await AccountBrowserTests.keepFailure(first)
                await first.quit()
                throw error
            }
            await first.quit()

            // The phone is lost. Another browser, another profile: no cookie of the first.
            let second = try await Browser.start(width: 420, height: 900)
            do {
                try await second.open(server.base + "/account")
                try await second.waitFor(text: "Sign in")
                try await second.find("#lost-phone a").click()
                try await second.waitFor(text: "Sign in without your phone")
                try await second.find("#username").type("alice")
                try await second.find("#code").type("not-a-code")
                try await second.find("#recover").click()
                try await second.waitFor(css: "#code-error")
                #expect(try await second.find("#code-error").text().hasPrefix("This is neither a recovery code"))
                #expect(try await second.find("#username").attribute("value") == "alice", "the username stays")
                try await second.find("#code").type(codes[2].uppercased().replacingOccurrences(of: "-", with: " "))
                try await second.find("#recover").click()
                try await second.waitFor(css: "#recovery-only")
                #expect(try await second.find("#username").text() == "alice")
                #expect(try await second.findAll("form[action$='/rename']").isEmpty)
                try await AccountBrowserTests.saveForDocs(try await second.screenshot(), "account-recovery")

                try await second.find("#enroll").click()
                try await second.waitFor(css: "#qr")
                let uri = try await second.find("#enrollment-uri").text()
                let (kit, _) = server.authenticator()
                let enrollment = try await kit.enroll(uri: uri, deviceName: "New phone", platform: .android)
                // The enrollment page notices the new phone and goes back to the account page,
                // which still offers only enrollment.
                try await second.waitForURL(where: { $0 == server.base + "/account" }, timeout: .seconds(30))
                try await second.waitFor(css: "#recovery-only")
                let devices = try await SQLDeviceRepository().list(userID: user.userID, after: nil, limit: 10, on: server.database)
                #expect(devices.map(\.id).contains(enrollment.deviceID) && devices.count == 2)
            } catch {
                await AccountBrowserTests.keepFailure(second)
                await second.quit()
                throw error
            }
            await second.quit()
        }
    }
}
