import Foundation
import HTTPTypes

/// The console's directory page: the tenant's LDAP directory settings, its connection test, a
/// preview of the sync (a dry run), a sync now, the last sync's record, and removing it. Each
/// action is the administration API call of the same name (`…/directory`, `directory:manage`);
/// a refused setting is shown beside its field with the form as typed (the bind password is
/// never put back into a page), and nothing is changed.
struct ConsoleDirectory: Sendable {
    let flow: ConsoleFlow

    typealias Visit = ConsoleFlow.Visit

    /// The page: the stored settings (or the default kind's, for a tenant without a directory),
    /// or `form` as typed, with the outcome of an action and the last sync's record.
    func page(_ session: ConsoleSession, _ visit: Visit, form: ConsoleDirectoryForm? = nil, outcome: ConsoleDirectoryOutcome? = nil,
              notice: String? = nil, status: HTTPResponse.Status = .ok) async throws -> PageAnswer {
        let stored = try await flow.admin(.get, path(visit), session: session, visit)
        let settings: [String: Any]?
        switch stored.status {
        case .ok: settings = stored.json
        case .notFound: settings = nil
        default:
            throw ConsoleRefusal(status: ConsoleText.pageStatus(stored.status), heading: "Directory not shown",
                                 message: ConsoleText.sentence(stored.errorDescription ?? "the directory could not be read"))
        }
        var lastSync: ConsoleDirectorySyncRecord?
        if settings != nil {
            let record = try await flow.admin(.get, path(visit) + "/sync", session: session, visit)
            if record.status == .ok, let json = record.json { lastSync = ConsoleDirectorySyncRecord(json) }
        }
        return .page(
            "console-directory",
            ConsoleDirectoryPage(ConsoleChrome(visit, session, .directory), configured: settings != nil,
                                 form: form ?? settings.map(ConsoleDirectoryForm.init(stored:)) ?? ConsoleDirectoryForm(),
                                 outcome: outcome, notice: notice, lastSync: lastSync),
            status: status)
    }

    func save(_ form: FormParameters, _ session: ConsoleSession, _ visit: Visit) async throws -> PageAnswer {
        let typed = ConsoleDirectoryForm(form)
        let answer = try await flow.admin(.put, path(visit), json: typed.json(), session: session, visit)
        guard answer.status == .ok || answer.status == .created else {
            return try await page(session, visit, form: typed.refused(answer), status: ConsoleText.pageStatus(answer.status))
        }
        return try await page(session, visit, notice: "Saved. Test the connection, then preview the sync.")
    }

    /// Connects, binds and runs the user search: how many users, and the first few.
    func test(_ session: ConsoleSession, _ visit: Visit) async throws -> PageAnswer {
        let answer = try await flow.admin(.post, path(visit) + "/test", session: session, visit)
        guard answer.status == .ok, let json = answer.json else { return try await failed(answer, session, visit) }
        let sample = json["sample"] as? [String] ?? []
        return try await page(session, visit, outcome: ConsoleDirectoryOutcome(
            id: "test-result", heading: "The connection works",
            lead: "The service account signed in and the user search found \(json["users_found"] as? Int ?? 0) users.",
            lists: sample.isEmpty ? [] : [.init(label: "The first of them", names: sample)]))
    }

    /// A dry run, or the sync itself: what would change, or what did.
    func sync(dryRun: Bool, _ session: ConsoleSession, _ visit: Visit) async throws -> PageAnswer {
        let answer = try await flow.admin(.post, path(visit) + "/sync", json: dryRun ? ["dry_run": true] : nil, session: session, visit)
        guard answer.status == .ok, let json = answer.json else { return try await failed(answer, session, visit) }
        return try await page(session, visit, outcome: ConsoleDirectoryOutcome(summary: json))
    }

    func delete(_ form: FormParameters, _ session: ConsoleSession, _ visit: Visit) async throws -> PageAnswer {
        guard form["confirm"] == "yes" else {
            return try await page(session, visit, notice: "Tick the box to confirm: removing the directory cannot be undone.",
                                  status: .badRequest)
        }
        let answer = try await flow.admin(.delete, path(visit), session: session, visit)
        guard answer.status == .noContent else { return try await failed(answer, session, visit) }
        return .redirect(to: "\(visit.base)/console/directory")
    }

    /// The page with the API's refusal of a test or sync (the directory unreachable, a sync
    /// already running), with its status.
    private func failed(_ answer: InProcessRouter.Answer, _ session: ConsoleSession, _ visit: Visit) async throws -> PageAnswer {
        try await page(session, visit, outcome: ConsoleDirectoryOutcome(
            id: "directory-error", heading: "Nothing was changed",
            lead: ConsoleText.sentence(answer.errorDescription ?? "the directory could not be reached"), failed: true),
            status: ConsoleText.pageStatus(answer.status))
    }

