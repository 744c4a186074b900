import CountersignCore
import CountersignKit
import Crypto
import Foundation
import Testing
@testable import CountersignServer
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A relying party's credentials.
struct TestClient: Sendable {
    let id: String
    let secret: String
}

/// A user with one enrolled SDK device, and the same device's keys for hand-made requests.
struct EnrolledUser: Sendable {
    let userID: String
    let username: String
    let kit: CountersignAuthenticator
    let enrollment: Enrollment
    let device: RawDevice
}

extension TestServer {
    func createClient(
        name: String = "Online banking", scopes: [String] = ["openid"], mode: String = "poll", tenant: String = "default"
    ) async throws -> TestClient {
        var body: [String: any Sendable] = ["name": name, "scopes": scopes, "token_delivery_mode": mode]
        if mode != "poll" { body["notification_endpoint"] = "https://rp.example.com/notify" }
        let answer = try await admin("POST", "/admin/v1/tenants/\(tenant)/clients", json: body)
        #expect(answer.status == 201, "client: \(answer.errorDescription ?? "")")
        let client = try #require(answer["client"] as? [String: any Sendable])
        return TestClient(id: try #require(client["client_id"] as? String),
                          secret: try #require(answer["client_secret"] as? String))
    }

    /// A user with one device enrolled through the SDK.
    func enrolledUser(_ username: String, tenant: String = "default") async throws -> EnrolledUser {
        let userID = try await createUser(username, tenant: tenant)
        return try await enrollDevice(for: userID, username: username, tenant: tenant, name: "\(username)'s phone")
    }

    /// Another device for an existing user.
    func enrollDevice(for userID: String, username: String, tenant: String = "default", name: String) async throws -> EnrolledUser {
        let (kit, store) = authenticator()
        let enrollment = try await kit.enroll(
            uri: try await enrollmentURI(for: userID, tenant: tenant), deviceName: name, platform: .linux)
        return EnrolledUser(userID: userID, username: username, kit: kit, enrollment: enrollment,
                            device: try await RawDevice(server: self, enrollment: enrollment, store: store))
    }

    /// A form POST, authenticated with HTTP Basic (`client_secret_basic`) when `client` is given.
    func form(_ path: String, _ parameters: [(String, String)], basic client: TestClient? = nil,
              headers: [String: String] = [:]) async throws -> Answer {
        var request = URLRequest(url: try #require(URL(string: base + path)))
        request.httpMethod = "POST"
        request.setValue("application/x-www-form-urlencoded", forHTTPHeaderField: "Content-Type")
        request.httpBody = Data(Self.formEncoded(parameters).utf8)
        if let client {
            let credentials = "\(Self.formComponent(client.id)):\(Self.formComponent(client.secret))"
            request.setValue("Basic \(Data(credentials.utf8).base64EncodedString())", forHTTPHeaderField: "Authorization")
        }
        for (name, value) in headers { request.setValue(value, forHTTPHeaderField: name) }
        return try await send(request)
    }

    func bcAuthorize(_ client: TestClient, _ parameters: [(String, String)]) async throws -> Answer {
        try await form("/bc-authorize", parameters, basic: client)
    }

    /// Starts a request for `login_hint`, expecting success; returns the `auth_req_id`.
    func startApproval(_ client: TestClient, user: String, bindingMessage: String? = "Pay 42.00 EUR to ACME",
                       extra: [(String, String)] = []) async throws -> String {
        var parameters = [("scope", "openid"), ("login_hint", user)]
        if let bindingMessage { parameters.append(("binding_message", bindingMessage)) }
        let answer = try await bcAuthorize(client, parameters + extra)
        #expect(answer.status == 200, "bc-authorize: \(answer.error ?? "") \(answer.errorDescription ?? "")")
        return try #require(answer["auth_req_id"] as? String)
    }

    func token(_ client: TestClient, _ authReqID: String) async throws -> Answer {
        try await form("/token", [("grant_type", "urn:openid:params:grant-type:ciba"), ("auth_req_id", authReqID)],
                       basic: client)
    }

    /// A request to `path` below the base URL, signed as device `deviceID` with `signer`.
    func deviceCall(_ method: String, _ path: String, body: Data, deviceID: String, signer: any ES256Signer) async throws -> Answer {
        try await send(try deviceRequest(method, path, body: body, deviceID: deviceID, signer: signer))
    }

    /// The signed request `deviceCall` sends, to send as often as a test wants (a replay).
    func deviceRequest(_ method: String, _ path: String, body: Data, deviceID: String, signer: any ES256Signer) throws
        -> URLRequest {
        let url = base + path
        var request = URLRequest(url: try #require(URL(string: url)))
        request.httpMethod = method
        if !body.isEmpty {
            request.httpBody = body
            request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        }
        let signature = try DeviceRequestSignature.sign(
            method: method, url: url, body: body, deviceID: deviceID, signer: signer, now: clock.now)
        request.setValue(signature.authorizationHeader, forHTTPHeaderField: "Authorization")
        return request
    }

    /// Sends `request`: through the router in memory when the server is routed and the request
    /// is for it, else over HTTP.
    func send(_ request: URLRequest) async throws -> Answer {
        if let router, let url = request.url?.absoluteString, url.hasPrefix(base) {
            return try await Self.route(request, path: String(url.dropFirst(base.count)), through: router)
        }
        // Only the pages' visitor asks for redirects as answers: a session with a delegate is kept
        // to the requests that need one.
        var request = request
        let keepRedirects = request.value(forHTTPHeaderField: Self.redirectsAsAnswers) != nil
        request.setValue(nil, forHTTPHeaderField: Self.redirectsAsAnswers)
        let (data, response) = try await (keepRedirects ? Self.session : URLSession.shared).data(for: request)
        let http = try #require(response as? HTTPURLResponse)
        var fields: [String: String] = [:]
        for (name, value) in http.allHeaderFields {
            if let name = name as? String, let value = value as? String { fields[name] = value }
        }
        if http.url?.path == request.url?.path, let url = request.url?.absoluteString, url.hasPrefix(base) {
            OpenAPIContract.shared.check(method: request.httpMethod ?? "GET", path: String(url.dropFirst(base.count)),
                                         status: http.statusCode, headers: fields, body: data)
        }
        return Answer(status: http.statusCode, data: data, headers: fields)
    }

    /// A request with this header gets a redirect as its answer, not followed (`PageVisitor`).
    static let redirectsAsAnswers = "X-Test-Redirects-As-Answers"
    /// The session that leaves redirects to the caller. It keeps no cookies: each `PageVisitor`
    /// is a browser of its own and sends its own, where a shared store would make every visitor
    /// one browser.
    static let session: URLSession = {
        let configuration = URLSessionConfiguration.ephemeral
        configuration.httpCookieStorage = nil
        configuration.httpShouldSetCookies = false
        return URLSession(configuration: configuration, delegate: RedirectsNotFollowed(), delegateQueue: nil)
    }()

    static func formEncoded(_ parameters: [(String, String)]) -> String {
        parameters.map { "\(formComponent($0.0))=\(formComponent($0.1))" }.joined(separator: "&")
    }

    /// `application/x-www-form-urlencoded` encoding of one name or value.
    static func formComponent(_ text: String) -> String {
        var allowed = CharacterSet.alphanumerics
        allowed.insert(charactersIn: "-._*")
        return (text.addingPercentEncoding(withAllowedCharacters: allowed) ?? text).replacingOccurrences(of: "%20", with: "+")
    }
}

/// One enrolled device driven by hand: signed requests built here from its keys, so that tests
/// can send what the SDK never would (another device's answer, a wrong digest, a replay).
struct RawDevice: Sendable {
    let server: TestServer
    let enrollment: Enrollment
    let keys: DeviceKeys
    /// The seed of the enrollment's X-Wing key, which the SDK announced beside the P-256 one.
    let xwingSeed: Data?

    init(server: TestServer, enrollment: Enrollment, store: FileKeyStore) async throws {
        self.server = server
        self.enrollment = enrollment
        keys = try await store.keys(for: enrollment.id)
        xwingSeed = try await store.factorMaterial(.xwingSeed, for: enrollment.id)
    }

    var id: String { enrollment.deviceID }

    /// A device-signed request to `path` below the server's base URL.
    func call(_ method: String, _ path: String, body: Data = Data(), signer: (any ES256Signer)? = nil) async throws -> TestServer.Answer {
        try await server.deviceCall(method, path, body: body, deviceID: id, signer: signer ?? keys.signer)
    }

    func inbox() async throws -> [PendingRequestEnvelope] {
        let answer = try await call("GET", "/device/v1/requests")
        #expect(answer.status == 200, "inbox: \(answer.errorDescription ?? "")")
        return try Timestamps.decoder().decode(PendingRequestList.self, from: answer.data).requests
    }

    /// Opens the sealed details with this device's key of their suite.
    func open(_ envelope: PendingRequestEnvelope) throws -> (details: TransactionDetails, plaintext: Data) {
        let (enc, ciphertext) = try envelope.details.parts()
        let info = SealedDetails.info(deviceID: id)
        let aad = SealedDetails.additionalData(requestID: envelope.id)
        let plaintext: Data
        if envelope.details.hpkeSuite == .xwing, #available(macOS 26, iOS 26, *) {
            let key = try XWingMLKEM768X25519.PrivateKey(seedRepresentation: try #require(xwingSeed), publicKey: nil)
            var recipient = try HPKE.Recipient(
                privateKey: key, ciphersuite: HPKESuite.xwingCiphersuite, info: info, encapsulatedKey: enc)
            plaintext = try recipient.open(ciphertext, authenticating: aad)
        } else {
            plaintext = try keys.agreement.open(ciphertext: ciphertext, encapsulatedKey: enc, info: info, authenticating: aad)
        }
        return (try TransactionDetails(canonicalBytes: plaintext), plaintext)
    }

    /// A signed response; every part can be overridden to build a bad one.
    func response(
        for details: TransactionDetails, plaintext: Data, decision: ApprovalResponse.Decision = .approve,
        digest: String? = nil, challenge: String? = nil, requestID: String? = nil, signer: (any ES256Signer)? = nil,
        kid: String? = nil
    ) throws -> String {
        let response = ApprovalResponse(
            requestID: requestID ?? details.requestID, decision: decision,
            detailsDigest: digest ?? TransactionDetails.digest(of: plaintext), challenge: challenge ?? details.challenge,
            factors: ["confirm"], issuedAt: Int64(server.clock.now.timeIntervalSince1970))
        let key: any ES256Signer = signer ?? keys.signer
        return try response.sign(deviceID: kid ?? id, signer: key).serialized
    }

    func answer(_ requestID: String, response: String) async throws -> TestServer.Answer {
        try await server.send(try answerRequest(requestID, response: response))
    }

    /// The signed call `answer` sends.
    func answerRequest(_ requestID: String, response: String) throws -> URLRequest {
        try server.deviceRequest("POST", "/device/v1/requests/\(requestID)/response",
                                 body: try JSONEncoder().encode(ApprovalSubmission(response: response)), deviceID: id,
                                 signer: keys.signer)
    }

    /// Opens the newest pending request and answers it as the user would.
    func decideNewest(_ decision: ApprovalResponse.Decision) async throws -> TestServer.Answer {
        let envelope = try #require(try await inbox().first)
        let (details, plaintext) = try open(envelope)
        return try await answer(envelope.id, response: try response(for: details, plaintext: plaintext, decision: decision))
    }
}

/// Hands a redirect back to the caller instead of following it.
final class RedirectsNotFollowed: NSObject, URLSessionTaskDelegate, @unchecked Sendable {
    func urlSession(_ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse,
                    newRequest request: URLRequest, completionHandler: @escaping @Sendable (URLRequest?) -> Void) {
        completionHandler(nil)
    }
}
