import CountersignMail
import Foundation
import Mustache

/// What a tenant's mail is about. Each has a default template, which a tenant may replace.
public enum MailKind: String, Sendable, Codable, CaseIterable, CodingKeyRepresentable {
    /// An enrollment invitation sent from the console or `POST …/enrollment-tickets`.
    case invitation
    case deviceAdded = "device_added"
    case passkeyAdded = "passkey_added"
    case recoveryCodeUsed = "recovery_code_used"
    case accessPassUsed = "access_pass_used"
    /// A temporary access pass was issued for the user (never the pass itself).
    case accessPassIssued = "access_pass_issued"
    /// `POST …/mail/test`.
    case test
}

/// A subject and a plain-text body, both Mustache templates without HTML escaping.
public struct MailTemplate: Sendable, Equatable, Codable {
    public var subject: String
    public var text: String

    public init(subject: String, text: String) {
        self.subject = subject
        self.text = text
    }

    /// Renders both with `values`: the subject on one line (line breaks and other controls
    /// become spaces, so that a value cannot start a header).
    func render(_ values: [String: String]) throws -> (subject: String, text: String) {
        let rendered = try Self.template(subject).render(values)
        let subject = String(String.UnicodeScalarView(rendered.unicodeScalars.map { scalar in
            scalar.properties.generalCategory == .control ? " " : scalar
        })).trimmingCharacters(in: .whitespaces)
        let text = try Self.template(text).render(values)
        return (subject, text)
    }

    /// Mustache, with `{{name}}` not HTML-escaped: the text is mail, not a page.
    static func template(_ source: String) throws -> MustacheTemplate {
        try MustacheTemplate(string: "{{% CONTENT_TYPE: TEXT}}" + source)
    }

    /// The templates a tenant starts with (in English), each naming the tenant.
    static let defaults: [MailKind: MailTemplate] = [
        .invitation: MailTemplate(
            subject: "Set up sign-in approvals for {{tenant}}",
            text: """
                Hello {{user}},

                You are invited to approve your sign-ins to {{tenant}} with your phone.

                Open this link on a computer and scan the QR code it shows with the authenticator app, or open it on the phone that has the app:

                {{invitation_url}}

                The link works once, until {{expires}}. If you did not expect this message, ignore it.

                """),
        .deviceAdded: MailTemplate(
            subject: "A new device was added to your {{tenant}} account",
            text: """
                Hello {{user}},

                A new device, “{{name}}”, was added to your {{tenant}} account on {{time}}{{#ip}} from {{ip}}{{/ip}}.

                If this was you, there is nothing to do. If it was not, answer “Not me” on the notice your other devices received, or tell your administrator now.

                """),
        .passkeyAdded: MailTemplate(
            subject: "A new passkey was added to your {{tenant}} account",
            text: """
                Hello {{user}},

                A new passkey, “{{name}}”, was added to your {{tenant}} account on {{time}}{{#ip}} from {{ip}}{{/ip}}.

                If this was you, there is nothing to do. If it was not, answer “Not me” on the notice your devices received, or tell your administrator now.

                """),
        .recoveryCodeUsed: MailTemplate(
            subject: "A recovery code was used for your {{tenant}} account",
            text: """
                Hello {{user}},

                One of your recovery codes was used to sign in to your {{tenant}} account on {{time}}{{#ip}} from {{ip}}{{/ip}}. It signs in only to the account page, to add a device or a passkey.

                If this was you, there is nothing to do. If it was not, answer “Not me” on the notice your devices received, or tell your administrator now.

                """),
        .accessPassUsed: MailTemplate(
            subject: "A temporary access pass was used for your {{tenant}} account",
            text: """
                Hello {{user}},

                A temporary access pass was used to sign in to your {{tenant}} account on {{time}}{{#ip}} from {{ip}}{{/ip}}. It signs in only to the account page, to add a device or a passkey.

                If this was you, there is nothing to do. If it was not, answer “Not me” on the notice your devices received, or tell your administrator now.

                """),
        .accessPassIssued: MailTemplate(
            subject: "A temporary access pass was issued for your {{tenant}} account",
            text: """
                Hello {{user}},

                An administrator of {{tenant}} issued a temporary access pass for your account. It can be used from {{starts}} until {{expires}}{{#one_time}}, once{{/one_time}}, to sign in to the account page and add a device or a passkey. The pass itself is not in this message: the administrator gives it to you.

                If you did not ask for one, tell your administrator now.

                """),
        .test: MailTemplate(
            subject: "Test message from {{tenant}}",
            text: """
                Hello,

                This message was sent to check {{tenant}}'s mail settings. They work.

                """),
    ]
}

/// A tenant's mail settings: the SMTP server its mail goes through, the login (its password is
/// sealed apart and never shown), the sender, and the templates that replace the defaults.
public struct MailSettings: Sendable, Equatable, Codable {
    public var tenantID: String
    public var host: String
    public var port: Int
    public var security: SMTPServer.Security
    public var username: String?
    /// PEM certificates to trust for the server's, instead of the system's roots.
    public var caCertificate: String?
    public var fromAddress: String
    public var fromName: String?
    public var templates: [MailKind: MailTemplate]
    public var createdAt: Date
    public var updatedAt: Date

    enum CodingKeys: String, CodingKey, CaseIterable {
        case host, port, security, username, templates
        case tenantID = "tenant_id"
        case caCertificate = "ca_certificate"
        case fromAddress = "from_address"
        case fromName = "from_name"
        case createdAt = "created_at"
        case updatedAt = "updated_at"
    }

    /// The template of `kind`: the tenant's, or the default.
    func template(_ kind: MailKind) -> MailTemplate {
        templates[kind] ?? MailTemplate.defaults[kind]!
    }

    /// The server as the SMTP client is given it, with the opened password.
    func server(password: String?, timeout: Duration) -> SMTPServer {
        SMTPServer(host: host, port: port, security: security, username: username, password: password,
                   caCertificates: caCertificate, heloName: "countersign", timeout: timeout)
    }
}

/// How mail is sent. Whether this node sends follows the push dispatch switch
/// (`PushConfiguration.dispatch`), as webhook events do.
public struct MailConfiguration: Sendable {
    /// One whole SMTP exchange, connecting to the server's answer to the message.
    public var sendTimeout: Duration = .seconds(30)
    /// How often an idle dispatcher looks for mail queued by other nodes or due for a retry.
    public var pollInterval: Duration = .seconds(1)
    /// Attempts per message before it is recorded as failed: with the delays below, a mail
    /// server may be down for about a day before a message is given up.
    public var maximumAttempts = 30
    /// The first retry delay; each later one doubles, up to `maximumRetryDelay`.
    public var retryDelay: TimeInterval = 5
    public var maximumRetryDelay: TimeInterval = 3_600
    /// Messages claimed, and sent concurrently, at once.
    public var batchSize = 8
    /// How long a claimed message is leased: longer than a send can take.
    public var lease: TimeInterval = 120

    public init() {}

    /// The delay before attempt `attempts + 1`.
    func retryDelay(afterAttempts attempts: Int) -> TimeInterval {
        min(maximumRetryDelay, retryDelay * pow(2, Double(max(0, attempts - 1))))
    }
}
