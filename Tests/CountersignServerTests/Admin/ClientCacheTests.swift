import Foundation
import Testing
@testable import CountersignServer

/// Clients are read from memory on the hot path; every change to one must be seen by the next
/// request, on the node that made it and on the others.
@Suite("Cached clients")
struct ClientCacheTests {
    /// Client authentication alone, over a socket to `port` (URLSession on Linux stalls on a 401
    /// Basic challenge): an unknown `auth_req_id` is `invalid_grant` for an authenticated client,
    /// `invalid_client` for anyone else.
    private static func authenticates(_ client: TestClient, port: Int) async throws -> Bool {
        let body = "grant_type=urn%3Aopenid%3Aparams%3Agrant-type%3Aciba&auth_req_id=none"
        let credentials = Data("\(client.id):\(client.secret)".utf8).base64EncodedString()
        let request = Array("""
            POST /token HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\
            Content-Type: application/x-www-form-urlencoded\r\nContent-Length: \(body.utf8.count)\r\n\
            Authorization: Basic \(credentials)\r\n\r\n\(body)
            """.utf8)
        let answer = try await onThreadOfItsOwn {
            let connection = try RawHTTPConnection(port: port)
            try connection.send(request)
            return try connection.receiveAll()
        }
        if answer.contains("\"invalid_grant\"") { return true }
        #expect(answer.contains("\"invalid_client\""), "unexpected answer: \(answer.prefix(200))")
        return false
    }

    @Test("a rotated secret is refused at once, and the new one accepted", arguments: Engine.available)
    func rotatedSecretIsRefusedAtOnce(engine: Engine) async throws {
        try await TestServer.with(engine) { server in
            // On PostgreSQL the cache keeps nothing until the node listens for changes, and
            // forgets everything when it starts to: on a busy machine that can come after the
            // first request.
            if engine == .postgres { try await waitUntil { server.server.caches.hearsChanges } }
            let client = try await server.createClient()
            #expect(try await Self.authenticates(client, port: server.running.port))
            #expect(server.server.caches.clients.value(for: client.id) != nil)
            let rotated = try await server.admin("POST", "/admin/v1/tenants/default/clients/\(client.id)/secret")
            let secret = try #require(rotated["client_secret"] as? String)
            #expect(try await !Self.authenticates(client, port: server.running.port))
            #expect(try await Self.authenticates(TestClient(id: client.id, secret: secret), port: server.running.port))
        }
    }

    @Test("a deleted client is refused at once", arguments: Engine.available)
    func deletedClientIsRefusedAtOnce(engine: Engine) async throws {
        try await TestServer.with(engine) { server in
            let client = try await server.createClient()
            #expect(try await Self.authenticates(client, port: server.running.port))
            #expect(try await server.admin("DELETE", "/admin/v1/tenants/default/clients/\(client.id)").status == 204)
            #expect(try await !Self.authenticates(client, port: server.running.port))
        }
    }

    @Test("a client's new scopes apply to its next request", arguments: Engine.available)
    func changedScopesApplyAtOnce(engine: Engine) async throws {
        try await TestServer.with(engine) { server in
            _ = try await server.enrolledUser("mila")
            let client = try await server.createClient()
            let parameters = [("scope", "openid profile"), ("login_hint", "mila")]
            #expect(try await server.bcAuthorize(client, parameters).error == "invalid_scope")
            let updated = try await server.admin(
                "PATCH", "/admin/v1/tenants/default/clients/\(client.id)", json: ["scopes": ["openid", "profile"]])
            #expect(updated.status == 200, "\(updated.errorDescription ?? "")")
            #expect(try await server.bcAuthorize(client, parameters).status == 200)
        }
    }

    @Test("a secret rotated through one node is refused by another that had the client in memory (PostgreSQL)",
          .enabled(if: Engine.available.contains(.postgres)))
    func rotationReachesTheOtherNodes() async throws {
        try await TestServer.with(.postgres) { nodeA in
            try await nodeA.withSecondNode { nodeB in
                try await waitUntil { nodeB.server.caches.hearsChanges }
                let client = try await nodeA.createClient()
                #expect(try await Self.authenticates(client, port: nodeB.port))
                #expect(nodeB.server.caches.clients.value(for: client.id) != nil)

                let rotated = try await nodeA.admin("POST", "/admin/v1/tenants/default/clients/\(client.id)/secret")
                let secret = try #require(rotated["client_secret"] as? String)
                // The announcement arrives within milliseconds; the cache's own lifetime is 30 s.
                try await waitUntil { nodeB.server.caches.clients.value(for: client.id) == nil }
                #expect(try await !Self.authenticates(client, port: nodeB.port))
                #expect(try await Self.authenticates(TestClient(id: client.id, secret: secret), port: nodeB.port))
            }
        }
    }
}

@Suite("Record cache")
struct RecordCacheTests {
    @Test("a remembered value is served until forgotten")
    func servesUntilForgotten() {
        let cache = RecordCache<String, Int>(lifetime: .seconds(60), capacity: 10)
        cache.remember(1, for: "a", readAt: cache.generation)
        #expect(cache.value(for: "a") == 1)
        cache.forget("a")
        #expect(cache.value(for: "a") == nil)
    }

    @Test("a read that began before a change does not store what it read")
    func readBeforeChangeIsNotStored() {
        let cache = RecordCache<String, Int>(lifetime: .seconds(60), capacity: 10)
        let generation = cache.generation
        // The row is read here; meanwhile another request changes it and forgets it.
        cache.forget("a")
        cache.remember(1, for: "a", readAt: generation)
        #expect(cache.value(for: "a") == nil)
        cache.remember(2, for: "a", readAt: cache.generation)
        #expect(cache.value(for: "a") == 2)
    }

    @Test("an entry lapses after its lifetime")
    func entriesLapse() async throws {
        let cache = RecordCache<String, Int>(lifetime: .milliseconds(50), capacity: 10)
        cache.remember(1, for: "a", readAt: cache.generation)
        try await Task.sleep(for: .milliseconds(80))
        #expect(cache.value(for: "a") == nil)
    }

    @Test("a full cache makes room, and never holds more than its capacity")
    func boundedByCapacity() {
        let cache = RecordCache<Int, Int>(lifetime: .seconds(60), capacity: 4)
        for key in 0..<10 {
            cache.remember(key, for: key, readAt: cache.generation)
            #expect(cache.count <= 4)
        }
        #expect(cache.value(for: 9) == 9)
    }

    @Test("forgetting everything refuses every read under way")
    func forgetAllRefusesReadsUnderWay() {
        let cache = RecordCache<String, Int>(lifetime: .seconds(60), capacity: 10)
        cache.remember(1, for: "a", readAt: cache.generation)
        let generation = cache.generation
        cache.forgetAll()
        cache.remember(2, for: "b", readAt: generation)
        #expect(cache.value(for: "a") == nil)
        #expect(cache.value(for: "b") == nil)
    }
}
