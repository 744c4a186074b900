import ArgumentParser
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

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

/// A small JSON client for the administration API.
struct AdminAPIClient {
    let base: String
    let key: String

    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    /// Sends a request and returns the parsed JSON answer (nil for 204). Non-2xx answers throw
    /// with the server's error code and description.
    @discardableResult
    func send(_ method: String, _ path: String, body: [String: Any]? = nil) async throws -> Any? {
        guard let url = URL(string: base + path) else { throw Failure(description: "bad path \(path)") }
        var request = URLRequest(url: url)
        request.httpMethod = method
        request.setValue("Bearer \(key)", forHTTPHeaderField: "Authorization")
        if let body {
            request.setValue("application/json", forHTTPHeaderField: "Content-Type")
            request.httpBody = try JSONSerialization.data(withJSONObject: body)
        }
        let data: Data
        let response: URLResponse
        do {
            (data, response) = try await URLSession.shared.data(for: request)
        } catch {
            throw Failure(description: "cannot reach \(base): \(error.localizedDescription)")
        }
        let status = (response as? HTTPURLResponse)?.statusCode ?? 0
        let json = data.isEmpty ? nil : try? JSONSerialization.jsonObject(with: data)
        guard (200..<300).contains(status) else {
            let object = json as? [String: Any]
            let code = object?["error"] as? String ?? "http_\(status)"
            let text = object?["error_description"] as? String ?? String(decoding: data, as: UTF8.self)
            throw Failure(description: "\(status) \(code): \(text)")
        }
        return json
    }

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
