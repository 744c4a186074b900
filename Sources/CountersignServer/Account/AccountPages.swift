import CountersignCore
import Foundation

/// `account`: who is signed in, their phones with a form for each change, what happened
/// recently, and the ways out. Every form carries the session's CSRF token.
struct AccountPage: PageModel {
    let title = "Your account"
    let tenantName: String
    /// The tenant's base path (`""` or `/t/<slug>`), where the forms post.
    let base: String
    let csrf: String
    let username: String
    let displayName: String?
    let devices: [DeviceCard]
    let activity: [ActivityEntry]
    /// When the user reported a request, new ones are refused until this time.
    let requestsPausedUntil: String?
    /// The user's passkeys, when the tenant offers passkeys (nil: the section is not shown).
    let passkeys: PasskeySection?
    /// The script of the passkey section, where it is shown. Stored, not computed: Mustache
    /// reads stored properties only.
    let script: String?
    let recoveryCodes: RecoveryCodesSection
    /// The browsers that may sign the user in without the phone; nil when there are none.
    var rememberedBrowsers: RememberedBrowserSection? = nil

    init(tenantName: String, base: String, csrf: String, username: String, displayName: String?, devices: [DeviceCard],
         activity: [ActivityEntry], requestsPausedUntil: String?, passkeys: PasskeySection? = nil,
         recoveryCodes: RecoveryCodesSection = RecoveryCodesSection(nil)) {
        self.recoveryCodes = recoveryCodes
        self.tenantName = tenantName
        self.base = base
        self.csrf = csrf
        self.username = username
        self.displayName = displayName
        self.devices = devices
        self.activity = activity
        self.requestsPausedUntil = requestsPausedUntil
        self.passkeys = passkeys
        script = passkeys == nil ? nil : "passkey.js"
    }
}

/// The account page's remembered browsers.
struct RememberedBrowserSection: Sendable {
    let items: [RememberedBrowserCard]
}

/// One remembered browser on the account page: what it was remembered in, where, and until when.
struct RememberedBrowserCard: Sendable {
    let id: String
    /// The browser and system, read from its User-Agent (`BrowserName`), or "A browser".
    let name: String
    let ipAddress: String
    let createdAt: String
    let lastUsedAt: String
    let expiresAt: String
    let isThisBrowser: Bool

    init(_ browser: RememberedBrowser, isThisBrowser: Bool) {
        id = browser.id
        name = browser.userAgent.flatMap(BrowserName.describe) ?? "A browser"
        ipAddress = browser.ipAddress ?? "an unknown address"
        createdAt = AccountTime.text(browser.createdAt)
        lastUsedAt = AccountTime.text(browser.lastUsedAt)
        expiresAt = AccountTime.text(browser.expiresAt)
        self.isThisBrowser = isThisBrowser
    }
}

/// One phone on the account page.
struct DeviceCard: Sendable {
    let id: String
    let name: String
    let platform: String
    let factors: String
    let enrolledAt: String
    let lastUsedAt: String?
    let push: String
    let pushValid: Bool
    /// What the rename field holds: the name, or what was typed when it was refused.
    let nameInput: String
    let nameError: String?

    init(_ device: Device, typed: String? = nil, nameError: String? = nil) {
        id = device.id
        name = device.name
        platform = Self.platformName(device.platform)
        let factors = device.enrolledFactors
        let names = [factors.pin ? "PIN" : nil, factors.biometric ? "biometrics" : nil,
                     factors.totp ? "one-time codes" : nil].compactMap { $0 }
        self.factors = names.isEmpty ? "approval only" : "approval, " + names.joined(separator: ", ")
        enrolledAt = AccountTime.text(device.createdAt)
        lastUsedAt = device.lastSeenAt.map(AccountTime.text)
        (push, pushValid) = Self.pushState(device)
        nameInput = typed ?? device.name
        self.nameError = nameError
    }

    static func platformName(_ platform: DevicePlatform) -> String {
        switch platform {
        case .ios: "iOS"
        case .ipados: "iPadOS"
        case .macos: "macOS"
        case .android: "Android"
        case .linux: "Linux"
        case .windows: "Windows"
        case .other: "Other"
        }
    }

    /// How the phone is told of a new request, and whether that still works.
    static func pushState(_ device: Device) -> (String, Bool) {
        guard let push = device.push else { return ("none: the app looks for requests itself", true) }
        let provider = switch push.provider {
        case .apns: "Apple Push Notification service"
        case .fcm: "Firebase Cloud Messaging"
        }
        guard device.pushTokenValid else {
            return ("\(provider): the token was refused" + (device.pushTokenError.map { " (\($0))" } ?? "")
                + "; open the app on the phone to renew it", false)
        }
        return ("\(provider), token valid", true)
    }
}

