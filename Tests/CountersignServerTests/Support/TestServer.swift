import CountersignCore
import CountersignKit
import Foundation
import HTTPTypes
import HummingbirdTesting
import Logging
import NIOCore
import Testing
@testable import CountersignServer
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The real server on a scratch database, with a clock the test moves: listening on a free port
/// (`with`, for end-to-end tests with the SDK, raw connections and several nodes), or with its
/// router driven in memory (`routed`, for feature tests that only send requests).
struct TestServer: Sendable {
    let server: CountersignServer
    /// The server listening on its port; nil when the router is driven in memory.
    let listening: CountersignServer.Running?
    /// The in-memory client of the router; nil when the server listens.
    let router: (any TestClientProtocol)?
    let scratch: ScratchDatabase
    let clock: TestClock
    /// The bootstrap system key, holding every right.
    let adminKey: String

    init(running: CountersignServer.Running, scratch: ScratchDatabase, clock: TestClock, adminKey: String) {
        self.server = running.server
        self.listening = running
        self.router = nil
        self.scratch = scratch
        self.clock = clock
        self.adminKey = adminKey
    }

    private init(routing server: CountersignServer, client: any TestClientProtocol, scratch: ScratchDatabase,
                 clock: TestClock, adminKey: String) {
        self.server = server
        self.listening = nil
        self.router = client
        self.scratch = scratch
        self.clock = clock
        self.adminKey = adminKey
    }

    /// The listening server, for the tests that need its socket (made with `with`, never `routed`).
    var running: CountersignServer.Running {
        guard let listening else { preconditionFailure("this test needs a listening server: start it with TestServer.with") }
        return listening
    }

    var base: String { server.origin.base }

    // The server's parts a test reads directly.
    var database: any Database { server.database }
    var sealer: SecretSealer { server.sealer }
    var tenants: TenantService { server.tenants }
    var tokenSigningKeys: TokenSigningKeys { server.tokenSigningKeys }
    var approvalEvents: ApprovalEvents { server.approvalEvents }
    var tenantEvents: TenantEvents { server.tenantEvents }
    var configuration: ServerConfiguration { server.configuration }
    var logger: Logger { server.logger }

    /// The public URL of a server driven in memory: its issuer and the base of its endpoints.
    static let routedBase = "https://countersign.test"

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

    /// Runs `body` against a fresh server on a scratch SQLite database whose router is driven
    /// in memory: no socket, no port, no dispatchers (nothing is pushed or called back).
    static func routed(clock: TestClock = TestClock(), logger: Logger = testLogger,
                       configure: (inout ServerConfiguration) -> Void = { _ in },
                       _ body: @Sendable (TestServer) async throws -> Void) async throws {
        try await ServerSlots.run { try await routedWithoutSlot(clock: clock, logger: logger, configure: configure, body) }
    }

    private static func routedWithoutSlot(clock: TestClock, logger: Logger, configure: (inout ServerConfiguration) -> Void,
                                          _ body: @Sendable (TestServer) async throws -> Void) async throws {
        let scratch = try await ScratchDatabase.make(.sqlite)
        let server: CountersignServer
        do {
            var configuration = configuration(scratch, clock: clock, masterKey: randomMasterKey())
            configuration.publicURL = URL(string: routedBase)
            configure(&configuration)
            server = try await CountersignServer.make(configuration: configuration, logger: logger)
        } catch {
            await scratch.destroy()
            throw error
        }
        let adminKey = server.bootstrapAdminKey ?? ""
        do {
            try await server.application.test(.router) { client in
                try await body(TestServer(routing: server, client: client, scratch: scratch, clock: clock, adminKey: adminKey))
            }
        } catch {
            await server.close()
            await scratch.destroy()
            throw error
        }
        await server.close()
        await scratch.destroy()
    }

    /// A device on this machine: CountersignKit with a file key store in a scratch directory,
    /// dating its signatures by the test clock.
    func authenticator() -> (CountersignAuthenticator, FileKeyStore) {
        let store = FileKeyStore(root: scratch.directory.appendingPathComponent("device-\(UUID().uuidString)"))
        return (CountersignAuthenticator(keyStore: store, transport: transport, now: clock.function), store)
    }

    /// How a device reaches this server: through the router in memory, or over HTTP.
    var transport: any HTTPTransport {
        if let router { return RouterTransport(client: router, base: base) }
        return ContractCheckedTransport(base: base)
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
        return try await send(request)
    }

    /// Sends `request` through the router in memory.
    static func route(_ request: URLRequest, path: String, through router: any TestClientProtocol) async throws -> Answer {
        var fields = HTTPFields()
        for (name, value) in request.allHTTPHeaderFields ?? [:] {
            fields.append(HTTPField(name: try #require(HTTPField.Name(name)), value: value))
        }
        let response = try await router.executeRequest(
            uri: path, method: HTTPRequest.Method(rawValue: request.httpMethod ?? "GET") ?? .get, headers: fields,
            body: request.httpBody.map { ByteBuffer(data: $0) })
        var headers: [String: String] = [:]
        // Several cookies set at once are kept one per line (no header value holds a newline).
        for field in response.headers {
            headers[field.name.canonicalName] = headers[field.name.canonicalName].map { $0 + "\n" + field.value } ?? field.value
        }
        let answer = Answer(status: response.status.code, data: Data(buffer: response.body), headers: headers)
        OpenAPIContract.shared.check(
            method: request.httpMethod ?? "GET", path: path, status: answer.status, headers: headers, body: answer.data)
        return answer
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
