import Foundation
import Testing

/// The payment example of docs/ciba.md run with the real `countersign` executable: the registry
/// set from a file, a client registered for the type, `ciba auth --authorization-details`, and
/// the terminal authenticator showing the payment it signs.
@Suite("The countersign command with authorization details")
struct CommandLineDetailsTests {
    static let registry = """
        {"types": {
          "payment_initiation": {"fields": {
            "actions": {"kind": "string_array", "max_length": 20},
            "instructedAmount": {"kind": "object", "required": true, "fields": {
              "amount": {"kind": "amount", "required": true},
              "currency": {"kind": "currency", "required": true}}},
            "creditorName": {"kind": "string", "max_length": 70, "required": true},
            "creditorAccount": {"kind": "object", "required": true, "fields": {
              "iban": {"kind": "string", "max_length": 34, "required": true}}}}}}}
        """

    static let payment = """
        [{"type":"payment_initiation","actions":["initiate"],"instructedAmount":{"currency":"EUR","amount":"123.50"},\
        "creditorName":"Merchant A","creditorAccount":{"iban":"DE02100100109307118603"}}]
        """

    @Test("admin authorization-types set, a client for the type, ciba auth with a payment; device watch shows and approves it",
          .enabled(if: CommandLineTests.executable != nil || ProcessInfo.processInfo.environment["CI"] == "true"))
    func paymentFromTheTerminal() async throws {
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("countersign-cli-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: scratch) }
        let (server, serverURL, stdout, _) = try await CommandLineTests.serve(
            dataDirectory: scratch.appendingPathComponent("data").path, in: scratch, name: "server")
        defer { if server.isRunning { server.terminate() } }
        var environment = ["COUNTERSIGN_SERVER": serverURL, "COUNTERSIGN_ADMIN_KEY": try CommandLineTests.adminKey(printedTo: stdout),
                           "COUNTERSIGN_DEVICE_STORE": scratch.appendingPathComponent("device").path]
        let run = { (arguments: [String], environment: [String: String]) in
            try await CommandLineTests.run(arguments, environment: environment)
        }

        let registryFile = scratch.appendingPathComponent("types.json")
        try Data(Self.registry.utf8).write(to: registryFile)
        let set = try await run(["admin", "authorization-types", "set", registryFile.path], environment)
        #expect(set.status == 0, "\(set.output)")
        let shown = try await run(["admin", "authorization-types", "show"], environment)
        #expect(shown.output.contains("creditorAccount"), "\(shown.output)")

        let user = try await run(["admin", "user", "create", "alice"], environment)
        let userID = try #require((try JSONSerialization.jsonObject(with: Data(user.output.utf8)) as? [String: Any])?["id"] as? String)
        let uri = try await run(["admin", "enroll", userID, "--uri-only"], environment)
        let enrolled = try await run(
            ["device", "enroll", uri.output.trimmingCharacters(in: .whitespacesAndNewlines), "--name", "terminal"], environment)
        #expect(enrolled.status == 0, "\(enrolled.output)")
        let created = try await run(
            ["admin", "client", "create", "--name", "Payments", "--authorization-details-types", "payment_initiation"], environment)
        let client = try #require(try JSONSerialization.jsonObject(with: Data(created.output.utf8)) as? [String: Any])
        let clientID = try #require((client["client"] as? [String: Any])?["client_id"] as? String)
        environment["COUNTERSIGN_CLIENT_SECRET"] = try #require(client["client_secret"] as? String)

        let (watcher, watched) = try await CommandLineTests.watchAndApprove(environment: environment, in: scratch)
        defer { if watcher.isRunning { watcher.terminate() } }

        let auth = try await run(
            ["ciba", "auth", "--client-id", clientID, "--user", "alice", "--authorization-details", Self.payment, "--wait"],
            environment)
        #expect(auth.status == 0, "\(auth.output)")
        #expect(auth.output.contains("\"authorization_details\""), "the token response grants the details: \(auth.output)")
        let log = try String(contentsOf: watched, encoding: .utf8)
        #expect(log.contains("payment_initiation: 123.50 EUR to Merchant A / DE02100100109307118603"), "\(log)")
        #expect(log.contains("creditorAccount.iban: DE02100100109307118603"), "\(log)")
        #expect(log.contains("approved"), "\(log)")

        let refused = try await run(
            ["ciba", "auth", "--client-id", clientID, "--user", "alice",
             "--authorization-details", #"[{"type":"payment_initiation","instructedAmount":{"currency":"EUR","amount":"12.5.0"}}]"#],
            environment)
        #expect(refused.status != 0)
        #expect(refused.output.contains("invalid_authorization_details"), "\(refused.output)")
        watcher.terminate()
        server.terminate()
        server.waitUntilExit()
    }
}
