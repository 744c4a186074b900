import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
@testable import CountersignServer

/// Schemathesis, an independent fuzzer, drives a listening server from its own `/openapi.json`:
/// every operation, with examples, the coverage phase's positive and negative values, random
/// data, and stateful sequences along the document's links. It must find no 5xx, no status the
/// document does not list, no body or header contradicting it, no invalid request accepted, no
/// request without its credentials accepted, and no method a path does not take answered but
/// with 405. It prints how many operations and cases it tried.
///
/// The device API (requests signed by a device key) and the account pages (a browser session)
/// are reached without credentials only: the fuzzer holds neither, and the suite's own tests,
/// whose every answer is held to the same document, cover them signed in.
///
/// Not checked: that every valid request is accepted (`positive_data_acceptance`): a request
/// can fit the schema and still be refused for what the schema cannot say (an unknown client,
/// an expired attempt). The throttle of failed authentications is off on this server, or the
/// fuzzer's thousands of unauthenticated requests would turn every later answer into 429.
@Suite("Schemathesis against the OpenAPI document")
struct SchemathesisTests {
    static let schemathesis: URL? = {
        let env = URL(fileURLWithPath: "/usr/bin/env")
        guard (try? ChildProcess.runBlocking(env, ["schemathesis", "--version"])) != nil else {
            FileHandle.standardError.write(Data("SchemathesisTests: SKIPPED: schemathesis is not installed (pip install schemathesis)\n".utf8))
            return nil
        }
        return env
    }()

    /// Examples per operation and phase; `COUNTERSIGN_SCHEMATHESIS_EXAMPLES` raises it for a
    /// longer hunt. The seed is fixed so a run can be repeated; `COUNTERSIGN_SCHEMATHESIS_SEED`
    /// changes it.
    static let examples = ProcessInfo.processInfo.environment["COUNTERSIGN_SCHEMATHESIS_EXAMPLES"] ?? "12"
    static let seed = ProcessInfo.processInfo.environment["COUNTERSIGN_SCHEMATHESIS_SEED"] ?? "20261125"

