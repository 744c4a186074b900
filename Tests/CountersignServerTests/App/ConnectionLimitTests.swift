import Foundation
import Testing
@testable import CountersignServer

/// Connections that hold the server's descriptors without getting on with a request are
/// closed after short configured timeouts; past the cap, health checks are still answered.
/// Connection handling does not depend on the storage engine, so these run on SQLite only.
@Suite("Connection limits")
struct ConnectionLimitTests {
    /// Each timeout under test is one second; the others are out of the way.
    static func limits(idle: Int = 60, header: Int = 60, body: Int = 60) -> (inout ServerConfiguration) -> Void {
        { configuration in
            configuration.connections.idleTimeout = .seconds(idle)
            configuration.connections.headerTimeout = .seconds(header)
            configuration.connections.bodyProgressTimeout = .seconds(body)
        }
    }

    /// How much later than its timeout a connection may be closed: timers on a loaded machine.
    static let slack: Duration = .seconds(3)

    @Test("a connection that sends nothing is closed after the idle timeout")
    func silentConnectionIsClosedAfterIdleTimeout() async throws {
        try await TestServer.with(.sqlite, configure: Self.limits(idle: 1)) { server in
            let connection = try RawHTTPConnection(port: server.running.port)
            let outcome = await connection.closure(within: .seconds(1) + Self.slack)
            #expect(outcome.closed)
            #expect(outcome.after >= .milliseconds(900))
            #expect(outcome.received.isEmpty)
        }
    }

    @Test("a kept-alive connection is closed the idle timeout after its last response")
    func keptAliveConnectionIsClosedAfterIdleTimeout() async throws {
        try await TestServer.with(.sqlite, configure: Self.limits(idle: 1)) { server in
            let connection = try RawHTTPConnection(port: server.running.port)
            try connection.send(Array("GET /healthz HTTP/1.1\r\nHost: localhost\r\n\r\n".utf8))
            // The idle timeout starts when the response has gone, however long it took under load.
            let outcome = await connection.closure(within: .seconds(1) + Self.slack, fromLastByte: true)
            #expect(outcome.received.hasPrefix("HTTP/1.1 200"))
            #expect(outcome.closed)
            #expect(outcome.after >= .milliseconds(900))
        }
    }

    @Test("a request head dribbled a byte at a time is closed after the header timeout")
    func dribbledHeadIsClosedAfterHeaderTimeout() async throws {
        try await TestServer.with(.sqlite, configure: Self.limits(header: 1)) { server in
            let connection = try RawHTTPConnection(port: server.running.port)
            try connection.send(Array("GET /healthz HTTP/1.1\r\n".utf8))
            // Keeps sending header bytes, each well within any idle timeout, until the server closes.
            let dribble = Task {
                for byte in Array(String(repeating: "X-Slow: yes\r\n", count: 100).utf8) {
                    try await Task.sleep(for: .milliseconds(100))
                    try connection.send([byte])
                }
            }
            defer { dribble.cancel() }
            let outcome = await connection.closure(within: .seconds(1) + Self.slack)
            #expect(outcome.closed)
            #expect(outcome.after >= .milliseconds(800))
            #expect(outcome.received.isEmpty)
        }
    }

    @Test("a request body that stops arriving is closed after the body timeout")
    func stalledBodyIsClosedAfterBodyTimeout() async throws {
        try await TestServer.with(.sqlite, configure: Self.limits(body: 1)) { server in
            let connection = try RawHTTPConnection(port: server.running.port)
            try connection.send(Array("""
                POST /token HTTP/1.1\r
                Host: localhost\r
                Content-Type: application/x-www-form-urlencoded\r
                Content-Length: 100\r
                \r
                grant_type=
                """.utf8))
            let outcome = await connection.closure(within: .seconds(1) + Self.slack)
            #expect(outcome.closed)
            #expect(outcome.after >= .milliseconds(900))
        }
    }

    @Test("a body that keeps arriving slowly is read to the end, however long it takes in all")
    func slowButSteadyBodyIsAnswered() async throws {
        try await TestServer.with(.sqlite, configure: Self.limits(body: 3)) { server in
            let connection = try RawHTTPConnection(port: server.running.port)
            let body = Array("grant_type=password".utf8)
            try connection.send(Array("""
                POST /token HTTP/1.1\r
                Host: localhost\r
                Content-Type: application/x-www-form-urlencoded\r
                Content-Length: \(body.count)\r
                Connection: close\r
                \r

                """.utf8))
            // 19 bytes, 200 ms apart: longer than the timeout in all, never near it between bytes.
            for byte in body {
                try await Task.sleep(for: .milliseconds(200))
                try connection.send([byte])
            }
            let answer = try await connection.response()
            #expect(answer.hasPrefix("HTTP/1.1 401"), "no client authentication: \(answer.prefix(80))")
        }
    }

    @Test("connections past the cap that send nothing do not keep health checks from being answered")
    func healthIsAnsweredPastTheCap() async throws {
        let cap = ConnectionLimits.connectionCaps.lowerBound
        try await TestServer.with(.sqlite, configure: { $0.connections.maximumConnections = cap }) { server in
            let silent = try (0..<(cap * 3)).map { _ in try RawHTTPConnection(port: server.running.port) }
            let health = try RawHTTPConnection(port: server.running.port)
            try health.send(Array("GET /healthz HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n".utf8))
            let outcome = await health.closure(within: .seconds(5))
            #expect(outcome.received.hasPrefix("HTTP/1.1 200"), "\(outcome.received.prefix(80))")
            #expect(server.running.server.connections.count <= cap)
            // The oldest silent connections were closed to make room.
            var closed = 0
            for connection in silent.prefix(cap) where await connection.closure(within: .milliseconds(100)).closed {
                closed += 1
            }
            #expect(closed == cap)
        }
    }
}
