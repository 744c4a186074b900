import Foundation
import HTTPTypes

/// The console's RADIUS clients (the gateways and network devices that ask over RADIUS): list,
/// add (with a shared secret given, or generated and shown once), edit, a new generated secret
/// shown once, delete. Each is the administration API call of the same name
/// (`…/radius-clients`, `clients:read` to see, `clients:manage` to change); a refusal is shown
/// beside the field it names, with everything as it was typed, and nothing is changed.
struct ConsoleRADIUSClients: Sendable {
    let flow: ConsoleFlow

    typealias Visit = ConsoleFlow.Visit

    func list(_ session: ConsoleSession, _ visit: Visit, form: ConsoleRADIUSClientForm = .empty,
              status: HTTPResponse.Status = .ok) async throws -> PageAnswer {
        let answer = try await flow.admin(.get, collectionPath(visit), session: session, visit)
        guard answer.status == .ok else {
            throw ConsoleRefusal(status: ConsoleText.pageStatus(answer.status), heading: "RADIUS clients not shown",
                                 message: ConsoleText.sentence(answer.errorDescription ?? "the RADIUS clients could not be read"))
        }
        let items = (answer.json?["items"] as? [[String: Any]] ?? []).map { ConsoleRADIUSClientRow($0) }
        return .page(
            "console-radius-clients",
            ConsoleRADIUSClientsPage(ConsoleChrome(visit, session, .radiusClients), items: items, form: form), status: status)
    }

    func create(_ form: FormParameters, _ session: ConsoleSession, _ visit: Visit) async throws -> PageAnswer {
        let typed = ConsoleRADIUSClientForm(form)
        let answer = try await flow.admin(.post, collectionPath(visit), json: typed.json(creating: true), session: session, visit)
        guard answer.status == .created, let made = answer.json, let client = made["radius_client"] as? [String: Any],
              let id = client["id"] as? String else {
            return try await list(session, visit, form: typed.refused(answer), status: ConsoleText.pageStatus(answer.status))
        }
        let secret = made["secret"] as? String
        return try await show(clientID: id, session, visit, secret: secret,
                              notice: secret == nil ? "Added, with the shared secret you gave." : nil)
    }

    func show(clientID: String, _ session: ConsoleSession, _ visit: Visit, form: ConsoleRADIUSClientForm? = nil,
              secret: String? = nil, notice: String? = nil, status: HTTPResponse.Status = .ok) async throws -> PageAnswer {
        let answer = try await flow.admin(.get, clientPath(clientID, visit), session: session, visit)
        guard answer.status == .ok, let client = answer.json else {
            throw ConsoleRefusal(status: ConsoleText.pageStatus(answer.status), heading: "RADIUS client not shown",
                                 message: ConsoleText.sentence(answer.errorDescription ?? "the RADIUS client was not found"))
        }
        return .page(
            "console-radius-client",
            ConsoleRADIUSClientPage(ConsoleChrome(visit, session, .radiusClients), client: ConsoleRADIUSClientRow(client),
                                    form: form ?? ConsoleRADIUSClientForm(client), secret: secret, notice: notice),
            status: status)
    }

    func update(clientID: String, _ form: FormParameters, _ session: ConsoleSession, _ visit: Visit) async throws -> PageAnswer {
        let typed = ConsoleRADIUSClientForm(form)
        let answer = try await flow.admin(.patch, clientPath(clientID, visit), json: typed.json(creating: false), session: session, visit)
        guard answer.status == .ok else {
            return try await show(clientID: clientID, session, visit, form: typed.refused(answer),
                                  status: ConsoleText.pageStatus(answer.status))
        }
        return try await show(clientID: clientID, session, visit, notice: "Saved.")
    }

    /// A new shared secret, generated: an empty body asks the API for one.
    func rotateSecret(clientID: String, _ session: ConsoleSession, _ visit: Visit) async throws -> PageAnswer {
        let answer = try await flow.admin(.post, clientPath(clientID, visit) + "/secret", session: session, visit)
        guard answer.status == .ok, let secret = answer.json?["secret"] as? String else {
            return try await show(clientID: clientID, session, visit,
                                  notice: ConsoleText.sentence(answer.errorDescription ?? "no new secret was made"),
                                  status: ConsoleText.pageStatus(answer.status))
        }
        return try await show(clientID: clientID, session, visit, secret: secret)
    }

