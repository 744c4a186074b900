import CountersignMail
import Foundation

/// Queues a tenant's mail in the caller's transaction: nothing when the tenant has no mail
/// settings or the person no address a message can go to, else one row of `mail_outbox`,
/// rendered from the tenant's template with the tenant's and the person's names. The dispatcher
/// finds it within its poll interval, at once when `wakeup` is signalled.
///
/// ```swift
/// try await database.transaction { executor in
///     … // the change the message tells of
///     try await TenantMail.queue(.deviceAdded, toUser: user.id, tenantID: tenant.id,
///                                values: ["name": device.name, "time": MailText.time(now)], at: now, on: executor)
/// }
/// ```
enum TenantMail {
    /// Queues `kind` to a user of the tenant at the user's address; returns the message's id, or
    /// nil when nothing was queued.
    /// A tenant without mail settings costs one lookup by primary key.
    @discardableResult
    static func queue(_ kind: MailKind, toUser userID: String, tenantID: String, values: [String: String],
                      at date: Date, wakeup: PushWakeup? = nil, on executor: any SQLExecutor) async throws -> String? {
        guard let settings = try await SQLMailRepository().settings(tenantID: tenantID, on: executor)?.settings,
              let user = try await SQLUserRepository().find(id: userID, tenantID: tenantID, on: executor),
              let address = user.email else { return nil }
        let people = ["user": user.displayName ?? user.username, "username": user.username]
        return try await queue(kind, to: address, name: user.displayName, userID: user.id, tenantID: tenantID,
                               values: values.merging(people) { $1 }, settings: settings, at: date, wakeup: wakeup,
                               on: executor)
    }

    /// Queues `kind` to `address`; returns the message's id, or nil when the tenant has no mail
    /// settings, or the address cannot be mailed (`MailAddress`).
    @discardableResult
    static func queue(_ kind: MailKind, to address: String, name: String?, userID: String?, tenantID: String,
                      values: [String: String], at date: Date, wakeup: PushWakeup? = nil,
                      on executor: any SQLExecutor) async throws -> String? {
        guard let settings = try await SQLMailRepository().settings(tenantID: tenantID, on: executor)?.settings else {
            return nil
        }
        return try await queue(kind, to: address, name: name, userID: userID, tenantID: tenantID, values: values,
                               settings: settings, at: date, wakeup: wakeup, on: executor)
    }

    private static func queue(_ kind: MailKind, to address: String, name: String?, userID: String?, tenantID: String,
                              values: [String: String], settings: MailSettings, at date: Date, wakeup: PushWakeup?,
                              on executor: any SQLExecutor) async throws -> String? {
        guard let tenant = try await SQLTenantRepository().find(id: tenantID, on: executor),
              (try? MailAddress(address)) != nil else { return nil }
        let rendered = try settings.template(kind).render(values.merging(["tenant": tenant.displayName]) { $1 })
        let id = Identifier.make("mail", at: date)
        try await SQLMailRepository().enqueue(
            MailOutboxEntry(
                id: id, tenantID: tenantID, kind: kind, userID: userID, recipient: address, recipientName: name,
                sender: settings.fromAddress, senderName: settings.fromName ?? tenant.displayName,
                subject: String(rendered.subject.prefix(MailMessage.maximumSubjectLength)), body: rendered.text,
                status: .queued, attempts: 0, nextAttemptAt: date, lastError: nil, createdAt: date, updatedAt: date,
                sentAt: nil),
            on: executor)
        wakeup?.signal()
        return id
    }
}

/// How the values of a message read.
enum MailText {
    private static let formatter: DateFormatter = {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "d MMMM yyyy 'at' HH:mm 'UTC'"
        return formatter
    }()

    private static let lock = NSLock()

    /// `6 December 2026 at 00:40 UTC`.
    static func time(_ date: Date) -> String {
        lock.withLock { formatter.string(from: date) }
    }
}
