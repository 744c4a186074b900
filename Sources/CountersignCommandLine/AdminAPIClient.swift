import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A small JSON client for the administration API.
package struct AdminAPIClient {
    let base: String
    let key: String

    package init(base: String, key: String) {
        self.base = base
        self.key = key
    }

    package struct Failure: Error, CustomStringConvertible {
        package let description: String

        package init(description: String) {
            self.description = description
        }
    }

    /// Sends a request and returns the parsed JSON answer (nil for 204). Non-2xx answers throw
    /// with the server's error code and description.
    @discardableResult
    package func send(_ method: String, _ path: String, body: [String: Any]? = nil) async throws -> Any? {
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
        // A change of a record another source keeps (a directory's group) is made, and said to
        // be undone perhaps by the next sync: the answer on standard output stays JSON alone.
        if let notice = (response as? HTTPURLResponse)?.value(forHTTPHeaderField: "Countersign-Sync-Notice") {
            FileHandle.standardError.write(Data("note: \(notice)\n".utf8))
        }
        let json = data.isEmpty ? nil : try? JSONSerialization.jsonObject(with: data)
        guard (200..<300).contains(status) else {
            let object = json as? [String: Any]
            let code = object?["error"] as? String ?? "http_\(status)"
            let text = object?["error_description"] as? String ?? String(decoding: data, as: UTF8.self)
            throw Failure(description: "\(status) \(code): \(text)")
        }
        return json
    }
}