    func delete(clientID: String, _ form: FormParameters, _ session: ConsoleSession, _ visit: Visit) async throws -> PageAnswer {
        guard form["confirm"] == "yes" else {
            return try await show(clientID: clientID, session, visit,
                                  notice: "Tick the box to confirm: deleting a RADIUS client cannot be undone.", status: .badRequest)
        }
        let answer = try await flow.admin(.delete, clientPath(clientID, visit), session: session, visit)
        guard answer.status == .noContent else {
            return try await show(clientID: clientID, session, visit,
                                  notice: ConsoleText.sentence(answer.errorDescription ?? "the RADIUS client could not be deleted"),
                                  status: ConsoleText.pageStatus(answer.status))
        }
        return .redirect(to: "\(visit.base)/console/radius-clients")
    }

    private func collectionPath(_ visit: Visit) -> String {
        flow.tenantPath(visit) + "/radius-clients"
    }

    private func clientPath(_ id: String, _ visit: Visit) -> String {
        collectionPath(visit) + "/" + AuthorizationRedirect.encoded(id)
    }
}

/// A RADIUS client in the console's list and page.
struct ConsoleRADIUSClientRow: Sendable {
    let id: String, name: String, networks: String, mode: String, wait: String, createdAt: String

    init(_ client: [String: Any]) {
        id = client["id"] as? String ?? ""
        name = client["name"] as? String ?? ""
        networks = (client["networks"] as? [String] ?? []).joined(separator: ", ")
        mode = client["mode"] as? String ?? ""
        wait = (client["wait_seconds"] as? Int).map { "\($0) s" } ?? "—"
        createdAt = ConsoleTime.text(client["created_at"] as? String)
    }
}

/// The RADIUS client form as typed (or as stored, to edit), with the message beside each
/// refused field. The shared secret is never put back into a page: a refused form asks for it
/// again.
struct ConsoleRADIUSClientForm: Sendable {
    var name = "", networks = "", mode = RADIUSClient.Mode.push.rawValue, waitSeconds = String(RADIUSClient.defaultWaitSeconds)
    var stripRealm = false, stripDomain = false
    var unenrolledUsers = RADIUSClient.UnenrolledUsers.reject.rawValue, replyAttributes = "", secret = ""
    var nameError: String?, networksError: String?, modeError: String?, waitError: String?, stripError: String?
    var unenrolledError: String?, replyError: String?, secretError: String?, error: String?

    static let empty = ConsoleRADIUSClientForm()

    init() {}

    init(_ form: FormParameters) {
        name = form["name"] ?? ""
        networks = form["networks"] ?? ""
        mode = form["mode"] ?? RADIUSClient.Mode.push.rawValue
        waitSeconds = form["wait_seconds"] ?? ""
        // A checkbox left clear is not sent.
        stripRealm = form["strip_realm"] == "yes"
        stripDomain = form["strip_domain"] == "yes"
        unenrolledUsers = form["unenrolled_users"] ?? RADIUSClient.UnenrolledUsers.reject.rawValue
        replyAttributes = form["reply_attributes"] ?? ""
        secret = form["secret"] ?? ""
    }

    init(_ client: [String: Any]) {
        name = client["name"] as? String ?? ""
        networks = (client["networks"] as? [String] ?? []).joined(separator: "\n")
        mode = client["mode"] as? String ?? RADIUSClient.Mode.push.rawValue
        waitSeconds = (client["wait_seconds"] as? Int).map(String.init) ?? ""
        stripRealm = client["strip_realm"] as? Bool ?? false
        stripDomain = client["strip_domain"] as? Bool ?? false
        unenrolledUsers = client["unenrolled_users"] as? String ?? RADIUSClient.UnenrolledUsers.reject.rawValue
        replyAttributes = (client["reply_attributes"] as? [[String: Any]] ?? [])
            .map { "\($0["name"] as? String ?? "")=\($0["value"] as? String ?? "")" }
            .joined(separator: "\n")
    }

    /// The API's body. A wait left empty is the default; a wait that is not a whole number goes
    /// as the text typed, for the API to refuse beside the field. A reply attribute line is
    /// `Name=Value`, split at the first `=`; a line without one is a name without a value, which
    /// the API refuses. The secret goes only on creation, and only when one was typed.
    func json(creating: Bool) -> [String: any Sendable] {
        let wait = waitSeconds.trimmingCharacters(in: .whitespaces)
        let waitValue: any Sendable
        if wait.isEmpty {
            waitValue = RADIUSClient.defaultWaitSeconds
        } else if let seconds = Int(wait) {
            waitValue = seconds
        } else {
            waitValue = wait
        }
        let attributes: [[String: any Sendable]] = ConsoleClientForm.lines(replyAttributes).map { line in
            guard let equals = line.firstIndex(of: "=") else { return ["name": line, "value": ""] }
            return ["name": line[..<equals].trimmingCharacters(in: .whitespaces),
                    "value": line[line.index(after: equals)...].trimmingCharacters(in: .whitespaces)]
        }
        var body: [String: any Sendable] = [
            "name": name, "networks": ConsoleClientForm.lines(networks), "mode": mode, "wait_seconds": waitValue,
            "strip_realm": stripRealm, "strip_domain": stripDomain, "unenrolled_users": unenrolledUsers,
            "reply_attributes": attributes,
        ]
        if creating && !secret.isEmpty { body["secret"] = secret }
        return body
    }