    /// The fuzzer's server is a `countersign serve` process of its own, on SQLite, so that its
    /// thousands of connections are not this process's: the other tests' clients watch their
    /// sockets with `select`, which cannot see a descriptor numbered 1024 or above
    /// (`ServerSlots`). It runs beside the other tests, from the suite's first seconds.
    @Test(.enabled(if: schemathesis != nil, "schemathesis is not installed"))
    func fuzzingFindsNothingTheDocumentDoesNotSay() async throws {
        let env = try #require(Self.schemathesis)
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("schemathesis-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: scratch) }
        let (process, base, stdout, stderr) = try await CommandLineTests.serve(
            dataDirectory: scratch.appendingPathComponent("data").path, in: scratch, name: "server",
            environment: ["COUNTERSIGN_FAILED_AUTHENTICATION_LIMIT": "0"])
        defer {
            process.terminate()
            process.waitUntilExit()
        }
        do {
            try await fuzz(env, base: base, adminKey: try CommandLineTests.adminKey(printedTo: stdout), scratch: scratch)
        } catch {
            Issue.record("the server's log: \((try? String(contentsOf: stderr, encoding: .utf8))?.suffix(5_000) ?? "")")
            throw error
        }
    }

    func fuzz(_ env: URL, base: String, adminKey: String, scratch: URL) async throws {
        _ = try await Self.admin("POST", base + "/admin/v1/tenants/default/users", key: adminKey, json: ["username": "alice"])
        let client = try await Self.admin("POST", base + "/admin/v1/tenants/default/clients", key: adminKey, json: [
            "name": "Bank", "token_delivery_mode": "poll", "redirect_uris": ["https://bank.example/callback"],
        ])
        let clientID = try #require((client["client"] as? [String: Any])?["client_id"] as? String)
        let secret = try #require(client["client_secret"] as? String)
        _ = try await Self.admin("POST", base + "/admin/v1/tenants", key: adminKey, json: ["slug": "acme", "display_name": "Acme"])

        let directory = scratch.appendingPathComponent("schemathesis")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let configuration = directory.appendingPathComponent("schemathesis.toml")
        try Self.configuration(adminKey: adminKey, clientID: clientID, clientSecret: secret)
            .write(to: configuration, atomically: true, encoding: .utf8)
        // The fuzzer reuses the ids it reads in answers, its own key's among them: revoking
        // keys comes last, in a run of its own (with the creation of the keys it revokes),
        // so the first run keeps its credentials.
        let revocations = ["revokeSystemAdminKey", "revokeTenantAdminKey"]
        let keys = ["createSystemAdminKey", "createTenantAdminKey"] + revocations
        for (run, filter) in [("all but key revocation", revocations.flatMap { ["--exclude-operation-id", $0] }),
                              ("admin keys", keys.flatMap { ["--include-operation-id", $0] })] {
            let result = try await ChildProcess.result(env, [
                "schemathesis", "--no-color", "--config-file", configuration.path,
                "run", base + "/openapi.json",
                "--phases", "examples,coverage,fuzzing,stateful",
                "--max-examples", Self.examples, "--seed", Self.seed,
                // One worker: CPython 3.11's parser fails when two threads of hypothesis
                // describe their strategies at once ("AST constructor recursion depth mismatch").
                "--workers", "1",
                "--request-timeout", "30",
            ] + filter,
            environment: ProcessInfo.processInfo.environment.merging(["HOME": directory.path]) { $1 })
            let summary = result.output.components(separatedBy: "\n").drop { !$0.contains("SUMMARY") }.joined(separator: "\n")
            FileHandle.standardError.write(Data(
                "SchemathesisTests, \(run) (seed \(Self.seed), \(Self.examples) examples):\n\(summary)\n".utf8))
            #expect(result.status == 0, "\(run): \(result.output.suffix(20_000))")
            if run != "admin keys" {
                // The fuzzer's own key still works: it was not revoked before the last run.
                _ = try await Self.admin("GET", base + "/admin/v1/tenants", key: adminKey, json: nil)
            }
        }
    }

    /// An admin call to the fuzzer's server; any status but 2xx fails the test.
    static func admin(_ method: String, _ url: String, key: String, json: [String: Any]?) async throws -> [String: Any] {
        var request = URLRequest(url: try #require(URL(string: url)))
        request.httpMethod = method
        request.setValue("Bearer \(key)", forHTTPHeaderField: "Authorization")
        if let json {
            request.httpBody = try JSONSerialization.data(withJSONObject: json)
            request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        }
        let (data, response) = try await URLSession.shared.data(for: request)
        let status = (response as? HTTPURLResponse)?.statusCode ?? 0
        try #require((200..<300).contains(status), "\(method) \(url): \(status) \(String(decoding: data, as: UTF8.self))")
        return (try? JSONSerialization.jsonObject(with: data)) as? [String: Any] ?? [:]
    }

    /// The credentials of each security scheme, and where a check cannot apply. Every check
    /// runs unless switched off here.
    static func configuration(adminKey: String, clientID: String, clientSecret: String) -> String {
        """
        [checks]
        positive_data_acceptance.enabled = false

        [auth.openapi.adminKey]
        bearer = "\(adminKey)"

        [auth.openapi.clientSecretBasic]
        username = "\(clientID)"
        password = "\(clientSecret)"

        # RFC 6750 §3.1: a request to UserInfo without a token gets the bare challenge and no
        # body, while a refused token gets a JSON body; OpenAPI cannot say "this status has a
        # body only sometimes", so the media type and body of that 401 are not checked here
        # (the suite's own contract check reads both cases).
        [[operations]]
        include-path = "/userinfo"
        checks.content_type_conformance.enabled = false
        checks.response_schema_conformance.enabled = false

        # A tenant's settings that exist once set (its events webhook, its mail, its directory):
        # the stateful phase infers that creating a tenant creates them, and reads a correct 404
        # for a new tenant as "created resource not found" (ST302).
        [[operations]]
        include-path-regex = "^/admin/v1/tenants/[^/]+/(webhooks/events|mail|directory)$"
        checks.ensure_resource_availability.enabled = false

        """
    }
}