    private func path(_ visit: Visit) -> String {
        flow.tenantPath(visit) + "/directory"
    }
}

/// What a test, preview or sync found, shown above the settings.
struct ConsoleDirectoryOutcome: Sendable {
    /// A list of names, as one line (the template reads stored properties only).
    struct Names: Sendable {
        let label: String
        let text: String

        init(label: String, names: [String]) {
            self.label = label
            text = names.joined(separator: ", ")
        }
    }

    let id: String
    let heading: String
    let lead: String
    let lists: [Names]
    let hasLists: Bool
    let failed: Bool

    init(id: String, heading: String, lead: String, lists: [Names] = [], failed: Bool = false) {
        (self.id, self.heading, self.lead, self.lists, self.failed) = (id, heading, lead, lists, failed)
        hasLists = !lists.isEmpty
    }

    /// A sync's summary (`DirectorySyncSummary`), as done or, in a dry run, as it would be done.
    init(summary: [String: Any]) {
        let dryRun = summary["dry_run"] as? Bool ?? false
        id = dryRun ? "preview-result" : "sync-result"
        heading = dryRun ? "What a sync would change" : "Synced"
        failed = false
        let found = "The directory returned \(summary["users_found"] as? Int ?? 0) users and \(summary["groups_found"] as? Int ?? 0) groups."
        let memberships = "Memberships \(dryRun ? "to add" : "added"): \(summary["memberships_added"] as? Int ?? 0), "
            + "\(dryRun ? "to remove" : "removed"): \(summary["memberships_removed"] as? Int ?? 0)."
        let labels: [(String, String, String)] = [
            ("users_created", "Users to create", "Users created"),
            ("users_adopted", "Local users the directory would keep", "Local users the directory now keeps"),
            ("users_updated", "Users to update", "Users updated"),
            ("users_disabled", "Users to disable", "Users disabled"),
            ("users_enabled", "Users to enable again", "Users enabled again"),
            ("groups_created", "Groups to create", "Groups created"),
            ("groups_updated", "Groups to rename", "Groups renamed"),
            ("groups_deleted", "Groups to delete", "Groups deleted"),
        ]
        var lists: [Names] = []
        for (key, wouldLabel, didLabel) in labels {
            guard let names = summary[key] as? [String], !names.isEmpty else { continue }
            lists.append(Names(label: dryRun ? wouldLabel : didLabel, names: names))
        }
        let skipped = (summary["skipped"] as? [[String: Any]] ?? []).map {
            "\($0["dn"] as? String ?? "") (\($0["reason"] as? String ?? ""))"
        }
        if !skipped.isEmpty { lists.append(Names(label: "Left alone", names: skipped)) }
        let nothing = lists.isEmpty && summary["memberships_added"] as? Int == 0 && summary["memberships_removed"] as? Int == 0
        lead = found + " " + (nothing ? (dryRun ? "A sync would change nothing." : "Nothing changed.") : memberships)
        self.lists = lists
        hasLists = !lists.isEmpty
    }
}

/// The last sync (`DirectorySyncRecord`): when, who, and its counts or its error.
struct ConsoleDirectorySyncRecord: Sendable {
    let at: String
    let actor: String
    let counts: String?
    let failure: String?

    init(_ record: [String: Any]) {
        at = ConsoleTime.text(record["at"] as? String)
        let actor = record["actor"] as? String ?? ""
        self.actor = actor == DirectorySync.actor ? "the schedule" : actor
        failure = (record["error"] as? String).map(ConsoleText.sentence)
        counts = (record["summary"] as? [String: Any]).map { summary in
            func count(_ key: String) -> Int { (summary[key] as? [Any])?.count ?? 0 }
            return "\(summary["users_found"] as? Int ?? 0) users found: \(count("users_created")) created, "
                + "\(count("users_updated")) updated, \(count("users_disabled")) disabled, \(count("users_enabled")) enabled; "
                + "\(summary["groups_found"] as? Int ?? 0) groups found: \(count("groups_created")) created, "
                + "\(count("groups_deleted")) deleted."
        }
    }
}

/// `console-directory`.
struct ConsoleDirectoryPage: ConsolePageModel {
    let title = "Directory"
    let chrome: ConsoleChrome
    /// Whether the tenant has a directory: the test, sync and delete forms need one.
    let configured: Bool
    let form: ConsoleDirectoryFields
    let outcome: ConsoleDirectoryOutcome?
    let notice: String?
    let lastSync: ConsoleDirectorySyncRecord?

    init(_ chrome: ConsoleChrome, configured: Bool, form: ConsoleDirectoryForm, outcome: ConsoleDirectoryOutcome?,
         notice: String?, lastSync: ConsoleDirectorySyncRecord?) {
        self.chrome = chrome
        self.configured = configured
        self.form = ConsoleDirectoryFields(form, configured: configured)
        (self.outcome, self.notice, self.lastSync) = (outcome, notice, lastSync)
    }
}
