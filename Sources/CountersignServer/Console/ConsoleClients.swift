import Foundation
import HTTPTypes

/// The console's clients (relying parties): list, register, edit (name, redirect URIs, delivery
/// mode and endpoint, authentication method, keys, authorization detail types, the directory
/// password before the push, the groups whose members may use it), a new secret shown once,
/// delete. Each is the administration API call of the same name; a refusal is shown beside the
/// field it names, with everything as it was typed. Groups are shown by name
/// (`ConsoleGroupNames`), as the API keeps them by id.
struct ConsoleClients: Sendable {
    let flow: ConsoleFlow

    typealias Visit = ConsoleFlow.Visit

    func list(_ session: ConsoleSession, _ visit: Visit, form: ConsoleClientForm = .empty,
              status: HTTPResponse.Status = .ok) async throws -> PageAnswer {
        let answer = try await flow.admin(.get, flow.tenantPath(visit) + "/clients?limit=200", session: session, visit)
        let items = (answer.json?["items"] as? [[String: Any]] ?? [])
            .filter { ($0["client_id"] as? String)?.hasPrefix("console-") != true }
            .map { ConsoleClientRow($0) }
        let groups = try await ConsoleGroupNames.load(naming: form.allowedGroups, flow, session, visit)
        return .page(
            "console-clients", ConsoleClientsPage(ConsoleChrome(visit, session, .clients), items: items, form: form, groups: groups),
            status: status)
    }

    func create(_ form: FormParameters, _ session: ConsoleSession, _ visit: Visit) async throws -> PageAnswer {
        let typed = ConsoleClientForm(form)
        let answer = try await flow.admin(.post, flow.tenantPath(visit) + "/clients", json: typed.json(creating: true), session: session, visit)
        guard answer.status == .created, let made = answer.json, let client = made["client"] as? [String: Any],
              let id = client["client_id"] as? String else {
            return try await list(session, visit, form: typed.refused(answer), status: ConsoleText.pageStatus(answer.status))
        }
        return try await show(clientID: id, session, visit, secret: made["client_secret"] as? String)
    }

    func show(clientID: String, _ session: ConsoleSession, _ visit: Visit, form: ConsoleClientForm? = nil,
              secret: String? = nil, notice: String? = nil, status: HTTPResponse.Status = .ok) async throws -> PageAnswer {
        let answer = try await flow.admin(.get, clientPath(clientID, visit), session: session, visit)
        guard answer.status == .ok, let client = answer.json else {
            throw ConsoleRefusal(status: ConsoleText.pageStatus(answer.status), heading: "Client not shown",
                                 message: ConsoleText.sentence(answer.errorDescription ?? "the client was not found"))
        }
        let row = ConsoleClientRow(client)
        let stored = ConsoleClientForm(client)
        let groups = try await ConsoleGroupNames.load(naming: stored.allowedGroups + (form?.allowedGroups ?? []), flow, session, visit)
        return .page(
            "console-client",
            ConsoleClientPage(ConsoleChrome(visit, session, .clients), client: row,
                              access: ConsoleClientAccess(stored, groups: groups), form: form ?? stored, groups: groups,
                              secret: secret, notice: notice),
            status: status)
    }

    /// The edit, as `PATCH`: what the form shows as stored of the directory password and the
    /// groups is left out (`ConsoleClientForm.json`).
    func update(clientID: String, _ form: FormParameters, _ session: ConsoleSession, _ visit: Visit) async throws -> PageAnswer {
        let found = try await flow.admin(.get, clientPath(clientID, visit), session: session, visit)
        guard found.status == .ok, let client = found.json else {
            return try await show(clientID: clientID, session, visit)
        }
        let typed = ConsoleClientForm(form)
        let answer = try await flow.admin(
            .patch, clientPath(clientID, visit), json: typed.json(creating: false, stored: ConsoleClientForm(client)), session: session, visit)
        guard answer.status == .ok else {
            return try await show(clientID: clientID, session, visit, form: typed.refused(answer),
                                  status: ConsoleText.pageStatus(answer.status))
        }
        return try await show(clientID: clientID, session, visit, notice: "Saved.")
    }

