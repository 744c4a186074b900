import Foundation
import HTTPTypes
import Hummingbird
import NIOCore
import ServiceLifecycle
import Synchronization
import Testing
@testable import CountersignServer

/// A tenant's webhook receiver on 127.0.0.1: a real HTTP server that checks the signature of
/// every call with `WebhookSignature.verify`, as a tenant's own receiver would, records each
/// call, and answers what the test scripted (a 401 for any call whose signature fails).
final class WebhookReceiver: Sendable {
    /// One call as it arrived.
    struct Call: Sendable {
        let path: String
        /// By lower-case name.
        let headers: [String: String]
        let body: Data
        /// nil when the signature verified.
        let signatureError: WebhookSignatureError?

        var json: [String: any Sendable]? {
            (try? JSONSerialization.jsonObject(with: body)) as? [String: any Sendable]
        }
        var event: String? { headers[WebhookSignature.eventHeader.lowercased()] }
        var deliveryID: String? { headers[WebhookSignature.deliveryHeader.lowercased()] }
    }

    /// What to answer one call: after `delay`, `status` with `body` (and `headers`).
    struct Reply: Sendable {
        var status: Int = 200
        var body: String = "{}"
        var headers: [String: String] = [:]
        var delay: Duration = .zero

        static let ok = Reply()
        static func json(_ body: String) -> Reply { Reply(body: body) }
        static func status(_ status: Int) -> Reply { Reply(status: status) }
    }

    private struct State {
        var secret: String?
        var calls: [Call] = []
        /// Answers for the next calls, in order; `fallback` once they are used up.
        var script: [Reply] = []
        var fallback = Reply.ok
        var stopping = false
        /// For calls that carry no webhook signature (CIBA ping and push callbacks).
        var unsigned = false
    }

    private let state = Mutex(State())
    private let now: @Sendable () -> Date
    private let group = Mutex<ServiceGroup?>(nil)
    private let task = Mutex<Task<Void, any Error>?>(nil)
    private let boundPort = Mutex(0)

    var port: Int { boundPort.withLock { $0 } }
    /// The URL to register as a webhook.
    var url: String { "http://127.0.0.1:\(port)/hook" }
    var calls: [Call] { state.withLock { $0.calls } }

    private init(now: @escaping @Sendable () -> Date) {
        self.now = now
    }

    /// Starts a receiver that checks signatures against `now` (the server's test clock).
    static func start(now: @escaping @Sendable () -> Date) async throws -> WebhookReceiver {
        let receiver = WebhookReceiver(now: now)
        let router = Router(context: BasicRequestContext.self)
        router.post("/**") { request, _ in try await receiver.handle(request) }
        let (ports, continuation) = AsyncStream.makeStream(of: Int.self, bufferingPolicy: .bufferingNewest(1))
        let application = Application(
            router: router, configuration: .init(address: .hostname("127.0.0.1", port: 0), serverName: "receiver"),
            onServerRunning: { channel in continuation.yield(channel.localAddress?.port ?? 0) }, logger: testLogger)
        let group = ServiceGroup(configuration: .init(services: [application], gracefulShutdownSignals: [], logger: testLogger))
        receiver.group.withLock { $0 = group }
        receiver.task.withLock { $0 = Task { try await group.run() } }
        for await port in ports {
            receiver.boundPort.withLock { $0 = port }
            break
        }
        try #require(receiver.port > 0, "the receiver did not start")
        return receiver
    }

    /// The secret the server showed when the webhook was set.
    func expect(secret: String) {
        state.withLock { $0.secret = secret }
    }

    /// Answers the next calls with `replies`, then every later one with `fallback`.
    /// Takes calls without a webhook signature: a CIBA client's notification endpoint.
    func acceptUnsigned() {
        state.withLock { $0.unsigned = true }
    }

    func answer(_ replies: [Reply], then fallback: Reply = .ok) {
        state.withLock { state in
            state.script = replies
            state.fallback = fallback
        }
    }

    func stop() async throws {
        state.withLock { $0.stopping = true }
        await group.withLock { $0 }?.triggerGracefulShutdown()
        try await task.withLock { $0 }?.value
    }

    private func handle(_ request: Request) async throws -> Response {
        let body = Data(try await request.body.collect(upTo: 1 << 20).readableBytesView)
        var headers: [String: String] = [:]
        for field in request.headers { headers[field.name.canonicalName] = field.value }
        let (secret, reply, unsigned) = state.withLock { state -> (String?, Reply, Bool) in
            (state.secret, state.script.isEmpty ? state.fallback : state.script.removeFirst(), state.unsigned)
        }
        var signatureError: WebhookSignatureError?
        if !unsigned {
            do {
                try WebhookSignature.verify(
                    header: headers[WebhookSignature.signatureHeader.lowercased()] ?? "", body: body, secret: secret ?? "",
                    now: now())
            } catch {
                signatureError = error
            }
        }
        let call = Call(path: request.uri.path, headers: headers, body: body, signatureError: signatureError)
        state.withLock { $0.calls.append(call) }
        if signatureError != nil {
            return Response(status: .unauthorized)
        }
        // Slept in short steps, so that stopping the receiver does not wait out a long delay.
        let until = ContinuousClock.now + reply.delay
        while ContinuousClock.now < until, !state.withLock({ $0.stopping }) {
            try await Task.sleep(for: .milliseconds(10))
        }
        var fields = HTTPFields()
        fields[.contentType] = "application/json"
        for (name, value) in reply.headers {
            if let name = HTTPField.Name(name) { fields[name] = value }
        }
        return Response(status: HTTPResponse.Status(code: reply.status), headers: fields,
                        body: ResponseBody(byteBuffer: ByteBuffer(string: reply.body)))
    }
}
