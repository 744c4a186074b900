import CountersignCore
import CountersignKit
import Foundation
import Testing
@testable import CountersignServer

/// The account page in real Chromium, against the server listening on a free port, the phones
/// being SDK enrollments. With `COUNTERSIGN_SCREENSHOTS=1` the account page and the enrollment
/// page are saved to `docs/screenshots/` for the docs.
@Suite("Account pages in a browser", .serialized,
       .enabled(if: Browser.isAvailable, "Chromium and chromedriver are not installed (apt-get install chromium chromium-driver)"))
struct AccountBrowserTests {
    @Test("Sign in to the account page by approving on the phone, rename the phone, and enroll another by scanning the QR code")
    func manageYourPhonesFromTheAccountPage() async throws {
        try await TestServer.with(.sqlite) { server in
            let user = try await server.enrolledUser("alice")
            let phone = user.enrollment.deviceID
            let browser = try await Browser.start(width: 420, height: 900)
            do {
                try await browser.open(server.base + "/account")
                try await browser.waitFor(text: "Sign in")
                try await browser.signInByPhone(user)

                // The waiting page notices the approval by itself and lands on the account page.
                try await browser.waitForURL(where: { $0 == server.base + "/account" })
                try await browser.waitFor(text: "Your phones")
                #expect(try await browser.find("#device-\(phone) h3").text() == "alice's phone")
                try await Self.saveForDocs(try await browser.screenshot(), "account")

                let name = try await browser.find("#name-\(phone)")
                try await name.clear()
                try await name.type("Pixel 9")
                try await browser.find("#rename-\(phone)").click()
                try await browser.waitFor(text: "Phone renamed: Pixel 9")
                #expect(try await browser.find("#device-\(phone) h3").text() == "Pixel 9")

                try await browser.find("#enroll").click()
                try await browser.waitFor(css: "#qr")
                let shot = try await browser.screenshot()
                try await Self.saveForDocs(shot, "account-enroll")
                let shown = try await browser.find("#enrollment-uri").text()
                if ZXingReader.isAvailable {
                    let scanned = try await ZXingReader.decode([shot]).first?.first?.text
                    #expect(scanned == shown, "the QR code on the screen holds the URI the page shows")
                }
                let (kit, _) = server.authenticator()
                let enrollment = try await kit.enroll(uri: shown, deviceName: "Work phone", platform: .android)

                // The enrollment page notices the new phone by itself and goes back to the account.
                try await browser.waitForURL(where: { $0 == server.base + "/account" }, timeout: .seconds(30))
                try await browser.waitFor(css: "#device-\(enrollment.deviceID)")
                #expect(try await browser.find("#device-\(enrollment.deviceID) h3").text() == "Work phone")
            } catch {
                await Self.keepFailure(browser)
                await browser.quit()
                throw error
            }
            await browser.quit()
        }
    }

    /// Saves `png` to `docs/screenshots/<name>.png` when `COUNTERSIGN_SCREENSHOTS=1`.
    static func saveForDocs(_ png: Data, _ name: String) async throws {
        guard ProcessInfo.processInfo.environment["COUNTERSIGN_SCREENSHOTS"] == "1" else { return }
        let folder = BuildProducts.packageRoot.appendingPathComponent("docs/screenshots")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        try png.write(to: folder.appendingPathComponent("\(name).png"))
    }

    /// Keeps what the browser showed when the test failed, and says where.
    static func keepFailure(_ browser: Browser) async {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("account-failure-\(UUID().uuidString).png").path
        if (try? await browser.saveScreenshot(to: path)) != nil { print("AccountBrowserTests: the failing page is in \(path)") }
    }
}
