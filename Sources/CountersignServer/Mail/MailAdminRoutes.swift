import CountersignCore
import CountersignMail
import Foundation
import Hummingbird

extension MailError: APIFailure {
    /// A test message that did not go: the mail server is the gateway the answer is about.
    var apiError: APIError {
        APIError(.badGateway, DeviceErrorCode(rawValue: "mail_unavailable"), description)
    }
}

/// `/admin/v1/tenants/{tenant}/mail`: the tenant's mail settings, a test message, and the mail
/// it queued. Everything takes `mail:manage`, reading included (the settings name the SMTP
/// login, and the deliveries whom the tenant wrote to).
struct MailAdminRoutes: Sendable {
    let database: any Database
    let guardian: AdminGuard
    let sealer: SecretSealer
    let audit: AuditLog
    let client: SMTPClient
    let configuration: MailConfiguration
    let maximumBodySize: Int
    let now: @Sendable () -> Date

    private let repository = SQLMailRepository()

    /// The context the SMTP password is sealed under: a sealed password copied to another
    /// tenant's row does not open.
    static func sealingContext(tenantID: String) -> String { "mail-password:\(tenantID)" }

    /// The settings as the API shows them: never the password, only whether one is stored.
    struct SettingsView: Encodable, Sendable {
        let settings: MailSettings
        let passwordSet: Bool

        enum CodingKeys: String, CodingKey {
            case passwordSet = "password_set"
        }

        func encode(to encoder: any Encoder) throws {
            try settings.encode(to: encoder)
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(passwordSet, forKey: .passwordSet)
        }
    }

    struct TestRequest: Decodable, Sendable {
        var to: String?
    }

    struct TestResult: Encodable, Sendable {
        let sent: Bool
        let to: String
    }

    /// One message as the deliveries view shows it: never its text, which may carry an
    /// invitation's link.
    struct DeliveryRecord: Encodable, Sendable {
        let entry: MailOutboxEntry

        enum CodingKeys: String, CodingKey {
            case kind, to, subject
            case userID = "user_id"
        }

        func encode(to encoder: any Encoder) throws {
            try DeliveryAttempts(
                id: entry.id, status: entry.status.rawValue, attempts: entry.attempts, lastError: entry.lastError,
                createdAt: entry.createdAt, sentAt: entry.sentAt,
                nextAttemptAt: entry.status == .queued ? entry.nextAttemptAt : nil
            ).encode(to: encoder)
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(entry.kind, forKey: .kind)
            try container.encode(entry.recipient, forKey: .to)
            try container.encode(entry.subject, forKey: .subject)
            try container.encodeIfPresent(entry.userID, forKey: .userID)
        }
    }

    func register(on router: some RouterMethods<CountersignRequestContext>) {
        let base = "/admin/v1/tenants/{tenant}/mail"
        router.get(RouterPath(base)) { request, context in
            let (_, tenant) = try await guardian.tenant(request, context, holding: .mailManage)
            guard let (settings, sealed) = try await repository.settings(tenantID: tenant.id, on: database) else {
                throw AdminError.notFound("mail settings of this tenant")
            }
            return try JSON.response(SettingsView(settings: settings, passwordSet: sealed != nil))
        }
        router.put(RouterPath(base)) { request, context in
            let (key, tenant) = try await guardian.tenant(request, context, holding: .mailManage)
            let fields = try await request.decodeJSON(MailSettingsFields.self, limit: maximumBodySize)
            let existing = try await repository.settings(tenantID: tenant.id, on: database)
            let date = now()
            let (settings, password) = try fields.settings(
                tenantID: tenant.id, existing: existing?.settings, existingHasPassword: existing?.sealedPassword != nil, at: date)
            let change: MailPasswordChange = if let password {
                .set(try sealer.seal(Data(password.utf8), context: Self.sealingContext(tenantID: tenant.id)))
            } else {
                settings.username == nil ? .clear : .keep
            }
            try await database.transaction { executor in
                try await repository.save(settings, password: change, on: executor)
                var details = ["host": settings.host, "port": String(settings.port), "security": settings.security.rawValue,
                               "from_address": settings.fromAddress]
                if let username = settings.username { details["username"] = username }
                if password != nil { details["password"] = "set" }
                if !settings.templates.isEmpty {
                    details["templates"] = settings.templates.keys.map(\.rawValue).sorted().joined(separator: " ")
                }
                try await audit.record(
                    existing == nil ? "mail.settings_created" : "mail.settings_updated", actor: "admin-key:\(key.id)",
                    tenantID: tenant.id, target: ("tenant", tenant.id), details: details, at: date, on: executor)
            }
            let hasPassword = password != nil || (settings.username != nil && existing?.sealedPassword != nil)
            return try JSON.response(SettingsView(settings: settings, passwordSet: hasPassword),
                                     status: existing == nil ? .created : .ok)
        }
        router.delete(RouterPath(base)) { request, context in
            let (key, tenant) = try await guardian.tenant(request, context, holding: .mailManage)
            let date = now()
            let deleted = try await database.transaction { executor in
                guard try await repository.delete(tenantID: tenant.id, on: executor) else { return false }
                try await audit.record(
                    "mail.settings_deleted", actor: "admin-key:\(key.id)", tenantID: tenant.id, target: ("tenant", tenant.id),
                    at: date, on: executor)
                return true
            }
            guard deleted else { throw AdminError.notFound("mail settings of this tenant") }
            return Response(status: .noContent)
        }
        router.post(RouterPath(base + "/test")) { request, context in
            let (_, tenant) = try await guardian.tenant(request, context, holding: .mailManage)
            let body = try await request.decodeJSON(TestRequest.self, limit: maximumBodySize)
            guard let to = body.to else { throw AdminError.missingField("to") }
            return try JSON.response(try await test(tenant: tenant, to: to))
        }
        router.get(RouterPath(base + "/deliveries")) { request, context in
            let (_, tenant) = try await guardian.tenant(request, context, holding: .mailManage)
            let page = try PageRequest(request)
            let entries = try await repository.recent(
                tenantID: tenant.id, before: page.cursor, limit: page.fetchLimit, on: database)
            return try JSON.response(page.page(entries.map(DeliveryRecord.init), cursor: \.entry.id))
        }
    }

    /// Sends the test message at once, not through the outbox: the answer is the mail server's
    /// own (502 `mail_unavailable` with why), so that settings can be fixed while being set.
    private func test(tenant: Tenant, to: String) async throws -> TestResult {
        let recipient: MailAddress
        do {
            recipient = try MailAddress(to)
        } catch {
            throw AdminError.invalidField("to", "\(error)")
        }
        guard let (settings, sealed) = try await repository.settings(tenantID: tenant.id, on: database) else {
            throw AdminError.notFound("mail settings of this tenant")
        }
        let password = try sealed.map {
            String(decoding: try sealer.open($0, context: Self.sealingContext(tenantID: tenant.id)), as: UTF8.self)
        }
        let date = now()
        let rendered = try settings.template(.test).render(["tenant": tenant.displayName])
        let sender = try MailAddress(settings.fromAddress)
        let message = MailMessage(
            from: sender, fromName: settings.fromName ?? tenant.displayName, to: recipient, subject: rendered.subject,
            text: rendered.text, date: date, messageID: "\(Identifier.make("mail", at: date))@\(sender.domain)")
        try await client.send(message, via: settings.server(password: password, timeout: configuration.sendTimeout))
        return TestResult(sent: true, to: recipient.description)
    }
}
