import Foundation
import Logging
import Synchronization

/// Everything the server needs to start. The command line fills it from flags and
/// environment variables; tests build it directly.
public struct ServerConfiguration: Sendable {
    public var host: String = "127.0.0.1"
    /// 0 picks a free port (tests).
    public var port: Int = 8080
    /// The URL devices and relying parties reach this server at. Issuers, enrollment URIs and
    /// signed-request URLs use it, never the Host header. Defaults to `http://host:port`, and to
    /// `http://localhost:port` when `host` is a loopback address (`PublicOrigin.learn`).
    public var publicURL: URL?
    public var dataDirectory: URL
    /// nil: SQLite in the data directory.
    public var databaseURL: String?
    /// The most PostgreSQL connections this node opens at once; one of them stays open for
    /// LISTEN/NOTIFY between nodes.
    public var databasePoolSize: Int = PostgresDatabase.defaultPoolSize
    /// How long a statement waits for a PostgreSQL connection before the request is answered
    /// 503 (`PostgresDatabase.defaultConnectionWait`).
    public var databaseConnectionWait: Duration = PostgresDatabase.defaultConnectionWait
    /// Timeouts and the cap on open HTTP connections.
    public var connections = ConnectionLimits()
    /// Base64 master key from the environment; nil: the key file in the data directory.
    public var masterKey: String?
    public var enrollmentTicketLifetime: TimeInterval = EnrollmentTicket.defaultLifetime
    /// How far a device signature's `iat` may be from the server's clock, either way.
    public var signatureWindow: TimeInterval = 300
    /// The largest request body accepted.
    public var maximumBodySize: Int = 64 * 1024
    /// Failed authentications allowed per source address, and per client or admin key id, within
    /// a minute (`FailedAuthenticationThrottle`); 0 switches the throttle off.
    public var failedAuthenticationLimit: Int = FailedAuthenticationThrottle.defaultLimit
    /// The clock. Tests move it to test expiry.
    public var now: @Sendable () -> Date = { Date() }
    /// How often an idle live stream gets a comment line (so that proxies keep it open), and the
    /// longest it waits before noticing that the clock has passed a request's expiry.
    public var liveStreamKeepalive: Duration = .seconds(15)
    /// How ping and push clients are called.
    public var clientNotifications = ClientNotificationConfiguration()
    /// APNs and FCM endpoints, and how the push outbox is worked.
    public var push = PushConfiguration()
    /// How tenants' webhooks are called (and Shared Signals pushed: the same timeouts and retries).
    public var webhooks = WebhookConfiguration()
    /// How Shared Signals streams are polled and verified.
    public var sharedSignals = SharedSignalsConfiguration()
    /// How tenants' mail is sent.
    public var mail = MailConfiguration()
    /// The UDP port RADIUS is answered on, at `host` (1812 by convention; 0 picks a free port, for
    /// tests); nil: no RADIUS.
    public var radiusPort: Int?
    /// RADIUS over TLS (RFC 6614) at `host`; nil: none.
    public var radsec: RadSecConfiguration?
    /// The FIDO Metadata Service BLOB passkey registrations are checked against; nil: none.
    public var metadata: MetadataConfiguration?
    /// How long a token-signing key signs before a new one replaces it (`KeyRotationSchedule`).
    public var tokenSigningKeyRotation: TimeInterval = KeyRotationSchedule.defaultRotationAge

    public init(dataDirectory: URL) {
        self.dataDirectory = dataDirectory
    }

    /// The SQLite file inside the data directory.
    public var sqlitePath: String { dataDirectory.appendingPathComponent("countersign.sqlite").path }
    public var masterKeyFile: URL { dataDirectory.appendingPathComponent("master.key") }
}

/// The public origin the server is reached at, without a trailing slash, and the base URL of
/// each tenant below it. When no public URL is configured it is learnt once the listening
/// socket is bound (`http://host:port`), which is what lets tests run on a free port.
public final class PublicOrigin: Sendable {
    private let value: Mutex<String>

    public init(_ url: URL?) {
        value = Mutex(url.map(Self.trimmed) ?? "")
    }

    public var base: String { value.withLock { $0 } }

    /// The origin of a server with no public URL, once it listens on `host` and `port`. A
    /// loopback listener is `http://localhost:<port>`, not its address: browsers allow passkeys
    /// only at a domain name, and `localhost` is one, reaching the same listener.
    func learn(host: String, port: Int) {
        value.withLock { current in
            guard current.isEmpty else { return }
            let name = Self.loopbackAddresses.contains(host) ? "localhost" : host.contains(":") ? "[\(host)]" : host
            current = "http://\(name):\(port)"
        }
    }

    static let loopbackAddresses: Set<String> = ["127.0.0.1", "::1", "localhost"]

    private static func trimmed(_ url: URL) -> String {
        var text = url.absoluteString
        while text.hasSuffix("/") { text.removeLast() }
        return text
    }

    /// The default tenant lives at the root; every other tenant at `/t/<slug>`.
    public func tenantBase(_ tenant: Tenant) -> String {
        tenant.isDefault ? base : "\(base)/t/\(tenant.slug)"
    }

    /// Every base URL the tenant answers at: its own, and for the default tenant also
    /// `/t/<slug>`, where every tenant can be reached.
    public func tenantBases(_ tenant: Tenant) -> [String] {
        tenant.isDefault ? [base, "\(base)/t/\(tenant.slug)"] : [tenantBase(tenant)]
    }
}
