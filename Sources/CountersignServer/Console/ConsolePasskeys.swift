import Foundation
import HTTPTypes

/// The console's passkeys: the FIDO metadata the server loads (`GET /admin/v1/authenticator-metadata`)
/// and the tenant's passkeys that its rules or the metadata no longer allow
/// (`GET …/passkey-findings`), each revoked with `DELETE …/users/{id}/passkeys/{passkey}`.
struct ConsolePasskeys: Sendable {
    let flow: ConsoleFlow

    typealias Visit = ConsoleFlow.Visit

    func list(query: FormParameters, _ session: ConsoleSession, _ visit: Visit) async throws -> PageAnswer {
        try await list(cursor: query["cursor"], session, visit)
    }

    private func list(cursor: String? = nil, _ session: ConsoleSession, _ visit: Visit, notice: String? = nil,
                      error: String? = nil, status: HTTPResponse.Status = .ok) async throws -> PageAnswer {
        var path = flow.tenantPath(visit) + "/passkey-findings?limit=50"
        if let cursor { path += "&cursor=" + AuthorizationRedirect.encoded(cursor) }
        let answer = try await flow.admin(.get, path, session: session, visit)
        var failure = error
        if answer.status != .ok {
            failure = failure ?? ConsoleText.sentence(answer.errorDescription ?? "the passkeys could not be checked")
        }
        let metadata = try await flow.admin(.get, "/admin/v1/authenticator-metadata", session: session, visit)
        let items = (answer.json?["items"] as? [[String: Any]] ?? []).map(ConsolePasskeyFindingRow.init)
        let next = (answer.json?["next_cursor"] as? String).map { "cursor=\(AuthorizationRedirect.encoded($0))" }
        return .page(
            "console-passkeys",
            ConsolePasskeysPage(
                ConsoleChrome(visit, session, .passkeys), metadata: metadata.status == .ok ? metadata.json : nil, items: items,
                next: next, notice: notice, error: failure),
            status: answer.status == .ok ? status : ConsoleText.pageStatus(answer.status))
    }

    func revoke(userID: String, passkeyID: String, _ session: ConsoleSession, _ visit: Visit) async throws -> PageAnswer {
        let path = flow.tenantPath(visit) + "/users/" + AuthorizationRedirect.encoded(userID) + "/passkeys/"
            + AuthorizationRedirect.encoded(passkeyID)
        let answer = try await flow.admin(.delete, path, session: session, visit)
        guard answer.status == .noContent else {
            return try await list(
                session, visit, error: ConsoleText.sentence(answer.errorDescription ?? "the passkey could not be revoked"),
                status: ConsoleText.pageStatus(answer.status))
        }
        return try await list(session, visit, notice: "The passkey is revoked: it no longer signs anyone in.")
    }
}

/// A passkey the rules no longer allow, as the console lists it.
struct ConsolePasskeyFindingRow: Sendable {
    let id: String, userID: String, username: String, name: String, model: String, findings: [String], created: String

    init(_ finding: [String: Any]) {
        let passkey = finding["passkey"] as? [String: Any] ?? [:]
        id = passkey["id"] as? String ?? ""
        userID = passkey["user_id"] as? String ?? ""
        username = finding["username"] as? String ?? userID
        name = passkey["name"] as? String ?? ""
        let aaguid = passkey["aaguid"] as? String ?? ""
        model = (finding["model"] as? String).map { "\($0) (\(aaguid))" } ?? aaguid
        findings = (finding["findings"] as? [String] ?? []).map(ConsoleText.sentence)
        created = ConsoleTime.text(passkey["created_at"] as? String)
    }
}

/// `console-passkeys`.
struct ConsolePasskeysPage: ConsolePageModel {
    let title = "Passkeys"
    let chrome: ConsoleChrome
    /// The metadata's state in words; nil when it could not be read.
    let metadata: String?
    let metadataProblem: String?
    let items: [ConsolePasskeyFindingRow]
    let next: String?
    let notice: String?, error: String?

    init(_ chrome: ConsoleChrome, metadata: [String: Any]?, items: [ConsolePasskeyFindingRow], next: String?, notice: String?,
         error: String?) {
        self.chrome = chrome
        (self.metadata, metadataProblem) = Self.describe(metadata)
        (self.items, self.next, self.notice, self.error) = (items, next, notice, error)
    }

    static func describe(_ state: [String: Any]?) -> (String?, String?) {
        guard let state else { return (nil, nil) }
        guard state["configured"] as? Bool == true else {
            return ("The server loads no FIDO metadata: start it with --fido-metadata to refuse revoked authenticator models.", nil)
        }
        var problem = (state["last_error"] as? String).map { "The last read failed: \(ConsoleText.sentence($0))" }
        if state["stale"] as? Bool == true {
            problem = (problem.map { $0 + " " } ?? "") + "The loaded metadata is past its next update."
        }
        guard let serial = state["serial"] as? Int else {
            return ("No FIDO metadata is loaded yet from \(state["source"] as? String ?? "its source").", problem)
        }
        let entries = state["entries"] as? Int ?? 0
        let loaded = ConsoleTime.text(state["loaded_at"] as? String)
        let nextUpdate = state["next_update"] as? String ?? "—"
        return ("FIDO metadata number \(serial), \(entries) authenticator models, loaded \(loaded); next update \(nextUpdate).",
                problem)
    }
}
