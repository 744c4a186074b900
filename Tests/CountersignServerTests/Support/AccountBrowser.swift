import Foundation
import Testing
@testable import CountersignServer
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A browser for the hosted and account pages whose scripts the test plays by hand: keeps the
/// cookies the server sets, posts forms and the JSON the pages' scripts post, follows no
/// redirect (a test reads each one), and sends through the router in memory.
actor AccountBrowser {
    typealias Send = @Sendable (URLRequest) async throws -> TestServer.Answer

    let base: String
    nonisolated let send: Send
    private var cookies: [String: String] = [:]

    init(base: String, send: @escaping Send) {
        self.base = base
        self.send = send
    }

    init(server: TestServer, send: @escaping Send) {
        self.init(base: server.base, send: send)
    }

    /// Another browser holding this one's cookies as they are now: the cookie values copied out
    /// of a browser, to be replayed after this one has forgotten or changed them.
    func replica() async -> AccountBrowser {
        let copy = AccountBrowser(base: base, send: send)
        await copy.adopt(cookies)
        return copy
    }

    private func adopt(_ cookies: [String: String]) {
        self.cookies = cookies
    }

    /// `path` below the server's base, or a URL of the server (a redirect's `Location`).
    func get(_ path: String) async throws -> TestServer.Answer {
        try await keep(send(request("GET", path)))
    }

    func post(_ path: String, _ form: [(String, String)]) async throws -> TestServer.Answer {
        var request = try request("POST", path)
        request.setValue("application/x-www-form-urlencoded", forHTTPHeaderField: "Content-Type")
        request.httpBody = Data(TestServer.formEncoded(form).utf8)
        return try await keep(send(request))
    }

    /// A form with files, as a browser posts one with `enctype="multipart/form-data"` (RFC 7578),
    /// written here by hand so that the server's parser is checked against an independent writer.
    func post(_ path: String, multipart fields: [(String, String)], files: [(name: String, filename: String, data: Data)])
        async throws -> TestServer.Answer {
        let boundary = "----CountersignTestBoundary" + UUID().uuidString.replacingOccurrences(of: "-", with: "")
        var body = Data()
        for (name, value) in fields {
            body.append(Data("--\(boundary)\r\nContent-Disposition: form-data; name=\"\(name)\"\r\n\r\n\(value)\r\n".utf8))
        }
        for file in files {
            body.append(Data(("--\(boundary)\r\nContent-Disposition: form-data; name=\"\(file.name)\"; filename=\"\(file.filename)\"\r\n"
                + "Content-Type: application/octet-stream\r\n\r\n").utf8))
            body.append(file.data)
            body.append(Data("\r\n".utf8))
        }
        body.append(Data("--\(boundary)--\r\n".utf8))
        var request = try request("POST", path)
        request.setValue("multipart/form-data; boundary=\(boundary)", forHTTPHeaderField: "Content-Type")
        request.httpBody = body
        return try await keep(send(request))
    }

    /// What a page's script posts (the passkey script after `create()` or `get()`).
    func post(_ path: String, json body: some Encodable & Sendable) async throws -> TestServer.Answer {
        var request = try request("POST", path)
        request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        request.httpBody = try JSONEncoder().encode(body)
        return try await keep(send(request))
    }

    /// The browser's mark (`countersign-browser`, with `__Host-` on https), which binds a
    /// sign-in and its ceremonies to this browser.
    var browserMark: String? { cookies.first { $0.key.hasSuffix("countersign-browser") }?.value }

    var hasSession: Bool { cookies.keys.contains { $0.contains("countersign-session") } }

    private func request(_ method: String, _ path: String) throws -> URLRequest {
        var request = URLRequest(url: try #require(URL(string: path.hasPrefix(base) ? path : base + path)))
        request.httpMethod = method
        if !cookies.isEmpty {
            request.setValue(cookies.map { "\($0.key)=\($0.value)" }.sorted().joined(separator: "; "), forHTTPHeaderField: "Cookie")
        }
        return request
    }

    private func keep(_ answer: TestServer.Answer) -> TestServer.Answer {
        for header in TestServer.Answer.cookies(of: answer) {
            guard let pair = header.split(separator: ";").first else { continue }
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false).map(String.init)
            if parts.count == 2 { cookies[parts[0]] = parts[1].isEmpty ? nil : parts[1] }
        }
        return answer
    }
}
