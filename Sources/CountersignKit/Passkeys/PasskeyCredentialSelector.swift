import Foundation

/// The app's part in a sign-in: it shows the key names of the passkeys the request matches
/// (even a single one, so the user sees which account signs in), lets the user choose, and
/// answers with the name chosen.
///
/// The app may show a name however it likes (split into name and date, localised, with an
/// icon), but must answer with one of the strings it was given, unchanged; any other answer
/// fails the sign-in with `PasskeyAuthenticatorError.unknownKeyName`. Answering nil cancels it
/// (`.cancelled`).
///
/// ```swift
/// struct AccountPicker: PasskeyCredentialSelector {
///     func selectCredential(keyNames: [String]) async -> String? {
///         await presentPicker(keyNames)   // the original string of the row tapped, or nil
///     }
/// }
/// let authenticator = PasskeyAuthenticator(store: store, selector: AccountPicker())
/// ```
public protocol PasskeyCredentialSelector: Sendable {
    /// Chooses one of `keyNames` (at least one, oldest credential first), or nil to cancel.
    func selectCredential(keyNames: [String]) async -> String?
}

/// How credentials are named to a selector: `"<display name> <registered time>"`, the time in
/// UTC as `yyyy-MM-dd HH:mm:ss`, e.g. `"Ada Lovelace 2025-03-14 09:26:53"`. The display name is
/// `user.displayName`, or `user.name` when the relying party left the display name empty.
///
/// Names are given over all of an RP's credentials, oldest first, so a credential keeps its
/// name whichever of them a sign-in offers. In the rare case that two of them would share a
/// name (same display name, registered within the same second), the later ones get ` (2)`,
/// ` (3)`, … appended, so that every answer names exactly one credential.
///
/// ```swift
/// let names = PasskeyKeyName.names(for: try await authenticator.credentials(rpID: "example.org"))
/// ```
public enum PasskeyKeyName {
    /// The name of `credential` before any disambiguation.
    public static func base(of credential: PasskeyCredential) -> String {
        let shown = credential.user.displayName.isEmpty ? credential.user.name : credential.user.displayName
        return shown + " " + registeredTime(credential.createdAt)
    }

    /// The names of `credentials` (of one RP, oldest first), in the same order, each unique.
    public static func names(for credentials: [PasskeyCredential]) -> [String] {
        var seen: [String: Int] = [:]
        return credentials.map { credential in
            let base = base(of: credential)
            let count = (seen[base] ?? 0) + 1
            seen[base] = count
            return count == 1 ? base : "\(base) (\(count))"
        }
    }

    /// `yyyy-MM-dd HH:mm:ss` in UTC, from fixed-width calendar fields rather than a locale's
    /// format, so that the name does not depend on the device's settings.
    static func registeredTime(_ date: Date) -> String {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC") ?? .gmt
        let parts = calendar.dateComponents([.year, .month, .day, .hour, .minute, .second], from: date)
        func two(_ value: Int?) -> String {
            let value = value ?? 0
            return value < 10 ? "0\(value)" : "\(value)"
        }
        return "\(parts.year ?? 0)-\(two(parts.month))-\(two(parts.day)) \(two(parts.hour)):\(two(parts.minute)):\(two(parts.second))"
    }
}