    func rotateSecret(clientID: String, _ session: ConsoleSession, _ visit: Visit) async throws -> PageAnswer {
        let answer = try await flow.admin(.post, clientPath(clientID, visit) + "/secret", session: session, visit)
        guard answer.status == .ok, let secret = answer.json?["client_secret"] as? String else {
            return try await show(clientID: clientID, session, visit,
                                  notice: ConsoleText.sentence(answer.errorDescription ?? "no new secret was made"),
                                  status: ConsoleText.pageStatus(answer.status))
        }
        return try await show(clientID: clientID, session, visit, secret: secret)
    }

    func delete(clientID: String, _ form: FormParameters, _ session: ConsoleSession, _ visit: Visit) async throws -> PageAnswer {
        guard form["confirm"] == "yes" else {
            return try await show(clientID: clientID, session, visit,
                                  notice: "Tick the box to confirm: deleting a client cannot be undone.", status: .badRequest)
        }
        let answer = try await flow.admin(.delete, clientPath(clientID, visit), session: session, visit)
        guard answer.status == .noContent else {
            return try await show(clientID: clientID, session, visit,
                                  notice: ConsoleText.sentence(answer.errorDescription ?? "the client could not be deleted"),
                                  status: ConsoleText.pageStatus(answer.status))
        }
        return .redirect(to: "\(visit.base)/console/clients")
    }

    private func clientPath(_ id: String, _ visit: Visit) -> String {
        flow.tenantPath(visit) + "/clients/" + AuthorizationRedirect.encoded(id)
    }

}

/// A client in the console's list and page.
struct ConsoleClientRow: Sendable {
    let id: String, name: String, deliveryMode: String, authenticationMethod: String, redirectURIs: String, createdAt: String

    init(_ client: [String: Any]) {
        id = client["client_id"] as? String ?? ""
        name = client["name"] as? String ?? ""
        deliveryMode = client["token_delivery_mode"] as? String ?? ""
        authenticationMethod = client["token_endpoint_auth_method"] as? String ?? ""
        redirectURIs = (client["redirect_uris"] as? [String] ?? []).joined(separator: " ")
        createdAt = ConsoleTime.text(client["created_at"] as? String)
    }
}

/// The client form as typed (or as stored, to edit), with the message beside each refused field.
struct ConsoleClientForm: Sendable {
    var name = "", deliveryMode = "poll", notificationEndpoint = "", authenticationMethod = "client_secret_basic"
    var redirectURIs = "", postLogoutRedirectURIs = "", detailTypes = "", jwks = ""
    var directoryPassword = false
    /// Group ids.
    var allowedGroups: [String] = []
    var nameError: String?, deliveryError: String?, endpointError: String?, methodError: String?
    var redirectError: String?, logoutError: String?, detailTypesError: String?, jwksError: String?, error: String?
    var directoryPasswordError: String?, allowedGroupsError: String?

    static let empty = ConsoleClientForm()

    init() {}

    init(_ form: FormParameters) {
        name = form["name"] ?? ""
        deliveryMode = form["token_delivery_mode"] ?? "poll"
        notificationEndpoint = form["notification_endpoint"] ?? ""
        authenticationMethod = form["token_endpoint_auth_method"] ?? "client_secret_basic"
        redirectURIs = form["redirect_uris"] ?? ""
        postLogoutRedirectURIs = form["post_logout_redirect_uris"] ?? ""
        detailTypes = form["authorization_details_types"] ?? ""
        jwks = form["jwks"] ?? ""
        directoryPassword = form["directory_password"] == "yes"
        allowedGroups = ConsoleGroupNames.chosen(in: form)
    }

