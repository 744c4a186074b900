import CountersignCore
import CountersignMail
import Foundation

/// The body of `PUT …/mail`: the whole of a tenant's mail settings. Each refusal is
/// `AdminError.invalidField` naming the member (`templates.device_added.subject`) and why.
struct MailSettingsFields: Decodable, Sendable {
    var host: String?
    var port: Int?
    var security: String?
    var username: String?
    var password: String?
    var caCertificate: String?
    var fromAddress: String?
    var fromName: String?
    var templates: [String: MailTemplate]?

    enum CodingKeys: String, CodingKey {
        case host, port, security, username, password, templates
        case caCertificate = "ca_certificate"
        case fromAddress = "from_address"
        case fromName = "from_name"
    }

    /// The longest template text, in bytes.
    static let maximumTextLength = 20_000

    /// The settings these fields describe for `tenantID` at `date`, and what becomes of the
    /// stored password.
    func settings(tenantID: String, existing: MailSettings?, existingHasPassword: Bool, at date: Date)
        throws(AdminError) -> (MailSettings, password: String?) {
        guard let host, !host.isEmpty else { throw .missingField("host") }
        guard host.utf8.count <= 253, host.utf8.allSatisfy({ byte in
            (0x30...0x39).contains(byte) || (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte)
                || byte == 0x2D || byte == 0x2E || byte == 0x3A
        }) else {
            throw .invalidField("host", "must be a host name or an IP address (no scheme, no port)")
        }
        guard let securityName = security else { throw .missingField("security") }
        guard let security = SMTPServer.Security(rawValue: securityName) else {
            throw .invalidField("security", "must be tls (port 465), starttls (port 587) or plain")
        }
        if security == .plain, !DirectoryFields.isLoopback(host) {
            throw .invalidField("security", "plain sends mail and passwords unencrypted, so it is allowed only for a server on this host's loopback interface (127.0.0.1, ::1, localhost); use tls or starttls")
        }
        let port = self.port ?? (security == .tls ? 465 : security == .starttls ? 587 : 25)
        guard (1...65_535).contains(port) else { throw .invalidField("port", "must be from 1 to 65535") }
        if let username, username.isEmpty || username.utf8.count > 256 || NameCharacters.refuses(username) {
            throw .invalidField("username", "must be 1 to 256 characters without control characters")
        }
        if let password, password.isEmpty || password.utf8.count > 1_024 || password.contains(where: \.isNewline) {
            throw .invalidField("password", "must be 1 to 1024 bytes on one line")
        }
        if password != nil, username == nil { throw .invalidField("password", "is given with a username only") }
        if caCertificate != nil, security == .plain {
            throw .invalidField("ca_certificate", "is used for tls and starttls only")
        }
        guard let fromAddress else { throw .missingField("from_address") }
        do {
            _ = try MailAddress(fromAddress)
        } catch {
            throw .invalidField("from_address", "\(error)")
        }
        if let fromName, fromName.isEmpty || fromName.count > 100 || NameCharacters.refuses(fromName) {
            throw .invalidField("from_name", "must be 1 to 100 characters without control characters")
        }
        var templates: [MailKind: MailTemplate] = [:]
        for (name, template) in self.templates ?? [:] {
            guard let kind = MailKind(rawValue: name) else {
                throw .invalidField("templates", "\"\(name)\" is not a kind of mail; they are \(MailKind.allCases.map(\.rawValue).joined(separator: ", "))")
            }
            templates[kind] = try Self.checked(template, kind: kind)
        }
        // Kept with LF line ends and no blank edges: a browser sends a textarea's lines with CRLF,
        // and a file ends in a newline, and neither is a different CA.
        let caCertificate = self.caCertificate.map {
            $0.replacingOccurrences(of: "\r\n", with: "\n").trimmingCharacters(in: .whitespacesAndNewlines)
        }
        let settings = MailSettings(
            tenantID: tenantID, host: host, port: port, security: security, username: username,
            caCertificate: try DirectoryFields.certificates(caCertificate), fromAddress: fromAddress, fromName: fromName,
            templates: templates, createdAt: existing?.createdAt ?? date, updatedAt: date)
        // The stored password goes only where it was given for: whoever may change the settings
        // must not be able to send it to a server of their own by changing the server alone.
        if username != nil, password == nil {
            guard let existing, existingHasPassword, existing.host == settings.host, existing.port == settings.port,
                  existing.security == settings.security, existing.username == settings.username,
                  existing.caCertificate == settings.caCertificate else {
                throw existing == nil || !existingHasPassword
                    ? .missingField("password")
                    : .invalidField("password", "is required again when host, port, security, username or ca_certificate change: the stored password is sent only to the server it was given for")
            }
        }
        return (settings, password)
    }

    /// A template that parses, and renders with every value it may use.
    private static func checked(_ template: MailTemplate, kind: MailKind) throws(AdminError) -> MailTemplate {
        let field = "templates.\(kind.rawValue)"
        guard !template.subject.isEmpty, template.subject.count <= MailMessage.maximumSubjectLength,
              !template.subject.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) else {
            throw .invalidField(field + ".subject", "must be 1 to \(MailMessage.maximumSubjectLength) characters on one line")
        }
        guard !template.text.isEmpty, template.text.utf8.count <= maximumTextLength else {
            throw .invalidField(field + ".text", "must be 1 to \(maximumTextLength) bytes")
        }
        for (part, source) in [("subject", template.subject), ("text", template.text)] {
            do {
                _ = try MailTemplate.template(source)
            } catch {
                throw .invalidField("\(field).\(part)", "is not a Mustache template: \(error)")
            }
        }
        return template
    }
}
