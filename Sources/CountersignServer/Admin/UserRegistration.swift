import CountersignCore
import Foundation

/// The body of `POST` and `PATCH …/users`, and the rules of a user's fields: every member
/// optional here, `username` required on creation. Each refusal is `AdminError.invalidField`
/// naming the member and why.
struct UserRegistration: Decodable, Sendable {
    var username: String?
    var displayName: String?
    var status: String?
    /// Where mail to the user goes; on update an empty string removes it.
    var email: String?
    /// On update only: sets the user's code (CIBA `user_code`); an empty string removes it.
    var userCode: String?

    enum CodingKeys: String, CodingKey {
        case username, status, email
        case displayName = "display_name"
        case userCode = "user_code"
    }

    /// A new user of `tenantID` from these fields, created at `date`; active unless `status`
    /// says otherwise.
    func registered(id: String, tenantID: String, at date: Date) throws(AdminError) -> User {
        guard let username else { throw .missingField("username") }
        return User(
            id: id, tenantID: tenantID, username: try Self.username(username),
            displayName: try AdminFields.optionalName(displayName, field: "display_name"),
            status: try Self.status(status) ?? .active, email: try email.map { raw throws(AdminError) in try Self.email(raw) },
            createdAt: date, updatedAt: date)
    }

    /// `existing` with the fields given applied and checked, updated at `date`, and the user code
    /// to store: nil when none was sent, `.some(nil)` to remove it.
    func applied(to existing: User, at date: Date) throws -> (user: User, userCode: UserCode??) {
        var user = existing
        if let username { user.username = try Self.username(username) }
        if let displayName {
            user.displayName = displayName.isEmpty ? nil : try AdminFields.name(displayName, field: "display_name")
        }
        if let status = try Self.status(status) {
            user.status = status
            // An admin's choice: the source no longer enables a user an admin disabled.
            user.disabledBySource = false
        }
        if let email { user.email = email.isEmpty ? nil : try Self.email(email) }
        user.updatedAt = date
        let code = try userCode.map { raw -> UserCode? in raw.isEmpty ? nil : try UserCode(raw) }
        if let code {
            user.hasUserCode = code != nil
            user.userCodeLockedUntil = nil
        }
        return (user, code)
    }

    /// Usernames: 1–128 characters, no white space, and none that `NameCharacters` refuses.
    static func username(_ raw: String) throws(AdminError) -> String {
        guard (1...128).contains(raw.count), !raw.unicodeScalars.contains(where: \.properties.isWhitespace),
              !NameCharacters.refuses(raw) else {
            throw .invalidField("username", "1 to 128 characters without white space, control or format characters")
        }
        return raw
    }

    /// E-mail addresses: at most 254 characters (RFC 5321's path limit), one `@` between a local
    /// part of at most 64 and a domain without empty labels, no white space or control
    /// characters. Whether mail arrives is the mail server's to say; this keeps out what no mail
    /// server accepts.
    static func email(_ raw: String, field: String = "email") throws(AdminError) -> String {
        let parts = raw.split(separator: "@", omittingEmptySubsequences: false)
        guard raw.utf8.count <= 254, parts.count == 2, !parts[0].isEmpty, parts[0].utf8.count <= 64, !parts[1].isEmpty,
              !parts[1].hasPrefix("."), !parts[1].hasSuffix("."), !parts[1].contains(".."),
              !raw.unicodeScalars.contains(where: \.properties.isWhitespace), !NameCharacters.refuses(raw) else {
            throw .invalidField(field, "must be an e-mail address such as ada@example.com (at most 254 characters)")
        }
        return raw
    }

    static func status(_ raw: String?) throws(AdminError) -> User.Status? {
        guard let raw else { return nil }
        guard let status = User.Status(rawValue: raw) else { throw .invalidField("status", "must be active or disabled") }
        return status
    }
}
