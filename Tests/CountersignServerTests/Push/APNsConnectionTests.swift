import CountersignCore
import CountersignPushEmulator
import Crypto
import Foundation
import NIOCore
import NIOHPACK
import NIOHTTP2
import NIOPosix
import NIOSSL
import Synchronization
import Testing
@testable import CountersignServer

/// The APNs sender's own HTTP/2 connections: batches answered in order, against the APNs
/// emulator and against a scripted endpoint that misbehaves the ways a real one can (GOAWAY,
/// reset streams, silence, a cut connection, an untrusted certificate).
@Suite("APNs connections", .enabled(if: PushTestPKI.available))
struct APNsConnectionTests {
    static let topic = "com.example.bank"

    static func configuration(_ pki: EmulatorPKI?, connections: Int = 1) -> PushConfiguration {
        var configuration = PushConfiguration()
        configuration.trustedCAFile = pki?.caCertificatePath
        configuration.connectionsPerCredential = connections
        return configuration
    }

    /// A provider token of `key`: one per key and test, as APNs refuses a new one within 20 minutes.
    static func providerToken(_ key: APNsTestKey = APNsTestKey()) async throws -> String {
        let signing = try APNsSigningKey(keyID: key.keyID, teamID: key.teamID, pem: key.key.pemRepresentation)
        return try await APNsProviderToken(key: signing, store: MemoryProviderTokenStore()).token(at: Date())
    }

    /// A batch of notifications to `tokens`.
    static func requests(_ tokens: [String], providerToken: String, authority: String) -> [APNsWireRequest] {
        tokens.map { token in
            let entry = PushOutboxEntry.queued(.request, transactionID: UUID().uuidString, tenantID: "t", deviceID: "d",
                                               provider: .apns, expiresAt: Date().addingTimeInterval(300), at: Date())
            return APNsSender.request(for: PushDelivery(entry: entry, deviceToken: token), authority: authority,
                                      topic: topic, providerToken: providerToken)
        }
    }

    /// Sends `count` notifications to fresh device tokens through `pool` as one batch.
    static func send(_ count: Int, through pool: APNsConnectionPool, providerToken: String,
                     timeout: TimeAmount = .seconds(30)) async -> [APNsWireResult] {
        await pool.send(requests((0..<count).map { _ in apnsDeviceToken() }, providerToken: providerToken,
                                 authority: pool.authority), timeout: timeout)
    }

    static func status(_ result: APNsWireResult) -> Int? {
        if case .answered(let status, _, _) = result { return status }
        return nil
    }

    static func reason(_ result: APNsWireResult) -> String? {
        if case .unanswered(let reason) = result { return reason }
        return nil
    }

    @Test("a batch larger than APNs' stream limit is answered in order, on one connection kept for the next batch")
    func batchesAreAnsweredInOrder() async throws {
        let pki = try #require(PushTestPKI.shared)
        let key = APNsTestKey()
        let tokens = (0..<1_500).map { _ in apnsDeviceToken() }
        let unregistered = Set(tokens.enumerated().filter { $0.offset % 3 == 1 }.map(\.element))
        let apns = try await APNsEmulator.start(pki: pki, authentication: .token([key.providerKey]), recording: false) {
            unregistered.contains($0.deviceToken) ? .reject(status: 410, reason: "Unregistered", timestamp: 1_700_000_000_000) : nil
        }
        let pool = try APNsConnectionPool(baseURL: apns.baseURL, configuration: Self.configuration(pki), certificate: nil)
        let providerToken = try await Self.providerToken(key)
        let results = await pool.send(Self.requests(tokens, providerToken: providerToken, authority: pool.authority),
                                      timeout: .seconds(60))
        #expect(results.count == tokens.count)
        for (token, result) in zip(tokens, results) {
            #expect(Self.status(result) == (unregistered.contains(token) ? 410 : 200), "\(result)")
        }
        if case .answered(_, _, let body?) = results[1] {
            #expect(String(buffer: body).contains("Unregistered"))
        } else {
            Issue.record("the 410 carried no body")
        }
        let again = await Self.send(1, through: pool, providerToken: providerToken)
        #expect(again.map(Self.status) == [200])
        #expect(apns.acceptedCount == 1_001)
        #expect(apns.duplicateCount == 0)
        #expect(apns.connectionCount == 1)
        await pool.shutdown()
        try await apns.stop()
    }

