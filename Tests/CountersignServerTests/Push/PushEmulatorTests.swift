import CountersignCore
import CountersignPushEmulator
import Crypto
import Foundation
import NIOSSL
import Synchronization
import Testing
@testable import CountersignPushEmulator

/// The push emulators themselves, driven by `curl --http2` as an independent client: if these
/// pass, a failing sender test points at the sender, not at its peer.
@Suite("Push emulators", .enabled(if: EmulatorTestTools.available))
struct PushEmulatorTests {
    // MARK: APNs, token authentication

    @Test("a push with a valid provider token is accepted with 200 and its apns-id echoed")
    func apnsAcceptsTokenAuthenticatedPush() async throws {
        let key = ProviderKey()
        let apns = try await APNsEmulator.start(pki: try EmulatorTestTools.pki(), authentication: .token([key.emulatorKey]))
        defer { Task { try await apns.stop() } }
        let id = UUID().uuidString.lowercased()
        let token = try key.token()
        let answer = try await Curl.post(apns.baseURL + "/3/device/\(Self.deviceToken)", headers: [
            "authorization: bearer \(token)", "apns-topic: com.example.bank", "apns-push-type: alert",
            "apns-priority: 10", "apns-id: \(id)",
        ], body: #"{"aps":{"alert":{"title":"Sign in?"},"relevance-score":0.5},"r":"abc"}"#)

        #expect(answer.status == 200)
        #expect(answer.headers["apns-id"] == id)
        #expect(answer.body.isEmpty)
        let received = try #require(apns.notifications().first)
        #expect(received.deviceToken == Self.deviceToken)
        #expect(received.header("apns-topic") == "com.example.bank")
        #expect(received.providerToken == token)
        #expect(received.connection == 1)
        #expect(apns.acceptedCount == 1 && apns.duplicateCount == 0 && apns.connectionCount == 1)
        #expect(apns.providerTokens() == [token])
    }

    @Test("without an apns-id the answer carries a fresh lowercase UUID")
    func apnsMakesUpMissingMessageID() async throws {
        let key = ProviderKey()
        let apns = try await APNsEmulator.start(pki: try EmulatorTestTools.pki(), authentication: .token([key.emulatorKey]))
        defer { Task { try await apns.stop() } }
        let answer = try await Curl.post(apns.baseURL + "/3/device/\(Self.deviceToken)",
                                         headers: ["authorization: bearer \(try key.token())", "apns-topic: t"],
                                         body: #"{"aps":{}}"#)
        let id = try #require(answer.headers["apns-id"])
        #expect(answer.status == 200 && UUID(uuidString: id) != nil && id == id.lowercased())
    }

    @Test("faults are answered with Apple's status and reason", arguments: [
        APNsEmulatorFault(["apns-topic: t"], path: "/3/device/zz", status: 400, reason: "BadDeviceToken"),
        APNsEmulatorFault([], status: 400, reason: "MissingTopic"),
        APNsEmulatorFault(["apns-topic: t", "apns-topic: u"], status: 400, reason: "DuplicateHeaders"),
        APNsEmulatorFault(["apns-topic: t", "apns-push-type: loud"], status: 400, reason: "InvalidPushType"),
        APNsEmulatorFault(["apns-topic: t", "apns-priority: 7"], status: 400, reason: "BadPriority"),
        APNsEmulatorFault(["apns-topic: t", "apns-expiration: soon"], status: 400, reason: "BadExpirationDate"),
        APNsEmulatorFault(["apns-topic: t", "apns-collapse-id: \(String(repeating: "c", count: 65))"], status: 400,
                  reason: "BadCollapseId"),
        APNsEmulatorFault(["apns-topic: t", "apns-id: 1234"], status: 400, reason: "BadMessageId"),
        APNsEmulatorFault(["apns-topic: t"], body: #"{"alert":"no aps"}"#, status: 400, reason: "BadPayload"),
        APNsEmulatorFault(["apns-topic: t"], body: #"{"aps":{}"#, status: 400, reason: "BadPayload"),
        APNsEmulatorFault(["apns-topic: t"], body: #"{"aps":{"x":"\#(String(repeating: "x", count: 4100))"}}"#, status: 413,
                  reason: "PayloadTooLarge"),
        APNsEmulatorFault(["apns-topic: t"], path: "/3/devices/abc", status: 404, reason: "BadPath"),
    ])
    func apnsRefusesFault(_ fault: APNsEmulatorFault) async throws {
        let key = ProviderKey()
        let apns = try await APNsEmulator.start(pki: try EmulatorTestTools.pki(), authentication: .token([key.emulatorKey]))
        defer { Task { try await apns.stop() } }
        let answer = try await Curl.post(apns.baseURL + (fault.path ?? "/3/device/\(Self.deviceToken)"),
                                         headers: ["authorization: bearer \(try key.token())"] + fault.headers,
                                         body: fault.body)
        #expect(answer.status == fault.status)
        #expect(answer.json?["reason"]?.stringValue == fault.reason)
        #expect(answer.headers["content-type"]?.hasPrefix("application/json") == true)
        #expect(apns.acceptedCount == 0 && apns.notifications().count == 1)
    }

    @Test("a body larger than every flow-control window still arrives whole, and is refused as too large")
    func apnsReadsBodiesBeyondFlowControlWindows() async throws {
        let key = ProviderKey()
        let apns = try await APNsEmulator.start(pki: try EmulatorTestTools.pki(), authentication: .token([key.emulatorKey]))
        defer { Task { try await apns.stop() } }
        let body = #"{"aps":{"x":""# + String(repeating: "x", count: 20 << 20) + #""}}"#
        let answer = try await Curl.post(apns.baseURL + "/3/device/\(Self.deviceToken)",
                                         headers: ["authorization: bearer \(try key.token())", "apns-topic: t"], body: body)
        #expect(answer.status == 413)
        #expect(apns.notifications().first?.body.count == body.utf8.count)
    }

    @Test("a provider token signed by another key is refused with 403 InvalidProviderToken")
    func apnsRefusesForgedProviderToken() async throws {
        let key = ProviderKey()
        let forger = ProviderKey()
        let apns = try await APNsEmulator.start(pki: try EmulatorTestTools.pki(), authentication: .token([key.emulatorKey]))
        defer { Task { try await apns.stop() } }
        let answer = try await Curl.post(apns.baseURL + "/3/device/\(Self.deviceToken)",
                                         headers: ["authorization: bearer \(try forger.token())", "apns-topic: t"],
                                         body: #"{"aps":{}}"#)
        #expect(answer.status == 403)
        #expect(answer.json?["reason"]?.stringValue == "InvalidProviderToken")
    }

    @Test("a token older than an hour is expired")
    func apnsEnforcesTokenAge() async throws {
        let key = ProviderKey()
        let clock = ManualClock()
        let apns = try await APNsEmulator.start(pki: try EmulatorTestTools.pki(), authentication: .token([key.emulatorKey]),
                                                now: clock.function)
        defer { Task { try await apns.stop() } }
        let url = apns.baseURL + "/3/device/\(Self.deviceToken)"
        func send(_ token: String) async throws -> Curl.Answer {
            try await Curl.post(url, headers: ["authorization: bearer \(token)", "apns-topic: t"], body: #"{"aps":{}}"#)
        }
        let first = try key.token(issuedAt: clock.now)
        #expect(try await send(first).status == 200)
        clock.advance(by: 3601)
        #expect(try await send(first).json?["reason"]?.stringValue == "ExpiredProviderToken")
        #expect(try await send(try key.token(issuedAt: clock.now)).status == 200)
    }

    @Test("a new token for a key within 20 minutes of the last is too many updates, whichever connection brings it")
    func apnsEnforcesTokenTurnoverPerKey() throws {
        let key = ProviderKey()
        let other = ProviderKey(keyID: "OTHER12345")
        var registry = ProviderTokenRegistry(keys: [key.keyID: key.emulatorKey, other.keyID: other.emulatorKey])
        let now = Date()
        let first = try key.token(issuedAt: now)
        let second = try key.token(issuedAt: now.addingTimeInterval(60))
        #expect(registry.admit(first, now: now) == nil)
        #expect(registry.admit(second, now: now.addingTimeInterval(60)) == .tooManyProviderTokenUpdates)
        #expect(registry.admit(first, now: now.addingTimeInterval(120)) == nil, "the admitted token stays good")
        #expect(registry.admit(try other.token(issuedAt: now.addingTimeInterval(60)), now: now.addingTimeInterval(60)) == nil,
                "another key has its own turnover")
        let later = try key.token(issuedAt: now.addingTimeInterval(1201))
        #expect(registry.admit(later, now: now.addingTimeInterval(1201)) == nil)
    }

    @Test("a scripted 410 carries Apple's reason and the timestamp")
    func apnsScriptedUnregisteredCarriesTimestamp() async throws {
        let key = ProviderKey()
        let apns = try await APNsEmulator.start(pki: try EmulatorTestTools.pki(), authentication: .token([key.emulatorKey]),
                                                respond: { _ in .reject(status: 410, reason: "Unregistered", timestamp: 1_700_000_000_123) })
        defer { Task { try await apns.stop() } }
        let answer = try await Curl.post(apns.baseURL + "/3/device/\(Self.deviceToken)",
                                         headers: ["authorization: bearer \(try key.token())", "apns-topic: t"],
                                         body: #"{"aps":{}}"#)
        #expect(answer.status == 410)
        #expect(answer.json == .object(["reason": .string("Unregistered"), "timestamp": .integer(1_700_000_000_123)]))
        #expect(apns.acceptedCount == 0 && apns.rejectedCount == 1)
    }

    // MARK: APNs, certificate authentication

    @Test("certificate mode records the client certificate's common name")
    func apnsCertificateModeRecordsSubject() async throws {
        let pki = try EmulatorTestTools.pki()
        let bundle = pki.directory.appendingPathComponent("apns-\(UUID().uuidString).p12")
        try pki.clientPKCS12(commonName: "Apple Push Services: com.example.bank", topic: "com.example.bank",
                             password: "s3cret").write(to: bundle)
        let apns = try await APNsEmulator.start(pki: pki, authentication: .certificate(trustedCAPath: pki.caCertificatePath))
        defer { Task { try await apns.stop() } }
        let url = apns.baseURL + "/3/device/\(Self.deviceToken)"

        let answer = try await Curl.post(url, headers: [], body: #"{"aps":{}}"#,
                                         options: ["--cert", bundle.path + ":s3cret", "--cert-type", "P12"])
        #expect(answer.status == 200)
        #expect(apns.notifications().first?.clientCertificateSubject == "Apple Push Services: com.example.bank")
        await #expect(throws: ChildProcess.Failure.self) {
            _ = try await Curl.post(url, headers: [], body: #"{"aps":{}}"#)
        }
    }

    @Test("client PKCS#12 bundles, expired ones included, load in NIOSSL")
    func clientBundlesLoad() throws {
        let pki = try EmulatorTestTools.pki()
        let valid = try pki.clientPKCS12(commonName: "c", topic: "com.example.bank", password: "pw")
        let expired = try pki.clientPKCS12(commonName: "c", topic: nil, password: "pw", expired: true)
        #expect(try NIOSSLPKCS12Bundle(buffer: Array(valid), passphrase: Array("pw".utf8)).certificateChain.count == 1)
        #expect(try NIOSSLPKCS12Bundle(buffer: Array(expired), passphrase: Array("pw".utf8)).certificateChain.count == 1)
    }

    /// Read back with openssl: NIOSSLPKCS12Bundle stops the process (fatalError) on a bundle
    /// without a key, so a sender must look for the key before handing a bundle to it.
    @Test("a bundle made without its key holds the certificate alone")
    func certificateOnlyBundleHasNoKey() async throws {
        let pki = try EmulatorTestTools.pki()
        let file = pki.directory.appendingPathComponent("certificate-only-\(UUID().uuidString).p12")
        try pki.clientPKCS12(commonName: "c", topic: nil, password: "pw", includeKey: false).write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        let openssl = try #require(ChildProcess.find("openssl"))
        let contents = try await ChildProcess.run(openssl, ["pkcs12", "-in", file.path, "-passin", "env:PW", "-nodes"],
                                            environment: ["PW": "pw"])
        #expect(contents.contains("BEGIN CERTIFICATE"))
        #expect(!contents.contains("PRIVATE KEY"))
    }

    // MARK: FCM

    @Test("an assertion is exchanged for an access token, and a send with it is accepted")
    func fcmTokenExchangeThenSend() async throws {
        let account = try FCMAccount.make()
        let fcm = try await FCMEmulator.start(pki: try EmulatorTestTools.pki(), account: account)
        defer { Task { try await fcm.stop() } }
        let grant = try await Curl.tokenRequest(fcm.tokenURL, assertion: try account.signedAssertion(audience: fcm.tokenURL))
        #expect(grant.status == 200)
        #expect(grant.json?["token_type"]?.stringValue == "Bearer" && grant.json?["expires_in"]?.integerValue == 3599)
        let accessToken = try #require(grant.json?["access_token"]?.stringValue)

        let send = try await Curl.post(fcm.baseURL + "/v1/projects/\(account.projectID)/messages:send",
                                       headers: ["authorization: Bearer \(accessToken)", "content-type: application/json"],
                                       body: #"{"message":{"token":"abc","data":{"r":"1"},"android":{"priority":"HIGH","ttl":"300s"}}}"#)
        #expect(send.status == 200)
        #expect(send.json?["name"]?.stringValue?.hasPrefix("projects/\(account.projectID)/messages/") == true)
        let message = try #require(fcm.messages().first)
        #expect(message.token == "abc" && message.data == ["r": "1"] && message.androidPriority == "HIGH"
            && message.androidTTL == "300s" && message.accessToken == accessToken)

        fcm.revokeAccessTokens()
        let revoked = try await Curl.post(fcm.baseURL + "/v1/projects/\(account.projectID)/messages:send",
                                          headers: ["authorization: Bearer \(accessToken)"], body: #"{"message":{"token":"abc"}}"#)
        #expect(revoked.status == 401 && revoked.json?["error"]?["status"]?.stringValue == "UNAUTHENTICATED")
    }

    @Test("an assertion with a bad signature or for another audience is an invalid_grant")
    func fcmRefusesBadAssertion() async throws {
        let account = try FCMAccount.make()
        let fcm = try await FCMEmulator.start(pki: try EmulatorTestTools.pki(), account: account)
        defer { Task { try await fcm.stop() } }
        let stranger = try FCMAccount.make()
        for assertion in [try stranger.signedAssertion(audience: fcm.tokenURL),
                          try account.signedAssertion(audience: "https://example.com/token")] {
            let answer = try await Curl.tokenRequest(fcm.tokenURL, assertion: assertion)
            #expect(answer.status == 400 && answer.json?["error"]?.stringValue == "invalid_grant")
        }
        #expect(fcm.tokenRequestCount == 2 && fcm.assertions().count == 2)
    }

    @Test("a scripted 429 is Google's error body with the FcmError code and retry-after")
    func fcmScriptedQuotaError() async throws {
        let account = try FCMAccount.make()
        let fcm = try await FCMEmulator.start(pki: try EmulatorTestTools.pki(), account: account, respond: { _ in
            .reject(httpStatus: 429, status: "RESOURCE_EXHAUSTED", errorCode: "QUOTA_EXCEEDED", message: "slow down")
        })
        defer { Task { try await fcm.stop() } }
        let grant = try await Curl.tokenRequest(fcm.tokenURL, assertion: try account.signedAssertion(audience: account.tokenURI))
        let accessToken = try #require(grant.json?["access_token"]?.stringValue)
        let answer = try await Curl.post(fcm.baseURL + "/v1/projects/\(account.projectID)/messages:send",
                                         headers: ["authorization: Bearer \(accessToken)"], body: #"{"message":{"token":"abc"}}"#)
        #expect(answer.status == 429 && answer.headers["retry-after"] == "1")
        #expect(answer.json?["error"]?["details"] == .array([.object([
            "@type": .string("type.googleapis.com/google.firebase.fcm.v1.FcmError"), "errorCode": .string("QUOTA_EXCEEDED"),
        ])]))
    }

    static let deviceToken = String(repeating: "0a1b2c3d", count: 8)
}

/// One request APNs must refuse, and how.
struct APNsEmulatorFault: Sendable, CustomTestStringConvertible {
    var headers: [String]
    var path: String?
    var body: String
    var status: Int
    var reason: String

    init(_ headers: [String], path: String? = nil, body: String = #"{"aps":{}}"#, status: Int, reason: String) {
        self.headers = headers
        self.path = path
        self.body = body
        self.status = status
        self.reason = reason
    }

    var testDescription: String { reason }
}

/// An APNs auth key and the provider tokens it signs.
private struct ProviderKey {
    var keyID = "KEY1234567"
    let teamID = "TEAM123456"
    let key = P256.Signing.PrivateKey()

    var emulatorKey: APNsEmulator.APNsProviderKey {
        APNsEmulator.APNsProviderKey(keyID: keyID, teamID: teamID, publicKey: key.publicKey)
    }

    /// A new token each call: ECDSA signatures are randomised, so two are never the same string.
    func token(issuedAt: Date = Date()) throws -> String {
        let claims = JSONValue.object(["iss": .string(teamID), "iat": .integer(Int64(issuedAt.timeIntervalSince1970))])
        return try CompactJWS.sign(header: ["kid": .string(keyID)], payload: claims.canonicalData, signer: key).serialized
    }
}

private enum FCMAccount {
    static func make() throws -> FCMEmulator.ServiceAccount {
        try FCMEmulator.ServiceAccount.make(projectID: "bank-app-1", clientEmail: "push@bank-app-1.iam.gserviceaccount.com",
                                            tokenURI: "https://oauth2.googleapis.com/token")
    }
}

/// A clock the test moves by hand.
private final class ManualClock: Sendable {
    private let current = Mutex(Date())
    var now: Date { current.withLock { $0 } }
    var function: @Sendable () -> Date { { self.now } }
    func advance(by seconds: TimeInterval) { current.withLock { $0.addTimeInterval(seconds) } }
}

/// The command-line tools these tests need: openssl for the certificates, curl with HTTP/2.
private enum EmulatorTestTools {
    static let available: Bool = {
        let missing = [EmulatorPKI.isAvailable ? nil : "the openssl command", Curl.supportsHTTP2 ? nil : "curl with HTTP/2"]
            .compactMap { $0 }
        if !missing.isEmpty {
            FileHandle.standardError.write(Data("SKIPPED: push emulator tests need \(missing.joined(separator: " and "))\n".utf8))
        }
        return missing.isEmpty
    }()

    /// One CA and server certificate for the whole run: making them takes several openssl calls.
    private static let shared = Result {
        try EmulatorPKI.make(in: FileManager.default.temporaryDirectory
            .appendingPathComponent("countersign-emulator-pki-\(UUID().uuidString)"))
    }

    static func pki() throws -> EmulatorPKI { try shared.get() }
}

/// `curl --http2`, run as a child process, trusting the emulator CA.
private enum Curl {
    struct Answer {
        var status: Int
        /// Lowercased names; the last value of each.
        var headers: [String: String]
        var body: Data
        var json: JSONValue? { try? JSONValue(parsing: body) }
    }

    static let executable = ChildProcess.find("curl")

    static let supportsHTTP2: Bool = {
        guard let executable, let output = try? ChildProcess.runBlocking(executable, ["--version"]) else { return false }
        return output.contains("HTTP2")
    }()

    static func post(_ url: String, headers: [String], body: String, options: [String] = []) async throws -> Answer {
        let workspace = FileManager.default.temporaryDirectory.appendingPathComponent("curl-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: workspace, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: workspace) }
        let request = workspace.appendingPathComponent("request")
        let head = workspace.appendingPathComponent("head")
        let response = workspace.appendingPathComponent("response")
        try Data(body.utf8).write(to: request)
        var arguments = ["--silent", "--show-error", "--http2", "--max-time", "20",
                         "--cacert", try EmulatorTestTools.pki().caCertificatePath,
                         "--request", "POST", "--data-binary", "@" + request.path,
                         "--dump-header", head.path, "--output", response.path]
        for header in headers { arguments += ["--header", header] }
        arguments += options + [url]
        guard let executable else { throw ChildProcess.Failure(status: -1, standardError: "curl is not on PATH") }
        _ = try await ChildProcess.run(executable, arguments)

        let lines = try String(contentsOf: head, encoding: .utf8).split(whereSeparator: \.isNewline)
        guard let statusLine = lines.first, statusLine.hasPrefix("HTTP/2 "),
              let status = Int(statusLine.split(separator: " ")[1]) else {
            throw ChildProcess.Failure(status: 0, standardError: "not an HTTP/2 answer: \(lines.first ?? "")")
        }
        var fields: [String: String] = [:]
        for line in lines.dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { continue }
            fields[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        }
        return Answer(status: status, headers: fields, body: try Data(contentsOf: response))
    }

    /// A token request of the JWT-bearer grant.
    static func tokenRequest(_ url: String, assertion: String) async throws -> Answer {
        try await post(url, headers: ["content-type: application/x-www-form-urlencoded"],
                       body: "grant_type=urn%3Aietf%3Aparams%3Aoauth%3Agrant-type%3Ajwt-bearer&assertion=\(assertion)")
    }

}
