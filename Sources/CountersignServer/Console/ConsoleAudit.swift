import CountersignCore
import Foundation
import HTTPTypes

/// The console's audit log: filtered by user, client, device, action, actor and time, a page at
/// a time, and exported whole (up to `exportLimit` events) as CSV or JSON lines. Each read is
/// the administration API's `GET …/audit` with the same filter.
struct ConsoleAudit: Sendable {
    let flow: ConsoleFlow

    /// The most events one export holds.
    static let exportLimit = 10_000

    typealias Visit = ConsoleFlow.Visit

    /// The filter's members as the form names them and the API's query names them.
    static let fields = [("user_id", "User ID"), ("client_id", "Client ID"), ("device_id", "Device ID"),
                         ("action", "Action"), ("actor", "Actor")]

    func page(_ query: FormParameters, _ session: ConsoleSession, _ visit: Visit) async throws -> PageAnswer {
        let (filter, problem) = Self.filterQuery(query)
        var path = flow.tenantPath(visit) + "/audit?limit=50" + filter
        if let cursor = query["cursor"] { path += "&cursor=" + AuthorizationRedirect.encoded(cursor) }
        let answer = try await flow.admin(.get, path, session: session, visit)
        let items = answer.status == .ok ? (answer.json?["items"] as? [[String: Any]] ?? []) : []
        let next = (answer.json?["next_cursor"] as? String).map { filter.dropFirst() + "&cursor=" + AuthorizationRedirect.encoded($0) }
        let page = ConsoleAuditPage(
            ConsoleChrome(visit, session, .audit),
            filters: Self.fields.map { name, label in
                ConsoleAuditField(name: name, label: label, value: query[name] ?? "")
            },
            since: query["since"] ?? "", until: query["until"] ?? "",
            error: problem ?? (answer.status == .ok ? nil : ConsoleText.sentence(answer.errorDescription ?? "the log could not be read")),
            events: items.map { ConsoleAuditRow($0) }, next: next.map { String($0) },
            exportQuery: String(filter.dropFirst()))
        return .page("console-audit", page, status: problem != nil || answer.status != .ok ? .badRequest : .ok)
    }

    /// Every event the filter keeps, newest first, as a download.
    func export(_ query: FormParameters, _ session: ConsoleSession, _ visit: Visit) async throws -> PageAnswer {
        let format = query["format"] ?? "csv"
        guard format == "csv" || format == "jsonl" else {
            throw ConsoleRefusal(status: .badRequest, heading: "No such export", message: "Export as csv or jsonl.")
        }
        let (filter, problem) = Self.filterQuery(query)
        if let problem { throw ConsoleRefusal(status: .badRequest, heading: "No such export", message: problem) }
        var events: [[String: Any]] = []
        var cursor: String?
        repeat {
            var path = flow.tenantPath(visit) + "/audit?limit=200" + filter
            if let cursor { path += "&cursor=" + AuthorizationRedirect.encoded(cursor) }
            let answer = try await flow.admin(.get, path, session: session, visit)
                guard answer.status == .ok else {
                throw ConsoleRefusal(status: ConsoleText.pageStatus(answer.status), heading: "No export",
                                     message: ConsoleText.sentence(answer.errorDescription ?? "the log could not be read"))
            }
            events += answer.json?["items"] as? [[String: Any]] ?? []
            cursor = answer.json?["next_cursor"] as? String
        } while cursor != nil && events.count < Self.exportLimit
        let body = format == "csv" ? Self.csv(events.prefix(Self.exportLimit)) : Self.jsonLines(events.prefix(Self.exportLimit))
        let name = "audit-\(visit.tenant.slug)-\(Timestamps.format(flow.now()).prefix(10)).\(format)"
        return .download(body, type: format == "csv" ? "text/csv; charset=utf-8" : "application/x-ndjson", filename: name)
    }

    /// The API's query for the form's filter (starting with `&`), or why the form is refused.
    static func filterQuery(_ query: FormParameters) -> (String, String?) {
        var items: [String] = []
        for (name, _) in fields {
            if let value = query[name]?.trimmingCharacters(in: .whitespaces), !value.isEmpty {
                items.append("\(name)=\(AuthorizationRedirect.encoded(value))")
            }
        }
        for name in ["since", "until"] {
            guard let raw = query[name]?.trimmingCharacters(in: .whitespaces), !raw.isEmpty else { continue }
            // A datetime-local field sends `2026-11-25T10:00`: read as UTC, as the pages show times.
            let text = raw.count == 16 ? raw + ":00Z" : raw
            guard Timestamps.parse(text) != nil else {
                return ("", "\(name == "since" ? "From" : "Until") must be a time such as 2026-11-25T10:00 (UTC).")
            }
            items.append("\(name)=\(AuthorizationRedirect.encoded(text))")
        }
        return (items.map { "&" + $0 }.joined(), nil)
    }

    /// The event's members, with the names its actor and target have now beside their ids.
    static let columns = ["occurred_at", "action", "actor", "actor_name", "target_type", "target_id", "target_name", "tenant_id",
                          "id", "details"]

    /// RFC 4180 CSV with a header row; a field a spreadsheet would run as a formula starts with `'`.
    static func csv(_ events: some Collection<[String: Any]>) -> String {
        var lines = [columns.joined(separator: ",")]
        for event in events {
            lines.append(columns.map { column in
                let value: String
                if column == "details" {
                    let details = event["details"] as? [String: Any] ?? [:]
                    value = (try? JSONSerialization.data(withJSONObject: details, options: [.sortedKeys]))
                        .map { String(decoding: $0, as: UTF8.self) } ?? "{}"
                } else {
                    value = event[column] as? String ?? ""
                }
                return field(value)
            }.joined(separator: ","))
        }
        return lines.joined(separator: "\r\n") + "\r\n"
    }

    static func field(_ value: String) -> String {
        var text = value
        if let first = text.unicodeScalars.first, "=+-@\t\r".unicodeScalars.contains(first) { text = "'" + text }
        guard text.contains(where: { $0 == "," || $0 == "\"" || $0 == "\n" || $0 == "\r" }) else { return text }
        return "\"" + text.replacingOccurrences(of: "\"", with: "\"\"") + "\""
    }

    /// One JSON object per line, as the API answers each event.
    static func jsonLines(_ events: some Collection<[String: Any]>) -> String {
        events.compactMap { event in
            (try? JSONSerialization.data(withJSONObject: event, options: [.sortedKeys, .withoutEscapingSlashes]))
                .map { String(decoding: $0, as: UTF8.self) }
        }.map { $0 + "\n" }.joined()
    }
}

extension HTTPField.Name {
    static let contentDisposition = Self("Content-Disposition")!
}
