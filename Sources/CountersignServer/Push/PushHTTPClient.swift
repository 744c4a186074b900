import AsyncHTTPClient
import NIOCore
import NIOSSL
import Synchronization

/// The HTTP clients of an FCM credential: HTTP/2 where the server offers it (Google does),
/// no redirects, the system's trust roots or the configured CA file. One client, and so one
/// multiplexed connection, per event loop: a single HTTP/2 connection is served by one thread,
/// which caps a burst at what one core can frame and encrypt.
final class PushHTTPClient: Sendable {
    private let clients: [HTTPClient]
    private let next = Atomic<Int>(0)

    init(_ configuration: PushConfiguration, certificate: NIOSSLPKCS12Bundle?) throws {
        var tls = TLSConfiguration.makeClientConfiguration()
        tls.minimumTLSVersion = .tlsv12
        if let file = configuration.trustedCAFile {
            tls.trustRoots = .certificates(try NIOSSLCertificate.fromPEMFile(file))
        }
        if let certificate {
            tls.certificateChain = certificate.certificateChain.map { .certificate($0) }
            tls.privateKey = .privateKey(certificate.privateKey)
        }
        var client = HTTPClient.Configuration(tlsConfiguration: tls, redirectConfiguration: .disallow)
        client.httpVersion = .automatic
        client.timeout = .init(connect: .seconds(10), read: .seconds(30))
        let loops = Array(PushEventLoops.group.makeIterator())
        clients = loops.prefix(max(1, configuration.connectionsPerCredential)).map { loop in
            HTTPClient(eventLoopGroup: loop, configuration: client)
        }
    }

    /// The clients take turns.
    func execute(_ request: HTTPClientRequest, timeout: TimeAmount) async throws -> HTTPClientResponse {
        let index = next.wrappingAdd(1, ordering: .relaxed).oldValue
        return try await clients[index % clients.count].execute(request, timeout: timeout)
    }

    func shutdown() async {
        for client in clients { try? await client.shutdown() }
    }
}
