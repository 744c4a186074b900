import Foundation
import HTTPTypes

/// The console's groups of users: list with member counts and sources, create, rename, delete
/// after a confirmation, and a group's members, added by username and removed. Each action is
/// the administration API call of the same name (`…/groups`, `users:read` to see, `users:manage`
/// to change); a refusal is shown beside the field it names, with what was typed, and changes
/// nothing. A group kept by the directory or a SCIM client can be changed too; its page says
/// that the next sync may undo it.
struct ConsoleGroups: Sendable {
    let flow: ConsoleFlow

    typealias Visit = ConsoleFlow.Visit

    func list(query: FormParameters?, _ session: ConsoleSession, _ visit: Visit, form: ConsoleGroupForm = ConsoleGroupForm(),
              status: HTTPResponse.Status = .ok) async throws -> PageAnswer {
        var path = collectionPath(visit) + "?limit=100"
        if let cursor = query?["cursor"] { path += "&cursor=" + AuthorizationRedirect.encoded(cursor) }
        let answer = try await flow.admin(.get, path, session: session, visit)
        guard answer.status == .ok else {
            throw ConsoleRefusal(status: ConsoleText.pageStatus(answer.status), heading: "Groups not shown",
                                 message: ConsoleText.sentence(answer.errorDescription ?? "the groups could not be read"))
        }
        let items = (answer.json?["items"] as? [[String: Any]] ?? []).map { ConsoleGroupRow($0) }
        let next = (answer.json?["next_cursor"] as? String).map { "cursor=" + AuthorizationRedirect.encoded($0) }
        return .page("console-groups", ConsoleGroupsPage(ConsoleChrome(visit, session, .groups), items: items, next: next, form: form),
                     status: status)
    }

    func create(_ form: FormParameters, _ session: ConsoleSession, _ visit: Visit) async throws -> PageAnswer {
        var typed = ConsoleGroupForm(name: form["name"] ?? "")
        let answer = try await flow.admin(.post, collectionPath(visit), json: ["name": typed.name], session: session, visit)
        guard answer.status == .created, let id = answer.json?["id"] as? String else {
            typed.refuse(answer.errorDescription ?? "the group could not be created")
            return try await list(query: nil, session, visit, form: typed, status: ConsoleText.pageStatus(answer.status))
        }
        return .redirect(to: "\(visit.base)/console/groups/\(AuthorizationRedirect.encoded(id))")
    }

    func show(groupID: String, query: FormParameters? = nil, _ session: ConsoleSession, _ visit: Visit,
              _ adjust: (inout ConsoleGroupPage) -> Void = { _ in }, status: HTTPResponse.Status = .ok) async throws -> PageAnswer {
        let found = try await flow.admin(.get, groupPath(groupID, visit), session: session, visit)
        guard found.status == .ok, let object = found.json else {
            throw ConsoleRefusal(status: ConsoleText.pageStatus(found.status), heading: "Group not shown",
                                 message: ConsoleText.sentence(found.errorDescription ?? "the group was not found"))
        }
        var membersPath = groupPath(groupID, visit) + "/members?limit=100"
        if let cursor = query?["cursor"] { membersPath += "&cursor=" + AuthorizationRedirect.encoded(cursor) }
        let members = try await flow.admin(.get, membersPath, session: session, visit)
        let group = ConsoleGroupRow(object)
        var page = ConsoleGroupPage(
            ConsoleChrome(visit, session, .groups), group: group,
            members: (members.json?["items"] as? [[String: Any]] ?? []).map { member in
                ConsoleGroupMemberRow(userID: member["user_id"] as? String ?? "", username: member["username"] as? String ?? "")
            },
            next: (members.json?["next_cursor"] as? String).map { "cursor=" + AuthorizationRedirect.encoded($0) })
        adjust(&page)
        return .page("console-group", page, status: status)
    }

    func rename(groupID: String, _ form: FormParameters, _ session: ConsoleSession, _ visit: Visit) async throws -> PageAnswer {
        let name = form["name"] ?? ""
        let answer = try await flow.admin(.patch, groupPath(groupID, visit), json: ["name": name], session: session, visit)
        return try await show(groupID: groupID, session, visit, { page in
            guard answer.status == .ok else {
                page.renameForm = ConsoleGroupForm(name: name)
                page.renameForm.refuse(answer.errorDescription ?? "the group could not be renamed")
                return
            }
            page.notice = "Renamed." + Self.syncNotice(answer)
        }, status: answer.status == .ok ? .ok : ConsoleText.pageStatus(answer.status))
    }

    func delete(groupID: String, _ form: FormParameters, _ session: ConsoleSession, _ visit: Visit) async throws -> PageAnswer {
        guard form["confirm"] == "yes" else {
            return try await show(groupID: groupID, session, visit, { page in
                page.confirmError = "Tick the box to confirm: deleting a group cannot be undone."
            }, status: .badRequest)
        }
        let answer = try await flow.admin(.delete, groupPath(groupID, visit), session: session, visit)
        guard answer.status == .noContent else {
            return try await show(groupID: groupID, session, visit, { page in
                page.error = ConsoleText.sentence(answer.errorDescription ?? "the group could not be deleted")
            }, status: ConsoleText.pageStatus(answer.status))
        }
        return .redirect(to: "\(visit.base)/console/groups")
    }

