import CountersignCore
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Sends device-signed requests for one enrollment. Every request carries
/// `Authorization: Device <jws>` bound to its method, its exact URL and its exact body, signed
/// by the enrollment's signing key. The self-service calls use it today; the inbox and approval
/// calls build on it.
struct DeviceClient: Sendable {
    enum Method: String, Sendable {
        case get = "GET", post = "POST", put = "PUT", patch = "PATCH", delete = "DELETE"
    }

    let enrollment: Enrollment
    let endpoints: DeviceEndpoints
    private let signer: any ES256Signer
    private let transport: any HTTPTransport
    private let now: @Sendable () -> Date

    init(
        enrollment: Enrollment, signer: any ES256Signer, transport: any HTTPTransport,
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
        var request = URLRequest(url: url)
        request.httpMethod = method.rawValue
        request.cachePolicy = .reloadIgnoringLocalCacheData
        request.setValue("application/json", forHTTPHeaderField: "Accept")
        if !body.isEmpty {
            request.httpBody = body
            request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        }
        let signature = try signature(method, url, body)
        request.setValue(signature.authorizationHeader, forHTTPHeaderField: "Authorization")

        let answer = try await ServerAnswer.exchange(request, over: transport)
        guard answer.isSuccess else {
            throw answer.deviceRequestFailure(serverKey: enrollment.serverKey, deviceID: enrollment.deviceID,
                                              nonce: signature.nonce)
        }
        return answer
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