    init(_ client: [String: Any]) {
        name = client["name"] as? String ?? ""
        deliveryMode = client["token_delivery_mode"] as? String ?? "poll"
        notificationEndpoint = client["notification_endpoint"] as? String ?? ""
        authenticationMethod = client["token_endpoint_auth_method"] as? String ?? "client_secret_basic"
        redirectURIs = (client["redirect_uris"] as? [String] ?? []).joined(separator: "\n")
        postLogoutRedirectURIs = (client["post_logout_redirect_uris"] as? [String] ?? []).joined(separator: "\n")
        detailTypes = (client["authorization_details_types"] as? [String] ?? []).joined(separator: " ")
        if let keys = client["jwks"], let data = try? JSONSerialization.data(withJSONObject: keys, options: [.sortedKeys, .prettyPrinted]) {
            jwks = String(decoding: data, as: UTF8.self)
        }
        directoryPassword = client["directory_password"] as? Bool ?? false
        allowedGroups = client["allowed_groups"] as? [String] ?? []
    }

    static func lines(_ text: String) -> [String] {
        text.split(whereSeparator: \.isNewline).map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
    }

    /// The API's body; an empty field of an edit clears the member, of a creation leaves it out.
    /// An edit leaves out the directory password and the groups where they are as `stored`: the
    /// API keeps them as they are, where sending them back would be refused once the directory
    /// is removed or a group deleted, though nobody changed them.
    func json(creating: Bool, stored: ConsoleClientForm? = nil) -> [String: any Sendable] {
        var body: [String: any Sendable] = [
            "name": name, "token_delivery_mode": deliveryMode, "token_endpoint_auth_method": authenticationMethod,
            "redirect_uris": Self.lines(redirectURIs), "post_logout_redirect_uris": Self.lines(postLogoutRedirectURIs),
            "authorization_details_types": detailTypes.split(whereSeparator: \.isWhitespace).map(String.init),
        ]
        if !notificationEndpoint.isEmpty { body["notification_endpoint"] = notificationEndpoint }
        if directoryPassword != stored?.directoryPassword { body["directory_password"] = directoryPassword }
        if Set(allowedGroups) != stored.map({ Set($0.allowedGroups) }) { body["allowed_groups"] = allowedGroups }
        let trimmedKeys = jwks.trimmingCharacters(in: .whitespacesAndNewlines)
        if !trimmedKeys.isEmpty {
            // Passed as parsed JSON so the API judges it; text that is not JSON goes as a string
            // and is refused by the API beside the field.
            if let parsed = try? JSONSerialization.jsonObject(with: Data(trimmedKeys.utf8)) as? [String: Any],
               let sendable = ConsoleJSON.sendable(parsed) {
                body["jwks"] = sendable
            } else {
                body["jwks"] = trimmedKeys
            }
        }
        return body
    }

    /// This form with the API's refusal beside its field.
    func refused(_ answer: InProcessRouter.Answer) -> ConsoleClientForm {
        var form = self
        let message = answer.errorDescription ?? "the client could not be saved"
        let sentence = ConsoleText.sentence(message)
        switch ConsoleText.field(of: message)?.split(separator: "[").first.map(String.init) {
        case "name": form.nameError = sentence
        case "token_delivery_mode": form.deliveryError = sentence
        case "notification_endpoint": form.endpointError = sentence
        case "token_endpoint_auth_method": form.methodError = sentence
        case "redirect_uris": form.redirectError = sentence
        case "post_logout_redirect_uris": form.logoutError = sentence
        case "authorization_details_types": form.detailTypesError = sentence
        case "jwks": form.jwksError = sentence
        case "directory_password": form.directoryPasswordError = sentence
        case "allowed_groups": form.allowedGroupsError = sentence
        default: form.error = sentence
        }
        return form
    }
}

/// JSON from `JSONSerialization` as values that may cross into the API call.
enum ConsoleJSON {
    static func sendable(_ value: Any) -> (any Sendable)? {
        switch value {
        case let object as [String: Any]:
            var out: [String: any Sendable] = [:]
            for (key, member) in object {
                guard let converted = sendable(member) else { return nil }
                out[key] = converted
            }
            return out
        case let array as [Any]:
            var out: [any Sendable] = []
            for element in array {
                guard let converted = sendable(element) else { return nil }
                out.append(converted)
            }
            return out
        case let text as String: return text
        case let number as NSNumber: return number.doubleValue.rounded() == number.doubleValue ? number.intValue : number.doubleValue
        case is NSNull: return NSNull()
        default: return nil
        }
    }
}