    @Test("streams above the last one a GOAWAY names are unanswered, and the next batch opens a new connection")
    func goAwayLeavesTheRestForANewConnection() async throws {
        let token = try await Self.providerToken()
        let pki = try #require(PushTestPKI.shared)
        // On the first connection: two answers, then GOAWAY naming the second stream (id 3).
        let endpoint = try await ScriptedHTTP2Endpoint.start(pki: pki) { connection, index in
            guard connection == 1 else { return .answer(200) }
            return index < 2 ? .answer(200) : (index == 2 ? .goAway(lastStreamID: 3) : .ignore)
        }
        let pool = try APNsConnectionPool(baseURL: endpoint.baseURL, configuration: Self.configuration(pki), certificate: nil)
        let results = await Self.send(5, through: pool, providerToken: token)
        #expect(results.prefix(2).map(Self.status) == [200, 200], "\(results)")
        for result in results.dropFirst(2) {
            #expect(Self.reason(result)?.contains("GOAWAY") == true, "\(result)")
        }
        let next = await Self.send(1, through: pool, providerToken: token)
        #expect(next.map(Self.status) == [200])
        #expect(endpoint.connections == 2)
        await pool.shutdown()
        try await endpoint.stop()
    }

    @Test("a reset stream and one left without an answer past the timeout are unanswered; the others are answered")
    func resetAndSilentStreams() async throws {
        let token = try await Self.providerToken()
        let pki = try #require(PushTestPKI.shared)
        let endpoint = try await ScriptedHTTP2Endpoint.start(pki: pki) { _, index in
            switch index {
            case 1: .reset
            case 2: .ignore
            default: .answer(200)
            }
        }
        let pool = try APNsConnectionPool(baseURL: endpoint.baseURL, configuration: Self.configuration(pki), certificate: nil)
        // Connected first, so that the timeout below bounds the streams alone: on a machine busy
        // with the whole suite, a debug build's TLS handshake has taken most of 10 s.
        #expect(await Self.send(1, through: pool, providerToken: token).map(Self.status) == [200])
        let started = ContinuousClock.now
        let results = await Self.send(3, through: pool, providerToken: token, timeout: .seconds(10))
        // The silent stream waits out the timeout; the others do not hold the batch longer.
        #expect(ContinuousClock.now - started < .seconds(60))
        #expect(Self.reason(results[0])?.contains("closed the stream") == true, "\(results[0])")
        #expect(Self.reason(results[1])?.contains("in time") == true, "\(results[1])")
        #expect(Self.status(results[2]) == 200)
        // The connection is still good for the next batch.
        let next = await Self.send(1, through: pool, providerToken: token)
        #expect(next.map(Self.status) == [200])
        #expect(endpoint.connections == 1)
        await pool.shutdown()
        try await endpoint.stop()
    }

    @Test("a connection cut mid-batch leaves its streams unanswered, and the next batch connects again")
    func cutConnection() async throws {
        let token = try await Self.providerToken()
        let pki = try #require(PushTestPKI.shared)
        let endpoint = try await ScriptedHTTP2Endpoint.start(pki: pki) { connection, index in
            connection == 1 && index == 1 ? .closeConnection : (connection == 1 ? .ignore : .answer(200))
        }
        let pool = try APNsConnectionPool(baseURL: endpoint.baseURL, configuration: Self.configuration(pki), certificate: nil)
        let results = await Self.send(3, through: pool, providerToken: token)
        for result in results {
            #expect(Self.reason(result)?.contains("closed") == true, "\(result)")
        }
        let next = await Self.send(1, through: pool, providerToken: token)
        #expect(next.map(Self.status) == [200])
        #expect(endpoint.connections == 2)
        await pool.shutdown()
        try await endpoint.stop()
    }

    @Test("an endpoint with an untrusted certificate, or none listening, fails the batch at once")
    func unreachableEndpoints() async throws {
        let token = try await Self.providerToken()
        let pki = try #require(PushTestPKI.shared)
        let apns = try await APNsEmulator.start(pki: pki, authentication: .token([APNsTestKey().providerKey]))
        // Without the test CA, the emulator's certificate chains to no trusted root. Each batch
        // is given a long timeout: failing "at once" is failing well before it, however loaded
        // the machine.
        let untrusting = try APNsConnectionPool(baseURL: apns.baseURL, configuration: Self.configuration(nil), certificate: nil)
        var started = ContinuousClock.now
        let untrusted = await Self.send(2, through: untrusting, providerToken: token, timeout: .seconds(300))
        #expect(ContinuousClock.now - started < .seconds(150))
        for result in untrusted {
            #expect(Self.reason(result)?.contains("could not be reached") == true, "\(untrusted)")
        }
        #expect(apns.acceptedCount + apns.rejectedCount == 0)
        await untrusting.shutdown()
        try await apns.stop()

        // The emulator's port, now closed.
        let closed = try APNsConnectionPool(baseURL: apns.baseURL, configuration: Self.configuration(pki), certificate: nil)
        started = ContinuousClock.now
        let refused = await Self.send(1, through: closed, providerToken: token, timeout: .seconds(300))
        #expect(ContinuousClock.now - started < .seconds(150))
        #expect(Self.reason(refused[0])?.contains("could not be reached") == true, "\(refused[0])")
        await closed.shutdown()
    }