    /// This form with the API's refusal beside its field, and the secret cleared.
    func refused(_ answer: InProcessRouter.Answer) -> ConsoleRADIUSClientForm {
        var form = self
        form.secret = ""
        let message = answer.errorDescription ?? "the RADIUS client could not be saved"
        let sentence = ConsoleText.sentence(message)
        // A network that overlaps another client's is a conflict (409), named by its network.
        let field = message.hasPrefix("network ") ? "networks" : ConsoleText.field(of: message)?.split(separator: "[").first.map(String.init)
        switch field {
        case "name": form.nameError = sentence
        case "networks": form.networksError = sentence
        case "mode": form.modeError = sentence
        case "wait_seconds": form.waitError = sentence
        case "strip_realm", "strip_domain": form.stripError = sentence
        case "unenrolled_users": form.unenrolledError = sentence
        case "reply_attributes": form.replyError = sentence
        case "secret": form.secretError = sentence
        default: form.error = sentence
        }
        return form
    }
}

/// `console-radius-clients`.
struct ConsoleRADIUSClientsPage: ConsolePageModel {
    let title = "RADIUS clients"
    let chrome: ConsoleChrome
    let items: [ConsoleRADIUSClientRow]
    let form: ConsoleRADIUSClientFields

    init(_ chrome: ConsoleChrome, items: [ConsoleRADIUSClientRow], form: ConsoleRADIUSClientForm) {
        self.chrome = chrome
        self.items = items
        self.form = ConsoleRADIUSClientFields(form, creating: true)
    }
}

/// `console-radius-client`: one RADIUS client, its edit form, and a secret just made (shown once).
struct ConsoleRADIUSClientPage: ConsolePageModel {
    let title: String
    let chrome: ConsoleChrome
    let client: ConsoleRADIUSClientRow
    let form: ConsoleRADIUSClientFields
    let secret: String?
    let notice: String?

    init(_ chrome: ConsoleChrome, client: ConsoleRADIUSClientRow, form: ConsoleRADIUSClientForm, secret: String?, notice: String?) {
        self.chrome = chrome
        title = client.name
        (self.client, self.secret, self.notice) = (client, secret, notice)
        self.form = ConsoleRADIUSClientFields(form, creating: false)
    }
}

/// The RADIUS client form as the template reads it: each select's options with the chosen one
/// marked; the secret field only when adding.
struct ConsoleRADIUSClientFields: Sendable {
    struct Option: Sendable { let value: String, label: String, selected: Bool }
    let creating: Bool
    let name: String, networks: String, waitSeconds: String, replyAttributes: String
    let stripRealm: Bool, stripDomain: Bool
    let modes: [Option], unenrolledChoices: [Option]
    let nameError: String?, networksError: String?, modeError: String?, waitError: String?, stripError: String?
    let unenrolledError: String?, replyError: String?, secretError: String?, error: String?

    init(_ form: ConsoleRADIUSClientForm, creating: Bool) {
        self.creating = creating
        (name, networks, waitSeconds, replyAttributes) = (form.name, form.networks, form.waitSeconds, form.replyAttributes)
        (stripRealm, stripDomain) = (form.stripRealm, form.stripDomain)
        modes = RADIUSClient.Mode.allCases.map { mode in
            let label = switch mode {
            case .push: "push: approve on the phone"
            case .pushNumber: "push-number: pick the number shown by the gateway"
            case .passcode: "passcode: a one-time code as the password"
            case .auto: "auto: a code if typed, else a push"
            }
            return Option(value: mode.rawValue, label: label, selected: mode.rawValue == form.mode)
        }
        unenrolledChoices = RADIUSClient.UnenrolledUsers.allCases.map { choice in
            let label = switch choice {
            case .reject: "rejected"
            case .accept: "accepted (recorded in the audit log)"
            }
            return Option(value: choice.rawValue, label: label, selected: choice.rawValue == form.unenrolledUsers)
        }
        (nameError, networksError, modeError, waitError) = (form.nameError, form.networksError, form.modeError, form.waitError)
        (stripError, unenrolledError, replyError) = (form.stripError, form.unenrolledError, form.replyError)
        (secretError, error) = (form.secretError, form.error)
    }
}
