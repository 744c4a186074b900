import ArgumentParser
import CountersignCommandLine
import Foundation

/// Where the administration API is and which key to use.
struct AdminOptions: ParsableArguments {
    @Option(help: "The server's URL (COUNTERSIGN_SERVER). Default http://localhost:8080.")
    var server: String?

    @Option(name: .customLong("admin-key"), help: "Admin API key (prefer COUNTERSIGN_ADMIN_KEY: flags show up in process lists).")
    var adminKey: String?

    @Option(help: "Tenant slug (COUNTERSIGN_TENANT). Default: default.")
    var tenant: String?

    var tenantSlug: String { setting(tenant, "COUNTERSIGN_TENANT") ?? "default" }

    func client() throws -> AdminAPIClient {
        guard let key = setting(adminKey, "COUNTERSIGN_ADMIN_KEY") else {
            throw ValidationError("an admin key is required: set COUNTERSIGN_ADMIN_KEY or pass --admin-key")
        }
        let base = setting(server, "COUNTERSIGN_SERVER") ?? "http://localhost:8080"
        guard let url = URL(string: base), url.host != nil else { throw ValidationError("\(base) is not a URL") }
        return AdminAPIClient(base: base.hasSuffix("/") ? String(base.dropLast()) : base, key: key)
    }

    /// `/admin/v1/tenants/<tenant>` + `path`.
    func tenantPath(_ path: String) -> String {
        "/admin/v1/tenants/\(tenantSlug.addingPercentEncoding(withAllowedCharacters: .urlPathAllowed) ?? tenantSlug)\(path)"
    }
}

/// `--limit` and `--cursor` of every list.
struct PageOptions: ParsableArguments {
    @Option(help: "Items per page, 1 to 200.") var limit: Int?
    @Option(help: "next_cursor of the previous page.") var cursor: String?

    /// The page's query, with `filters` (name and value, nil values left out) before it.
    func query(_ filters: (String, String?)... ) -> String {
        var items: [String] = []
        for case let (name, value?) in filters {
            items.append("\(name)=\(value.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? value)")
        }
        if let limit { items.append("limit=\(limit)") }
        if let cursor { items.append("cursor=\(cursor.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? cursor)") }
        return items.isEmpty ? "" : "?" + items.joined(separator: "&")
    }
}

extension AdminAPIClient {
    /// Sends and prints the answer as indented JSON.
    func print(_ method: String, _ path: String, body: [String: Any]? = nil) async throws {
        guard let json = try await send(method, path, body: body) else { return }
        Swift.print(prettyJSON(json))
    }
}

func prettyJSON(_ value: Any) -> String {
    guard let data = try? JSONSerialization.data(withJSONObject: value, options: [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]) else {
        return "\(value)"
    }
    return String(decoding: data, as: UTF8.self)
}
