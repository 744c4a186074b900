import CountersignCore
import Foundation
import HTTPTypes
import Hummingbird
import NIOCore
import ServiceLifecycle
import Synchronization
import Testing
@testable import CountersignServer

/// A bank's own identity provider, as the trusted-issuer tests need it: it signs tokens with any
/// claims (ES256 or RS256, through `ClientSigningKey`), and publishes its JWKS at `jwksURI`,
/// served on 127.0.0.1 by a small Hummingbird server. The test decides which keys are published
/// and whether the endpoint answers, and reads how often it was fetched.
final class TestIdentityProvider: Sendable {
    private struct State {
        var published: [ClientSigningKey] = []
        /// Members published as they are, after the keys.
        var raw: [JSONValue] = [TestIdentityProvider.encryptionKey]
        var down = false
        var fetches = 0
    }

    private let state = Mutex(State())
    private let group = Mutex<ServiceGroup?>(nil)
    private let task = Mutex<Task<Void, any Error>?>(nil)
    private let boundPort = Mutex(0)

    /// Its issuer identifier: the `iss` of its tokens.
    var issuer: String { "http://127.0.0.1:\(boundPort.withLock { $0 })" }
    var jwksURI: String { issuer + "/jwks" }
    /// How many times the JWKS was asked for.
    var fetches: Int { state.withLock { $0.fetches } }

    private init() {}

    /// Starts a provider publishing `keys`.
    static func start(publishing keys: [ClientSigningKey]) async throws -> TestIdentityProvider {
        let provider = TestIdentityProvider()
        provider.publish(keys)
        let router = Router(context: BasicRequestContext.self)
        router.get("/jwks") { _, _ in provider.answer() }
        let (ports, continuation) = AsyncStream.makeStream(of: Int.self, bufferingPolicy: .bufferingNewest(1))
        let application = Application(
            router: router, configuration: .init(address: .hostname("127.0.0.1", port: 0), serverName: "identity-provider"),
            onServerRunning: { channel in continuation.yield(channel.localAddress?.port ?? 0) }, logger: testLogger)
        let group = ServiceGroup(configuration: .init(services: [application], gracefulShutdownSignals: [], logger: testLogger))
        provider.group.withLock { $0 = group }
        provider.task.withLock { $0 = Task { try await group.run() } }
        for await port in ports {
            provider.boundPort.withLock { $0 = port }
            break
        }
        try #require(provider.boundPort.withLock { $0 } > 0, "the identity provider did not start")
        return provider
    }

    /// Runs `body` with a started provider, and always stops it.
    static func with(publishing keys: [ClientSigningKey], _ body: (TestIdentityProvider) async throws -> Void)
        async throws {
        let provider = try await start(publishing: keys)
        do {
            try await body(provider)
        } catch {
            try? await provider.stop()
            throw error
        }
        try await provider.stop()
    }

    /// Replaces the published keys (a rotation); `raw` members are published after them as
    /// they are (by default an encryption key, which Countersign must pass by).
    func publish(_ keys: [ClientSigningKey], raw: [JSONValue] = [TestIdentityProvider.encryptionKey]) {
        state.withLock { state in
            state.published = keys
            state.raw = raw
        }
    }

    /// While down, the endpoint answers 503.
    func setDown(_ down: Bool) {
        state.withLock { $0.down = down }
    }

    func stop() async throws {
        await group.withLock { $0 }?.triggerGracefulShutdown()
        try await task.withLock { $0 }?.value
    }

    /// A token of this provider: `claims` over the defaults of a valid access token for
    /// `username` (`iss`, `aud` `bank-app`, `iat`, `exp` in 10 minutes, a fresh `jti`,
    /// `scope` `openid countersign:enroll`), signed by `key`. A claim set to `.null` is left out.
    func token(_ username: String, signedBy key: ClientSigningKey, at date: Date,
               claims: [String: JSONValue] = [:], header: [String: JSONValue] = [:]) throws -> String {
        let now = Int64(date.timeIntervalSince1970)
        var all: [String: JSONValue] = [
            "iss": .string(issuer), "sub": .string("248289761001"), "aud": .string("bank-app"),
            "preferred_username": .string(username), "iat": .integer(now), "exp": .integer(now + 600),
            "jti": .string(UUID().uuidString), "scope": .string("openid countersign:enroll"),
        ]
        all.merge(claims) { $1 }
        return try key.jwt(all.filter { $0.value != .null }, header: header)
    }

    private func answer() -> Response {
        let (keys, raw, down) = state.withLock { state -> ([ClientSigningKey], [JSONValue], Bool) in
            state.fetches += 1
            return (state.published, state.raw, state.down)
        }
        if down { return Response(status: .serviceUnavailable) }
        let set = JSONValue.object(["keys": .array(keys.map { key in
            .object(key.publicJWK.compactMapValues { ($0 as? String).map(JSONValue.string) })
        } + raw)])
        return Response(status: .ok, headers: [.contentType: "application/jwk-set+json"],
                        body: ResponseBody(byteBuffer: ByteBuffer(data: set.canonicalData)))
    }

    /// Providers publish encryption keys beside their signing keys.
    static let encryptionKey = JSONValue.object([
        "kty": .string("RSA"), "kid": .string("enc-1"), "use": .string("enc"), "alg": .string("RSA-OAEP"),
        "n": .string("sXch"), "e": .string("AQAB"),
    ])
}
