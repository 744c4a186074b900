import Foundation
import Logging
import Testing
@testable import CountersignServer

/// Request bodies whose framing is broken, or that the client abandons, are the client's
/// doing: the server answers 400 or closes the connection, and logs nothing at error level,
/// so that "alert on any 500 or error line" keeps meaning "the server is wrong".
@Suite("Request framing")
struct RequestFramingTests {
    /// How a variant ends: with the client waiting for the answer after a half-close, or
    /// with the client gone.
    enum Ending: Sendable {
        case waitForAnswer
        case halfClose
        case disconnect
        case reset
    }

    struct Variant: Sendable, CustomTestStringConvertible {
        let name: String
        /// Header lines after Content-Type, each ending in CRLF.
        let headers: String
        let body: String
        let ending: Ending

        var testDescription: String { name }

        static let all: [Variant] = [
            Variant(name: "chunk size that is not hex", headers: "Transfer-Encoding: chunked\r\n",
                    body: "zz\r\nhello\r\n0\r\n\r\n", ending: .waitForAnswer),
            Variant(name: "chunk size that overflows", headers: "Transfer-Encoding: chunked\r\n",
                    body: "FFFFFFFFFFFFFFFFFFFFFFFF\r\nhello\r\n0\r\n\r\n", ending: .waitForAnswer),
            Variant(name: "negative chunk size", headers: "Transfer-Encoding: chunked\r\n",
                    body: "-5\r\nhello\r\n0\r\n\r\n", ending: .waitForAnswer),
            Variant(name: "chunk longer than its size", headers: "Transfer-Encoding: chunked\r\n",
                    body: "3\r\nhello\r\n0\r\n\r\n", ending: .waitForAnswer),
            Variant(name: "chunk extension with a control character", headers: "Transfer-Encoding: chunked\r\n",
                    body: "5;\u{1}\r\nhello\r\n0\r\n\r\n", ending: .waitForAnswer),
            Variant(name: "Transfer-Encoding gzip", headers: "Transfer-Encoding: gzip\r\n",
                    body: "hello", ending: .halfClose),
            Variant(name: "Transfer-Encoding gzip, chunked", headers: "Transfer-Encoding: gzip, chunked\r\n",
                    body: "5\r\nhello\r\n0\r\n\r\n", ending: .waitForAnswer),
            Variant(name: "Transfer-Encoding chunked, gzip", headers: "Transfer-Encoding: chunked, gzip\r\n",
                    body: "5\r\nhello\r\n0\r\n\r\n", ending: .halfClose),
            Variant(name: "Content-Length beside Transfer-Encoding",
                    headers: "Content-Length: 5\r\nTransfer-Encoding: chunked\r\n",
                    body: "5\r\nhello\r\n0\r\n\r\n", ending: .waitForAnswer),
            Variant(name: "negative Content-Length", headers: "Content-Length: -1\r\n", body: "hello", ending: .halfClose),
            Variant(name: "Content-Length that is not a number", headers: "Content-Length: five\r\n",
                    body: "hello", ending: .halfClose),
            Variant(name: "two different Content-Lengths", headers: "Content-Length: 3\r\nContent-Length: 5\r\n",
                    body: "hello", ending: .halfClose),
            Variant(name: "body shorter than its Content-Length, half-closed", headers: "Content-Length: 100\r\n",
                    body: "grant_type=", ending: .halfClose),
            Variant(name: "chunked body cut off inside a chunk, half-closed", headers: "Transfer-Encoding: chunked\r\n",
                    body: "10\r\ngrant", ending: .halfClose),
            Variant(name: "chunked body cut off before its last chunk, half-closed",
                    headers: "Transfer-Encoding: chunked\r\n", body: "5\r\ngrant\r\n", ending: .halfClose),
            Variant(name: "body shorter than its Content-Length, client gone", headers: "Content-Length: 100\r\n",
                    body: "grant_type=", ending: .disconnect),
            Variant(name: "chunked body cut off inside a chunk, client gone", headers: "Transfer-Encoding: chunked\r\n",
                    body: "10\r\ngrant", ending: .disconnect),
            Variant(name: "body shorter than its Content-Length, connection reset", headers: "Content-Length: 100\r\n",
                    body: "grant_type=", ending: .reset),
            Variant(name: "chunked body cut off inside a chunk, connection reset",
                    headers: "Transfer-Encoding: chunked\r\n", body: "10\r\ngrant", ending: .reset),
        ]
    }

    /// An endpoint that reads a form body, and one that reads JSON behind an admin key.
    enum Endpoint: String, CaseIterable, Sendable {
        case token
        case admin
    }

    @Test("a malformed or abandoned request body is answered 400 or dropped, never 500, and logs no error",
          arguments: Variant.all, Endpoint.allCases)
    func malformedBodyIsTheClientsFault(variant: Variant, endpoint: Endpoint) async throws {
        let capture = LogCapture()
        try await TestServer.with(.sqlite, logger: capture.logger()) { server in
            let head = switch endpoint {
            case .token:
                "POST /token HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\nContent-Type: application/x-www-form-urlencoded\r\n"
            case .admin:
                "POST /admin/v1/tenants HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\nAuthorization: Bearer \(server.adminKey)\r\n"
                    + "Content-Type: application/json\r\n"
            }
            var connection: RawHTTPConnection? = try RawHTTPConnection(port: server.running.port)
            try connection?.send(Array((head + variant.headers + "\r\n" + variant.body).utf8))
            switch variant.ending {
            case .waitForAnswer, .halfClose:
                if variant.ending == .halfClose { connection?.finishSending() }
                let outcome = try #require(await connection?.closure(within: .seconds(10)))
                #expect(outcome.closed, "the server kept the connection open: \(outcome.received.prefix(120))")
                let status = outcome.received.split(separator: " ").dropFirst().first.map(String.init)
                #expect(status == nil || status == "400", "answered \(outcome.received.prefix(120))")
            case .disconnect, .reset:
                // Gone while the server waits for the rest of the body, as an abandoned upload
                // is, rather than before the server has looked at the request at all. Should
                // the server be slower than this, the case still runs, only less sharply.
                try await Task.sleep(for: .milliseconds(300))
                if variant.ending == .reset { connection?.resetOnClose() }
                connection = nil
                // The server closes its side once it has finished with the request.
                let clock = ContinuousClock()
                let deadline = clock.now + .seconds(10)
                while server.running.server.connections.count > 0, clock.now < deadline {
                    try await Task.sleep(for: .milliseconds(20))
                }
                #expect(server.running.server.connections.count == 0)
            }
        }
        let errors = capture.logged(atLeast: .error)
        #expect(errors.isEmpty, "logged: \(errors.map(\.message))")
    }
}