/// One line of the recent activity.
struct ActivityEntry: Sendable {
    let id: String
    let label: String
    let time: String
    /// RFC 3339, for `<time datetime>`.
    let timestamp: String
    /// The binding message the request showed on the phone, for an answer to one.
    let message: String?
    /// Why a request was denied, in words (`AccountActivity.denial`).
    let denial: String?
    let client: String?
    let ipAddress: String?
    /// The request an approval names, when it can still be reported as not requested.
    let reportableApproval: String?
    let reported: Bool
}

/// `account-remove`: removing the only phone, asked once more.
struct RemoveConfirmationPage: PageModel {
    let title = "Remove your only phone?"
    let tenantName: String
    let script: String? = nil
    let base: String
    let csrf: String
    let deviceID: String
    let deviceName: String
}

/// `account-enroll`: the QR code and URI of a fresh enrollment ticket, waiting for the phone.
struct EnrollPage: PageModel {
    let title = "Enroll a new phone"
    let tenantName: String
    let script: String? = PageAssets.enrollScript
    let base: String
    let csrf: String
    /// The ticket's id, which the wait asks about (its secret is only in the URI).
    let ticket: String
    /// `data:image/png;base64,…`
    let qrImage: String
    let enrollmentURI: String
    let expiresAt: String
}

/// `account-reported`: what "This wasn't me" did.
struct ReportedPage: PageModel {
    let title = "Reported"
    let tenantName: String
    let script: String? = nil
    let base: String
    let heading: String
    let message: String
}

/// Times as the account pages show them: to the minute, in UTC, which the pages say.
enum AccountTime {
    static func text(_ date: Date) -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "yyyy-MM-dd HH:mm 'UTC'"
        return formatter.string(from: date)
    }
}

/// The passkeys section of the account page.
struct PasskeySection: Sendable {
    let items: [PasskeyCard]
}

/// One passkey on the account page.
struct PasskeyCard: Sendable {
    let id: String
    let name: String
    let kind: String
    let createdAt: String
    let lastUsedAt: String?
    let cloneWarning: String?
    let nameInput: String
    let nameError: String?

    init(_ passkey: Passkey, typed: String? = nil, nameError: String? = nil) {
        id = passkey.id
        name = passkey.name
        kind = passkey.backupEligible
            ? "Synced passkey: kept in your password manager or cloud account"
            : "Device-bound passkey: kept on one device or security key"
        createdAt = AccountTime.text(passkey.createdAt)
        lastUsedAt = passkey.lastUsedAt.map(AccountTime.text)
        cloneWarning = passkey.cloneWarningAt.map(AccountTime.text)
        nameInput = typed ?? passkey.name
        self.nameError = nameError
    }
}

/// The recovery codes section of the account page: whether the user has a set, never the codes.
struct RecoveryCodesSection: Sendable {
    /// "7 of 10 unused, made 2026-12-05 18:40 UTC", or nil without a set.
    let summary: String?
    let lastUsedAt: String?
    /// Every code of the set was used.
    let exhausted: Bool

    init(_ set: RecoveryCodeSet?) {
        summary = set.map { "\($0.remaining) of \($0.total) unused, made \(AccountTime.text($0.createdAt))" }
        lastUsedAt = set?.lastUsedAt.map(AccountTime.text)
        exhausted = set?.remaining == 0
    }
}

/// `account-recovery-codes`: a new set of recovery codes, shown this once, with a link that
/// saves them as a text file.
struct RecoveryCodesPage: PageModel {
    let title = "Your recovery codes"
    let tenantName: String
    let script: String? = nil
    let base: String
    let codes: [String]
    /// A `data:text/plain` URL of the codes, for the download link.
    let download: String
    let fileName: String
}

/// `account-recovery`: the account page of a session opened with a recovery code or an access
/// pass: enroll a phone, add a passkey, or sign out.
struct RecoveryAccountPage: PageModel {
    let title = "Your account"
    let tenantName: String
    let base: String
    let csrf: String
    let username: String
    /// "a recovery code" or "a temporary access pass".
    let how: String
    /// How many phones the user has enrolled (the lost one among them).
    let phones: Int
    /// Whether the tenant offers passkeys, and so the passkey button.
    let passkeys: Bool
    let endsAt: String
    let script: String?

    init(tenantName: String, base: String, csrf: String, username: String, how: String, phones: Int, passkeys: Bool,
         endsAt: String) {
        self.tenantName = tenantName
        self.base = base
        self.csrf = csrf
        self.username = username
        self.how = how
        self.phones = phones
        self.passkeys = passkeys
        self.endsAt = endsAt
        script = passkeys ? "passkey.js" : nil
    }
}
