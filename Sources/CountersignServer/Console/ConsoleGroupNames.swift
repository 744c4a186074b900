import Foundation

/// The tenant's groups as the console's policy forms name them. A policy keeps a group by its
/// id (`GroupReferences`), so that a renamed group keeps its place; a page shows the name, and
/// "(deleted group)" for an id that names no group any more (such an entry admits nobody and
/// applies to nobody). Read with the session's key, as every console page reads.
struct ConsoleGroupNames: Sendable {
    struct Group: Sendable {
        let id: String, name: String

        init(_ group: [String: Any]) {
            id = group["id"] as? String ?? ""
            name = group["name"] as? String ?? ""
        }
    }

    /// The tenant's groups a form offers, by name.
    let groups: [Group]
    /// Whether the tenant has more groups than `groups` (`listedMost`).
    let truncated: Bool
    /// The ids a policy names (those `load` was given) that name no group any more.
    let deleted: Set<String>
    private let names: [String: String]

    static let deleted = "(deleted group)"
    /// The most groups a form lists: a directory may sync thousands. A group beyond them that
    /// a policy names is read by its id, and listed too.
    static let listedMost = 1000

    init(groups: [Group], truncated: Bool, naming ids: [String]) {
        self.groups = groups.sorted { ($0.name, $0.id) < ($1.name, $1.id) }
        self.truncated = truncated
        let names = Dictionary(groups.map { ($0.id, $0.name) }) { first, _ in first }
        deleted = Set(ids.filter { names[$0] == nil })
        self.names = names
    }

    /// The tenant's groups, page by page up to `listedMost`, and beyond them the groups of `ids`
    /// (a policy's), each read by its id; an id that names no group is left out (deleted).
    static func load(naming ids: [String], _ flow: ConsoleFlow, _ session: ConsoleSession,
                     _ visit: ConsoleFlow.Visit) async throws -> ConsoleGroupNames {
        let path = flow.tenantPath(visit) + "/groups"
        var groups: [Group] = []
        var cursor: String?
        repeat {
            let query = "?limit=200" + (cursor.map { "&cursor=" + AuthorizationRedirect.encoded($0) } ?? "")
            let answer = try await flow.admin(.get, path + query, session: session, visit)
            guard answer.status == .ok else {
                throw ConsoleRefusal(status: ConsoleText.pageStatus(answer.status), heading: "Groups not read",
                                     message: ConsoleText.sentence(answer.errorDescription ?? "the tenant's groups could not be read"))
            }
            groups += (answer.json?["items"] as? [[String: Any]] ?? []).map(Group.init)
            cursor = answer.json?["next_cursor"] as? String
        } while cursor != nil && groups.count < listedMost
        if cursor != nil {
            for id in Set(ids) where !groups.contains(where: { $0.id == id }) {
                let answer = try await flow.admin(.get, path + "/" + AuthorizationRedirect.encoded(id), session: session, visit)
                if answer.status == .ok, let group = answer.json { groups.append(Group(group)) }
            }
        }
        return ConsoleGroupNames(groups: groups, truncated: cursor != nil, naming: ids)
    }

    /// The group's name, or "(deleted group)".
    func label(of id: String) -> String {
        names[id] ?? Self.deleted
    }

    /// Who a list of allowed groups admits, in words: "Everyone", or the groups' names.
    func admitted(_ ids: [String]) -> String {
        ids.isEmpty ? "Everyone" : ids.map(label(of:)).joined(separator: ", ")
    }

    /// How a line of a form names the group: its name, or its id where it has none (deleted;
    /// the API then refuses the line as naming no group) or where its name holds `=`, which a
    /// line cannot hold before the attribute (`ConsoleGroupLine`). The API takes either.
    func reference(to id: String) -> String {
        guard let name = names[id], !name.contains("=") else { return id }
        return name
    }

    /// Every group as a box of a form's list, the boxes of `chosen` ticked; a chosen id that
    /// names no group is listed last as "(deleted group)", ticked, so that saving does not
    /// quietly widen a list to everyone.
    func choices(_ chosen: [String]) -> [ConsoleGroupChoice] {
        groups.map { ConsoleGroupChoice(id: $0.id, label: $0.name, chosen: chosen.contains($0.id), deleted: false) }
            + chosen.filter { names[$0] == nil }.map { ConsoleGroupChoice(id: $0, label: Self.deleted, chosen: true, deleted: true) }
    }

    /// The boxes of a form's list of groups: `allowed_groups.<id>`, each ticked box sent as its
    /// own field.
    static let boxPrefix = "allowed_groups."

    /// The ids of the boxes ticked in `form`.
    static func chosen(in form: FormParameters) -> [String] {
        form.names(prefixed: boxPrefix).map { String($0.dropFirst(boxPrefix.count)) }.filter { !$0.isEmpty }
    }
}

/// A box of a form's list of groups.
struct ConsoleGroupChoice: Sendable {
    let id: String, label: String, chosen: Bool, deleted: Bool
}

/// A line of a console textarea that sets something for the members of a group, `GROUP: rest`:
/// `staff: Filter-Id=vpn-staff`, `staff: pin`. The group is named by its name or its id, as the
/// API takes it; the rest is the field's own.
struct ConsoleGroupLine: Sendable, Equatable {
    let group: String, rest: String

    /// Splits at the last colon before `stop`, where the rest begins its own syntax (an
    /// attribute's value may hold colons after its `=`), or at the last colon when there is no
    /// `stop`: a group's name may hold colons. Nil without a colon, or with nothing on either side.
    init?(_ line: String, restBefore stop: Character? = nil) {
        let head = stop.flatMap { line.firstIndex(of: $0) }.map { line[..<$0] } ?? line[...]
        guard let colon = head.lastIndex(of: ":") else { return nil }
        group = line[..<colon].trimmingCharacters(in: .whitespaces)
        rest = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        guard !group.isEmpty, !rest.isEmpty else { return nil }
    }

    init(group: String, rest: String) {
        (self.group, self.rest) = (group, rest)
    }

    var text: String { "\(group): \(rest)" }
}
