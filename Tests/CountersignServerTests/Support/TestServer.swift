import CountersignCore
import CountersignKit
import Foundation
import Logging
import Testing
@testable import CountersignServer
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The real server on a free port, on a scratch database, with a clock the test moves.
struct TestServer: Sendable {
    let running: CountersignServer.Running
    let scratch: ScratchDatabase
    let clock: TestClock
    /// The bootstrap system key, holding every right.
    let adminKey: String

    var base: String { running.baseURL }
    var services: ServerServices { running.server.services }

    static func configuration(_ scratch: ScratchDatabase, clock: TestClock, masterKey: String) -> ServerConfiguration {
        var configuration = ServerConfiguration(dataDirectory: scratch.directory.appendingPathComponent("data"))
        configuration.port = 0
        configuration.databaseURL = scratch.postgresURL
        // Dozens of test servers share one PostgreSQL; a small pool also shows any code that
        // would wait for a second connection while holding one.
        configuration.databasePoolSize = PostgresDatabase.poolSizes.lowerBound
        configuration.databaseConnectionWait = ScratchDatabase.busyWait
        configuration.masterKey = masterKey
        configuration.now = clock.function
        // Streams notice an expiry within this time of the test clock passing it.
        configuration.liveStreamKeepalive = .milliseconds(200)
        return configuration
    }

    static func randomMasterKey() -> String { MasterKey.generate().base64 }

    /// Runs `body` against a fresh server and always stops it.
    /// `configure` adjusts the configuration first (push endpoints, for one).
    /// Waits for one of the process's server slots first (`ServerSlots`).
    /// `logger` is the server's (a test that reads what the server logs passes its own).
    static func with(_ engine: Engine, clock: TestClock = TestClock(), logger: Logger = testLogger,
                     configure: (inout ServerConfiguration) -> Void = { _ in },
                     _ body: (TestServer) async throws -> Void) async throws {
        try await ServerSlots.run {
            try await withoutSlot(engine, clock: clock, logger: logger, configure: configure, body)
        }
    }

    private static func withoutSlot(_ engine: Engine, clock: TestClock, logger: Logger,
                                    configure: (inout ServerConfiguration) -> Void,
                                    _ body: (TestServer) async throws -> Void) async throws {
        let scratch = try await ScratchDatabase.make(engine)
        let server: CountersignServer
        do {
            var configuration = configuration(scratch, clock: clock, masterKey: randomMasterKey())
            configure(&configuration)
            server = try await CountersignServer.make(configuration: configuration, logger: logger)
        } catch {
            await scratch.destroy()
            throw error
        }
        let running = try await server.start()
        let test = TestServer(running: running, scratch: scratch, clock: clock, adminKey: try #require(server.bootstrapAdminKey))
        do {
            try await body(test)
        } catch {
            try? await running.stop()
            await scratch.destroy()
            throw error
        }
        try await running.stop()
        await scratch.destroy()
    }

    /// A device on this machine: CountersignKit with a file key store in a scratch directory,
    /// dating its signatures by the test clock.
    func authenticator() -> (CountersignAuthenticator, FileKeyStore) {
        let store = FileKeyStore(root: scratch.directory.appendingPathComponent("device-\(UUID().uuidString)"))
        return (CountersignAuthenticator(keyStore: store, now: clock.function), store)
    }

    // MARK: - HTTP

    struct Answer: Sendable {
        let status: Int
        let data: Data
        let headers: [String: String]

        var json: [String: any Sendable]? {
            (try? JSONSerialization.jsonObject(with: data)) as? [String: any Sendable]
        }
        var error: String? { json?["error"] as? String }
        var errorDescription: String? { json?["error_description"] as? String }
        subscript(key: String) -> (any Sendable)? { json?[key] }
        func header(_ name: String) -> String? {
            headers.first { $0.key.lowercased() == name.lowercased() }?.value
        }
    }

    /// Sends a request to `path` (relative to the server). `key` nil sends no Authorization.
    func call(
        _ method: String, _ path: String, key: String? = nil, json: [String: any Sendable]? = nil, body: Data? = nil,
        headers: [String: String] = [:], base: String? = nil
    ) async throws -> Answer {
        var request = URLRequest(url: try #require(URL(string: (base ?? self.base) + path)))
        request.httpMethod = method
        if let key { request.setValue("Bearer \(key)", forHTTPHeaderField: "Authorization") }
        if let json {
            request.httpBody = try JSONSerialization.data(withJSONObject: json)
            request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        } else if let body {
            request.httpBody = body
            request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        }
        for (name, value) in headers { request.setValue(value, forHTTPHeaderField: name) }
        let (data, response) = try await URLSession.shared.data(for: request)
        let http = try #require(response as? HTTPURLResponse)
        var fields: [String: String] = [:]
        for (name, value) in http.allHeaderFields {
            if let name = name as? String, let value = value as? String { fields[name] = value }
        }
        return Answer(status: http.statusCode, data: data, headers: fields)
    }

    /// An admin call with the bootstrap key.
    func admin(_ method: String, _ path: String, json: [String: any Sendable]? = nil) async throws -> Answer {
        try await call(method, path, key: adminKey, json: json)
    }

    func createUser(_ username: String, tenant: String = "default") async throws -> String {
        let answer = try await admin("POST", "/admin/v1/tenants/\(tenant)/users", json: ["username": username])
        #expect(answer.status == 201, "creating \(username): \(answer.errorDescription ?? "")")
        return try #require(answer["id"] as? String)
    }

    func enrollmentURI(for userID: String, tenant: String = "default") async throws -> String {
        let answer = try await admin("POST", "/admin/v1/tenants/\(tenant)/users/\(userID)/enrollment-tickets")
        #expect(answer.status == 201, "ticket: \(answer.errorDescription ?? "")")
        return try #require(answer["enrollment_uri"] as? String)
    }
}