    /// Adds the user of that exact username: the API takes ids, so the username is looked up
    /// first among the users whose name starts with it.
    func addMember(groupID: String, _ form: FormParameters, _ session: ConsoleSession, _ visit: Visit) async throws -> PageAnswer {
        let username = (form["username"] ?? "").trimmingCharacters(in: .whitespaces)
        func refused(_ message: String, _ status: HTTPResponse.Status) async throws -> PageAnswer {
            try await show(groupID: groupID, session, visit, { page in
                page.memberUsername = username
                page.memberError = message
            }, status: status)
        }
        guard !username.isEmpty else { return try await refused("Enter the username of the user to add.", .badRequest) }
        guard let userID = try await userID(named: username, session, visit) else {
            return try await refused("No user of this tenant is named \(username).", .notFound)
        }
        let answer = try await flow.admin(
            .put, groupPath(groupID, visit) + "/members/" + AuthorizationRedirect.encoded(userID), session: session, visit)
        guard answer.status == .noContent else {
            return try await refused(ConsoleText.sentence(answer.errorDescription ?? "the user could not be added"),
                                     ConsoleText.pageStatus(answer.status))
        }
        return try await show(groupID: groupID, session, visit, { page in
            page.notice = "\(username) is in the group." + Self.syncNotice(answer)
        })
    }

    func removeMember(groupID: String, userID: String, _ session: ConsoleSession, _ visit: Visit) async throws -> PageAnswer {
        let answer = try await flow.admin(
            .delete, groupPath(groupID, visit) + "/members/" + AuthorizationRedirect.encoded(userID), session: session, visit)
        return try await show(groupID: groupID, session, visit, { page in
            if answer.status == .noContent { page.notice = "Removed from the group." + Self.syncNotice(answer) }
            else { page.error = ConsoleText.sentence(answer.errorDescription ?? "the user could not be removed") }
        }, status: answer.status == .noContent ? .ok : ConsoleText.pageStatus(answer.status))
    }

    /// The id of the tenant's user named exactly `username`, read page by page from the users
    /// whose name starts with it.
    private func userID(named username: String, _ session: ConsoleSession, _ visit: Visit) async throws -> String? {
        var cursor: String?
        repeat {
            var path = flow.tenantPath(visit) + "/users?limit=200&q=" + AuthorizationRedirect.encoded(username)
            if let cursor { path += "&cursor=" + AuthorizationRedirect.encoded(cursor) }
            let answer = try await flow.admin(.get, path, session: session, visit)
            guard answer.status == .ok, let page = answer.json else { return nil }
            let users = page["items"] as? [[String: Any]] ?? []
            if let user = users.first(where: { $0["username"] as? String == username }) { return user["id"] as? String }
            cursor = page["next_cursor"] as? String
        } while cursor != nil
        return nil
    }

    /// The API's word that a sync may undo the change, as a second sentence.
    private static func syncNotice(_ answer: InProcessRouter.Answer) -> String {
        answer.headers[GroupAdminRoutes.syncNotice].map { " " + ConsoleText.sentence($0) } ?? ""
    }

    private func collectionPath(_ visit: Visit) -> String {
        flow.tenantPath(visit) + "/groups"
    }

    private func groupPath(_ id: String, _ visit: Visit) -> String {
        collectionPath(visit) + "/" + AuthorizationRedirect.encoded(id)
    }
}

/// A group in the console's list and page.
struct ConsoleGroupRow: Sendable {
    let id: String, name: String, source: String, members: Int, createdAt: String
    /// Whether the directory or a SCIM client keeps the group, whose sync may undo changes made here.
    let synced: Bool
    let keeper: String

    init(_ group: [String: Any]) {
        id = group["id"] as? String ?? ""
        name = group["name"] as? String ?? ""
        source = group["source"] as? String ?? "local"
        members = (group["member_count"] as? NSNumber)?.intValue ?? 0
        createdAt = ConsoleTime.text(group["created_at"] as? String)
        synced = source != "local"
        keeper = source == "directory" ? "the tenant's directory" : "a SCIM provisioning client"
    }
}

struct ConsoleGroupMemberRow: Sendable {
    let userID: String, username: String
}

/// A group name as typed, with the message beside it when it was refused.
struct ConsoleGroupForm: Sendable {
    var name = ""
    var nameError: String?
    /// A refusal of no field (named apart from the page's own `error`, which a template section
    /// would otherwise reach).
    var formError: String?

    /// The API's refusal, beside the name when it names it or is the name's conflict.
    mutating func refuse(_ message: String) {
        if ConsoleText.field(of: message) == "name" || message.hasPrefix("a group named ") {
            nameError = ConsoleText.sentence(message)
        } else {
            formError = ConsoleText.sentence(message)
        }
    }
}

/// `console-groups`.
struct ConsoleGroupsPage: ConsolePageModel {
    let title = "Groups"
    let chrome: ConsoleChrome
    let items: [ConsoleGroupRow]
    /// The query of the next page, when there is one.
    let next: String?
    let form: ConsoleGroupForm

    init(_ chrome: ConsoleChrome, items: [ConsoleGroupRow], next: String?, form: ConsoleGroupForm) {
        self.chrome = chrome
        (self.items, self.next, self.form) = (items, next, form)
    }
}

/// `console-group`: one group, its rename form, its members and the form adding one.
struct ConsoleGroupPage: ConsolePageModel {
    let title: String
    let chrome: ConsoleChrome
    let group: ConsoleGroupRow
    let members: [ConsoleGroupMemberRow]
    let next: String?
    var renameForm: ConsoleGroupForm
    var memberUsername = ""
    var memberError: String?
    var confirmError: String?
    var notice: String?
    var error: String?

    init(_ chrome: ConsoleChrome, group: ConsoleGroupRow, members: [ConsoleGroupMemberRow], next: String?) {
        self.chrome = chrome
        title = group.name
        (self.group, self.members, self.next) = (group, members, next)
        renameForm = ConsoleGroupForm(name: group.name)
    }
}
