import Foundation
import HTTPTypes

/// The console's RADIUS clients (the gateways and network devices that ask over RADIUS): list,
/// add (with a shared secret given, or generated and shown once), edit, a new generated secret
/// shown once, delete. Each is the administration API call of the same name
/// (`…/radius-clients`, `clients:read` to see, `clients:manage` to change); a refusal is shown
/// beside the field it names, with everything as it was typed, and nothing is changed. Groups
/// are shown by name (`ConsoleGroupNames`), as the API keeps them by id.
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
        let groups = try await ConsoleGroupNames.load(naming: form.allowedGroups, flow, session, visit)
        return .page(
            "console-radius-clients",
            ConsoleRADIUSClientsPage(ConsoleChrome(visit, session, .radiusClients), items: items, form: form, groups: groups),
            status: status)
    }

    func create(_ form: FormParameters, _ session: ConsoleSession, _ visit: Visit) async throws -> PageAnswer {
        var typed = ConsoleRADIUSClientForm(form)
        guard let body = typed.json(creating: true) else {
            return try await list(session, visit, form: typed, status: .badRequest)
        }
        let answer = try await flow.admin(.post, collectionPath(visit), json: body, session: session, visit)
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
        let named = Self.groupIDs(of: client) + (form?.allowedGroups ?? [])
        let groups = try await ConsoleGroupNames.load(naming: named, flow, session, visit)
        return .page(
            "console-radius-client",
            ConsoleRADIUSClientPage(ConsoleChrome(visit, session, .radiusClients), client: ConsoleRADIUSClientRow(client),
                                    access: ConsoleRADIUSClientAccess(client, groups: groups),
                                    form: form ?? ConsoleRADIUSClientForm(client, groups: groups), groups: groups,
                                    secret: secret, notice: notice),
            status: status)
    }

    /// The groups a RADIUS client names, as the API answers it.
    private static func groupIDs(of client: [String: Any]) -> [String] {
        (client["allowed_groups"] as? [String] ?? [])
            + (client["group_reply_attributes"] as? [[String: Any]] ?? []).compactMap { $0["group"] as? String }
    }

    /// The edit, as `PATCH`: what the form shows as stored of the directory and groups is left
    /// out (`ConsoleRADIUSClientForm.json`).
    func update(clientID: String, _ form: FormParameters, _ session: ConsoleSession, _ visit: Visit) async throws -> PageAnswer {
        let found = try await flow.admin(.get, clientPath(clientID, visit), session: session, visit)
        guard found.status == .ok, let client = found.json else {
            return try await show(clientID: clientID, session, visit)
        }
        let groups = try await ConsoleGroupNames.load(naming: Self.groupIDs(of: client), flow, session, visit)
        var typed = ConsoleRADIUSClientForm(form)
        guard let body = typed.json(creating: false, stored: ConsoleRADIUSClientForm(client, groups: groups),
                                    deleted: groups.deleted) else {
            return try await show(clientID: clientID, session, visit, form: typed, status: .badRequest)
        }
        let answer = try await flow.admin(.patch, clientPath(clientID, visit), json: body, session: session, visit)
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

/// `console-radius-clients`.
struct ConsoleRADIUSClientsPage: ConsolePageModel {
    let title = "RADIUS clients"
    let chrome: ConsoleChrome
    let items: [ConsoleRADIUSClientRow]
    let form: ConsoleRADIUSClientFields

    init(_ chrome: ConsoleChrome, items: [ConsoleRADIUSClientRow], form: ConsoleRADIUSClientForm, groups: ConsoleGroupNames) {
        self.chrome = chrome
        self.items = items
        self.form = ConsoleRADIUSClientFields(form, groups: groups, creating: true)
    }
}

/// `console-radius-client`: one RADIUS client, its edit form, and a secret just made (shown once).
struct ConsoleRADIUSClientPage: ConsolePageModel {
    let title: String
    let chrome: ConsoleChrome
    let client: ConsoleRADIUSClientRow
    let access: ConsoleRADIUSClientAccess
    let form: ConsoleRADIUSClientFields
    let secret: String?
    let notice: String?

    init(_ chrome: ConsoleChrome, client: ConsoleRADIUSClientRow, access: ConsoleRADIUSClientAccess, form: ConsoleRADIUSClientForm,
         groups: ConsoleGroupNames, secret: String?, notice: String?) {
        self.chrome = chrome
        title = client.name
        (self.client, self.access, self.secret, self.notice) = (client, access, secret, notice)
        self.form = ConsoleRADIUSClientFields(form, groups: groups, creating: false)
    }
}

/// Who may log in through a RADIUS client and what their groups add, as its page states it:
/// groups by name, "(deleted group)" for one deleted since.
struct ConsoleRADIUSClientAccess: Sendable {
    struct GroupReply: Sendable { let group: String, attribute: String }
    let directoryPassword: String
    let allowedGroups: String
    let groupReplies: [GroupReply]

    init(_ client: [String: Any], groups: ConsoleGroupNames) {
        directoryPassword = client["directory_password"] as? Bool == true
            ? "Asked first: User-Password is checked in the tenant's directory before the push" : "Not asked"
        allowedGroups = groups.admitted(client["allowed_groups"] as? [String] ?? [])
        groupReplies = (client["group_reply_attributes"] as? [[String: Any]] ?? []).flatMap { reply in
            let group = groups.label(of: reply["group"] as? String ?? "")
            return ConsoleRADIUSClientForm.attributes(reply["attributes"]).map { GroupReply(group: group, attribute: "\($0.name)=\($0.value)") }
        }
    }
}
