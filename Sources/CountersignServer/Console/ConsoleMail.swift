import Foundation
import HTTPTypes

/// The console's mail page: the tenant's SMTP server, login and sender, a test message, the
/// recent mail and removing the settings. Each action is the administration API call of the same
/// name (`…/mail`, `mail:manage`); a refused setting is shown beside its field with the form as
/// typed (the password is never put back into a page), and nothing is changed. Templates are set
/// through the API and kept when the page saves (docs/mail.md).
struct ConsoleMail: Sendable {
    let flow: ConsoleFlow

    typealias Visit = ConsoleFlow.Visit

    func page(_ session: ConsoleSession, _ visit: Visit, form: ConsoleMailForm? = nil, testTo: String = "",
              testError: String? = nil, notice: String? = nil, status: HTTPResponse.Status = .ok) async throws -> PageAnswer {
        let stored = try await flow.admin(.get, path(visit), session: session, visit)
        let settings: [String: Any]?
        switch stored.status {
        case .ok: settings = stored.json
        case .notFound: settings = nil
        default:
            throw ConsoleRefusal(status: ConsoleText.pageStatus(stored.status), heading: "Mail not shown",
                                 message: ConsoleText.sentence(stored.errorDescription ?? "the mail settings could not be read"))
        }
        var deliveries: [ConsoleMailDelivery] = []
        if settings != nil {
            let listed = try await flow.admin(.get, path(visit) + "/deliveries?limit=20", session: session, visit)
            deliveries = (listed.json?["items"] as? [[String: Any]] ?? []).map(ConsoleMailDelivery.init)
        }
        return .page(
            "console-mail",
            ConsoleMailPage(
                chrome: ConsoleChrome(visit, session, .mail), configured: settings != nil,
                form: form ?? settings.map(ConsoleMailForm.init(stored:)) ?? ConsoleMailForm(),
                templates: (settings?["templates"] as? [String: Any])?.keys.sorted().joined(separator: ", "),
                deliveries: deliveries, testTo: testTo, testError: testError, notice: notice),
            status: status)
    }

    func save(_ form: FormParameters, _ session: ConsoleSession, _ visit: Visit) async throws -> PageAnswer {
        var typed = ConsoleMailForm(form)
        // The page does not edit templates: those stored are sent back as they are.
        let stored = try await flow.admin(.get, path(visit), session: session, visit)
        let answer = try await flow.admin(.put, path(visit), json: typed.json(templates: stored.json?["templates"]),
                                          session: session, visit)
        guard answer.status == .ok || answer.status == .created else {
            typed.refuse(answer.errorDescription ?? "the mail settings could not be saved")
            return try await page(session, visit, form: typed, status: ConsoleText.pageStatus(answer.status))
        }
        return try await page(session, visit, notice: "Saved. Send a test message to check the settings.")
    }

    /// Sends the test message at once: the page says it went, or the mail server's reason.
    func test(_ form: FormParameters, _ session: ConsoleSession, _ visit: Visit) async throws -> PageAnswer {
        let to = (form["to"] ?? "").trimmingCharacters(in: .whitespaces)
        let answer = try await flow.admin(.post, path(visit) + "/test", json: ["to": to], session: session, visit)
        guard answer.status == .ok else {
            return try await page(session, visit, testTo: to,
                                  testError: ConsoleText.sentence(answer.errorDescription ?? "the test message was not sent"),
                                  status: ConsoleText.pageStatus(answer.status))
        }
        return try await page(session, visit, testTo: to, notice: "The test message to \(to) was accepted by the mail server.")
    }

    func delete(_ form: FormParameters, _ session: ConsoleSession, _ visit: Visit) async throws -> PageAnswer {
        guard form["confirm"] == "yes" else {
            return try await page(session, visit, notice: "Tick the box to confirm: the settings and the password are removed.",
                                  status: .badRequest)
        }
        let answer = try await flow.admin(.delete, path(visit), session: session, visit)
        guard answer.status == .noContent else {
            return try await page(session, visit, notice: ConsoleText.sentence(answer.errorDescription ?? "not removed"),
                                  status: ConsoleText.pageStatus(answer.status))
        }
        return .redirect(to: "\(visit.base)/console/mail")
    }

    private func path(_ visit: Visit) -> String { flow.tenantPath(visit) + "/mail" }
}

/// The settings form, as stored or as typed, with the API's refusal beside the field it names.
struct ConsoleMailForm: Sendable {
    var host = "", port = "", security = "starttls", username = "", password = "", caCertificate = ""
    var fromAddress = "", fromName = ""
    var errors: [String: String] = [:]

    init() {}