    @Test("a base URL that is not https is refused when the sender is made")
    func baseURLMustBeHTTPS() {
        #expect(throws: PushCredentialUnusable.self) {
            try APNsConnectionPool(baseURL: "http://127.0.0.1:1", configuration: Self.configuration(nil), certificate: nil)
        }
    }
}

/// An HTTP/2-over-TLS endpoint that answers each stream as a script says: the misbehaviour of
/// a real push service (GOAWAY, resets, silence, a cut connection), on demand.
final class ScriptedHTTP2Endpoint: Sendable {
    enum Action: Sendable {
        case answer(Int)
        case reset
        case ignore
        case goAway(lastStreamID: Int)
        case closeConnection
    }

    /// Connection numbers start at 1; a stream's index is its place among the connection's
    /// client streams (stream id 1 is index 0, id 3 index 1…). Streams end in no set order:
    /// HTTP/2 flow control may send one stream's DATA before an earlier one's.
    typealias Script = @Sendable (_ connection: Int, _ index: Int) -> Action

    private let group: MultiThreadedEventLoopGroup
    private let listener: any Channel
    private let opened: Counter
    let port: Int

    var baseURL: String { "https://127.0.0.1:\(port)" }
    var connections: Int { opened.value.load(ordering: .relaxed) }

    private init(group: MultiThreadedEventLoopGroup, listener: any Channel, opened: Counter, port: Int) {
        self.group = group
        self.listener = listener
        self.opened = opened
        self.port = port
    }

    static func start(pki: EmulatorPKI, script: @escaping Script) async throws -> ScriptedHTTP2Endpoint {
        var tls = TLSConfiguration.makeServerConfiguration(
            certificateChain: try NIOSSLCertificate.fromPEMFile(pki.serverCertificatePath).map { .certificate($0) },
            privateKey: .privateKey(try NIOSSLPrivateKey(file: pki.serverKeyPath, format: .pem)))
        tls.applicationProtocols = ["h2"]
        let context = try NIOSSLContext(configuration: tls)
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let counter = Counter()
        let listener = try await ServerBootstrap(group: group)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    let number = counter.next()
                    let pipeline = channel.pipeline.syncOperations
                    try pipeline.addHandler(NIOSSLServerHandler(context: context))
                    try pipeline.addHandler(NIOHTTP2Handler(mode: .server))
                    try pipeline.addHandler(ScriptedStreams(connection: number, script: script))
                }
            }
            .bind(host: "127.0.0.1", port: 0).get()
        let endpoint = ScriptedHTTP2Endpoint(group: group, listener: listener, opened: counter,
                                             port: listener.localAddress?.port ?? 0)
        return endpoint
    }

    func stop() async throws {
        try? await listener.close()
        try await group.shutdownGracefully()
    }

    private final class Counter: Sendable {
        let value = Atomic<Int>(0)
        func next() -> Int { value.add(1, ordering: .relaxed).newValue }
    }

    private final class ScriptedStreams: ChannelInboundHandler {
        typealias InboundIn = HTTP2Frame
        typealias OutboundOut = HTTP2Frame

        let connection: Int
        let script: Script

        init(connection: Int, script: @escaping Script) {
            self.connection = connection
            self.script = script
        }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            let frame = unwrapInboundIn(data)
            let ended: Bool
            switch frame.payload {
            case .headers(let headers): ended = headers.endStream
            case .data(let data): ended = data.endStream
            default: ended = false
            }
            guard ended else { return }
            switch script(connection, (Int(frame.streamID) - 1) / 2) {
            case .answer(let status):
                let headers = HPACKHeaders([(":status", String(status))])
                context.writeAndFlush(wrapOutboundOut(HTTP2Frame(streamID: frame.streamID,
                                                                 payload: .headers(.init(headers: headers, endStream: true)))),
                                      promise: nil)
            case .reset:
                context.writeAndFlush(wrapOutboundOut(HTTP2Frame(streamID: frame.streamID, payload: .rstStream(.refusedStream))),
                                      promise: nil)
            case .ignore:
                break
            case .goAway(let lastStreamID):
                context.writeAndFlush(wrapOutboundOut(HTTP2Frame(
                    streamID: .rootStream,
                    payload: .goAway(lastStreamID: HTTP2StreamID(lastStreamID), errorCode: .noError, opaqueData: nil))),
                                      promise: nil)
            case .closeConnection:
                context.close(promise: nil)
            }
        }
    }
}
