import CountersignCore
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Sends device-signed requests for one enrollment. Every request carries
/// `Authorization: Device <jws>` bound to its method, its exact URL and its exact body, signed
/// by the enrollment's signing key. The self-service, inbox, approval and live-stream calls all
/// go through it.
struct DeviceClient: Sendable {
    enum Method: String, Sendable {
        case get = "GET", post = "POST", put = "PUT", patch = "PATCH", delete = "DELETE"
    }

    let enrollment: Enrollment
    let endpoints: DeviceEndpoints
    private let signer: any ES256Signer & Sendable
    private let transport: any HTTPTransport
    private let now: @Sendable () -> Date

    init(
        enrollment: Enrollment, signer: any ES256Signer & Sendable, transport: any HTTPTransport,
        now: @escaping @Sendable () -> Date
    ) throws(CountersignError) {
        guard let endpoints = DeviceEndpoints(server: enrollment.server) else {
            throw .keyStore("the record of enrollment \(enrollment.id) has an unusable server URL")
        }
        self.enrollment = enrollment
        self.endpoints = endpoints
        self.signer = signer
        self.transport = transport
        self.now = now
    }

    /// Sends one signed request and returns a 2xx answer; anything else is thrown as
    /// `ServerAnswer.deviceRequestFailure` says (`.deviceDeregistered` when the server has
    /// forgotten the device).
    func send(_ method: Method, _ url: URL, body: Data = Data()) async throws(CountersignError) -> ServerAnswer {
        let (request, nonce) = try signedRequest(method, url, body: body, accept: "application/json")
        let answer = try await ServerAnswer.exchange(request, over: transport)
        guard answer.isSuccess else {
            throw answer.deviceRequestFailure(serverKey: enrollment.serverKey, deviceID: enrollment.deviceID, nonce: nonce)
        }
        return answer
    }

    /// Opens a signed `GET` whose answer is a `text/event-stream`, and returns its body as it
    /// arrives. A refusal is read, and thrown, as `send` reads one.
    func openEventStream(_ url: URL) async throws(CountersignError) -> AsyncThrowingStream<Data, any Error> {
        let (request, nonce) = try signedRequest(.get, url, body: Data(), accept: Self.eventStream)
        let answer: StreamedResponse
        do { answer = try await transport.stream(request) } catch {
            throw CountersignError(transportFailure: error)
        }
        let response = answer.response
        guard (200..<300).contains(response.statusCode) else {
            let refusal = ServerAnswer(
                status: response.statusCode, body: await Self.prefix(of: answer.body, upTo: Self.refusalSizeLimit),
                location: response.value(forHTTPHeaderField: "Location"))
            throw refusal.deviceRequestFailure(serverKey: enrollment.serverKey, deviceID: enrollment.deviceID, nonce: nonce)
        }
        guard let type = response.value(forHTTPHeaderField: "Content-Type"),
              type.lowercased().hasPrefix(Self.eventStream) else {
            throw .invalidServerResponse("the live stream is not a \(Self.eventStream)")
        }
        return answer.body
    }

    private static let eventStream = "text/event-stream"
    /// A refusal is a small JSON body; reading more of an unexpected answer would serve nothing.
    private static let refusalSizeLimit = 64 * 1024

    /// The first `limit` bytes of a body, or fewer if it ends or fails first. Stopping early
    /// ends the iteration, which cancels the request.
    private static func prefix(of body: AsyncThrowingStream<Data, any Error>, upTo limit: Int) async -> Data {
        var collected = Data()
        do {
            for try await piece in body {
                collected += piece
                if collected.count >= limit { break }
            }
        } catch {
            // What arrived before the failure is all there is to read.
        }
        return collected.prefix(limit)
    }

    /// A request for `url`, signed for its method, URL and body.
    private func signedRequest(
        _ method: Method, _ url: URL, body: Data, accept: String
    ) throws(CountersignError) -> (request: URLRequest, nonce: String) {
        var request = URLRequest(url: url)
        request.httpMethod = method.rawValue
        request.cachePolicy = .reloadIgnoringLocalCacheData
        request.setValue(accept, forHTTPHeaderField: "Accept")
        if !body.isEmpty {
            request.httpBody = body
            request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        }
        let signature = try signature(method, url, body)
        request.setValue(signature.authorizationHeader, forHTTPHeaderField: "Authorization")
        return (request, signature.nonce)
    }

    /// Sends `body` as JSON and decodes the 2xx answer as `Response`.
    func send<Response: Decodable>(
        _ method: Method, _ url: URL, json body: some Encodable, expecting: Response.Type, what: String
    ) async throws(CountersignError) -> Response {
        try await send(method, url, body: JSONBody.encode(body)).decode(Response.self, what: what)
    }

    /// Sends a request without a body and decodes the 2xx answer as `Response`.
    func send<Response: Decodable>(
        _ method: Method, _ url: URL, expecting: Response.Type, what: String
    ) async throws(CountersignError) -> Response {
        try await send(method, url).decode(Response.self, what: what)
    }

    /// The signature is over the URL string exactly as sent, so the server, rebuilding it from
    /// the request it received, gets the same string.
    private func signature(_ method: Method, _ url: URL, _ body: Data) throws(CountersignError) -> DeviceRequestSignature {
        do {
            return try DeviceRequestSignature.sign(
                method: method.rawValue, url: url.absoluteString, body: body, deviceID: enrollment.deviceID,
                signer: signer, now: now())
        } catch {
            throw .keyStore("the signing key of enrollment \(enrollment.id) could not sign the request")
        }
    }
}