    init(stored: [String: Any]) {
        host = stored["host"] as? String ?? ""
        port = (stored["port"] as? Int).map(String.init) ?? ""
        security = stored["security"] as? String ?? "starttls"
        username = stored["username"] as? String ?? ""
        caCertificate = stored["ca_certificate"] as? String ?? ""
        fromAddress = stored["from_address"] as? String ?? ""
        fromName = stored["from_name"] as? String ?? ""
    }

    init(_ form: FormParameters) {
        func value(_ name: String) -> String { (form[name] ?? "").trimmingCharacters(in: .whitespacesAndNewlines) }
        (host, port, security, username) = (value("host"), value("port"), value("security"), value("username"))
        password = form["password"] ?? ""
        (caCertificate, fromAddress, fromName) = (value("ca_certificate"), value("from_address"), value("from_name"))
    }

    /// The body of `PUT …/mail`: what was typed (an empty field left out), the stored templates.
    func json(templates: Any?) -> [String: any Sendable] {
        var body: [String: any Sendable] = ["host": host, "security": security, "from_address": fromAddress]
        if !port.isEmpty { body["port"] = Int(port) ?? -1 }
        if !username.isEmpty { body["username"] = username }
        if !password.isEmpty { body["password"] = password }
        if !caCertificate.isEmpty { body["ca_certificate"] = caCertificate }
        if !fromName.isEmpty { body["from_name"] = fromName }
        if let templates = templates as? [String: [String: String]], !templates.isEmpty { body["templates"] = templates }
        return body
    }

    mutating func refuse(_ message: String) {
        password = ""
        let field = ConsoleText.field(of: message)?.components(separatedBy: ".").first ?? ""
        errors[["host", "port", "security", "username", "password", "ca_certificate", "from_address", "from_name"]
            .contains(field) ? field : "form"] = ConsoleText.sentence(message)
    }
}

/// One message of the deliveries list.
struct ConsoleMailDelivery: Sendable {
    let id: String, kind: String, to: String, subject: String, status: String, attempts: Int, createdAt: String
    let lastError: String?
    let failed: Bool

    init(_ object: [String: Any]) {
        id = object["id"] as? String ?? ""
        kind = (object["kind"] as? String ?? "").replacingOccurrences(of: "_", with: " ")
        to = object["to"] as? String ?? ""
        subject = object["subject"] as? String ?? ""
        status = object["status"] as? String ?? ""
        attempts = object["attempts"] as? Int ?? 0
        createdAt = ConsoleTime.text(object["created_at"] as? String)
        lastError = object["last_error"] as? String
        failed = status == "failed"
    }
}

/// `console-mail`.
struct ConsoleMailPage: ConsolePageModel {
    struct Option: Sendable { let value: String, label: String, selected: Bool }

    let title = "Mail"
    let chrome: ConsoleChrome
    let configured: Bool
    let host: String, port: String, username: String, caCertificate: String, fromAddress: String, fromName: String
    let securities: [Option]
    let hostError: String?, portError: String?, securityError: String?, usernameError: String?, passwordError: String?
    let caError: String?, fromAddressError: String?, fromNameError: String?, formError: String?
    /// The kinds whose templates the tenant replaced, if any.
    let templates: String?
    let deliveries: [ConsoleMailDelivery]
    let hasDeliveries: Bool
    let testTo: String
    let testError: String?
    let notice: String?

    init(chrome: ConsoleChrome, configured: Bool, form: ConsoleMailForm, templates: String?, deliveries: [ConsoleMailDelivery],
         testTo: String, testError: String?, notice: String?) {
        self.chrome = chrome
        self.configured = configured
        (host, port, username, caCertificate) = (form.host, form.port, form.username, form.caCertificate)
        (fromAddress, fromName) = (form.fromAddress, form.fromName)
        securities = [("tls", "TLS from the first byte (port 465)"), ("starttls", "STARTTLS, required (port 587)"),
                      ("plain", "None: a relay on this host only (port 25)")]
            .map { Option(value: $0.0, label: $0.1, selected: $0.0 == form.security) }
        let errors = form.errors
        (hostError, portError, securityError) = (errors["host"], errors["port"], errors["security"])
        (usernameError, passwordError, caError) = (errors["username"], errors["password"], errors["ca_certificate"])
        (fromAddressError, fromNameError, formError) = (errors["from_address"], errors["from_name"], errors["form"])
        self.templates = templates?.isEmpty == false ? templates : nil
        self.deliveries = deliveries
        hasDeliveries = !deliveries.isEmpty
        (self.testTo, self.testError, self.notice) = (testTo, testError, notice)
    }
}
