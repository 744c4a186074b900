import CountersignCore
import Foundation
import Hummingbird
import Logging
import NIOCore
import ServiceLifecycle
import Synchronization
import UnixSignals

/// The server as a library: `countersign serve` and the integration tests both build it here.
///
/// ```swift
/// let server = try await CountersignServer.make(configuration: configuration, logger: logger)
/// try await server.run()          // until SIGINT or SIGTERM
/// ```
public final class CountersignServer: Sendable {
    public let configuration: ServerConfiguration
    /// The URL the server is reached at, with the port learnt once it listens.
    public let origin: PublicOrigin
    public let database: any Database
    public let logger: Logger
    /// The default tenant.
    public let defaultTenant: Tenant
    /// The bootstrap admin key, on the very first start only; shown once, stored as a hash.
    public let bootstrapAdminKey: String?

    // The few shared parts that the CLI (`recover-admin-key`), the benchmarks and the tests reach in a
    // built server. Features never do: `buildApplication` hands each the parts it declares.
    public let sealer: SecretSealer
    public let tenants: TenantService
    public let tokenSigningKeys: TokenSigningKeys
    public let adminAuthenticator: AdminAuthenticator
    /// Wakes the live streams of connected devices.
    public let approvalEvents: ApprovalEvents
    /// Queues events for tenants' event receivers.
    public let tenantEvents: TenantEvents
    /// The verifier of the tenants' `custom-verifier` webhooks, as approvals call it.
    let customVerifier: CustomVerifier

    /// Made the default tenant and the bootstrap key; withdraws the key if this start fails.
    private let bootstrapper: Bootstrap
    /// The HTTP application: the router with its middleware, served on a socket by `run()` and
    /// `start()`, and driven in memory by the feature tests.
    let application: Application<RouterResponder<CountersignRequestContext>>
    /// Every route the router answers, by method and path (the OpenAPI document names each).
    let routes: [Route]
    /// The push, webhook and client-notification dispatchers (none when dispatch is off), and the
    /// directory sync schedule.
    private let dispatchers: [any Service]
    private let clusterListener: ClusterRelayListener
    /// The rows this node keeps in memory, forgotten when they change.
    var caches: RecordCaches { clusterListener.relay.caches }
    private let liveStreamCloser: LiveStreamCloser
    /// The HTTP client of every webhook call, shut down when the server stops.
    private let webhookClient: WebhookHTTPClient
    /// The open HTTP connections, under the cap.
    let connections: ConnectionRegistry
    private let listening: AsyncStream<Int>
    private let listeningContinuation: AsyncStream<Int>.Continuation
    /// Whether the HTTP server has bound its socket, at this start.
    private let listened = ListeningFlag()
    /// The RADIUS listeners, UDP and TLS, each when configured.
    let radius: RADIUSListeners

    /// Opens the data directory and database, checks the master key, migrates, and on the first
    /// start creates the default tenant and the bootstrap admin key.
    public static func make(configuration: ServerConfiguration, logger: Logger) async throws -> CountersignServer {
        try configuration.push.checkTrustedCAFile()
        let manager = FileManager.default
        if manager.fileExists(atPath: configuration.dataDirectory.path) {
            if let mode = (try? manager.attributesOfItem(atPath: configuration.dataDirectory.path))?[.posixPermissions] as? NSNumber,
               mode.intValue & 0o077 != 0 {
                logger.warning("the data directory is readable by other users; chmod 700 it",
                               metadata: ["path": "\(configuration.dataDirectory.path)"])
            }
        } else {
            try manager.createDirectory(
                at: configuration.dataDirectory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        }
        let (masterKey, created) = try MasterKey.load(
            environmentValue: configuration.masterKey, file: configuration.masterKeyFile)
        // A key file made at this start is removed again if the start fails before anything is
        // sealed with it: left behind, it would hide the real key's absence on the next start.
        let discardNewKey = { if created { try? manager.removeItem(at: configuration.masterKeyFile) } }
        let descriptors = DescriptorLimit.raiseToHardLimit()
        let connectionCap = configuration.connections.effectiveMaximumConnections(
            descriptorLimit: descriptors.after,
            databasePoolSize: configuration.databaseURL == nil ? 0 : configuration.databasePoolSize)
        logger.info("open file limit \(descriptors.after)\(descriptors.after > descriptors.before ? " (raised from \(descriptors.before))" : ""); at most \(connectionCap) HTTP connections")
        if let asked = configuration.connections.maximumConnections, asked > connectionCap {
            logger.warning("the connection cap is lowered to \(connectionCap) to keep descriptors for the database; raise the hard open file limit (ulimit -Hn) to allow \(asked)")
        }
        let database: any Database
        do {
            if let url = configuration.databaseURL {
                database = try await PostgresDatabase.connect(
                    url: url, poolSize: configuration.databasePoolSize, connectionWait: configuration.databaseConnectionWait,
                    logger: logger)
            } else {
                database = try await SQLiteDatabase.open(path: configuration.sqlitePath, logger: logger)
            }
        } catch {
            discardNewKey()
            throw error
        }
        do {
            let sealer = SecretSealer(masterKey: masterKey)
            do {
                try await Migrations.migrate(database)
                try await sealer.verifyAgainst(database)
            } catch {
                discardNewKey()
                throw error
            }
            if created {
                logger.notice("created a new master key file; back it up", metadata: ["path": "\(configuration.masterKeyFile.path)"])
            }
            return try await buildApplication(
                configuration: configuration, database: database, sealer: sealer, connectionCap: connectionCap, logger: logger)
        } catch {
            await database.close()
            throw error
        }
    }

    init(
        router: Router<CountersignRequestContext>, configuration: ServerConfiguration, origin: PublicOrigin,
        database: any Database, logger: Logger, connectionCap: Int, bootstrapper: Bootstrap, bootstrap: Bootstrap.Result,
        dispatchers: [any Service], clusterListener: ClusterRelayListener, liveStreamCloser: LiveStreamCloser,
        webhookClient: WebhookHTTPClient, sealer: SecretSealer, tenants: TenantService, tokenSigningKeys: TokenSigningKeys,
        adminAuthenticator: AdminAuthenticator, approvalEvents: ApprovalEvents, tenantEvents: TenantEvents,
        customVerifier: CustomVerifier, radius: RADIUSListeners
    ) {
        self.radius = radius
        self.configuration = configuration
        self.origin = origin
        self.database = database
        self.logger = logger
        self.bootstrapper = bootstrapper
        self.defaultTenant = bootstrap.tenant
        self.bootstrapAdminKey = bootstrap.adminKeySecret
        self.dispatchers = dispatchers
        self.clusterListener = clusterListener
        self.liveStreamCloser = liveStreamCloser
        self.webhookClient = webhookClient
        self.sealer = sealer
        self.tenants = tenants
        self.tokenSigningKeys = tokenSigningKeys
        self.adminAuthenticator = adminAuthenticator
        self.approvalEvents = approvalEvents
        self.tenantEvents = tenantEvents
        self.customVerifier = customVerifier
        self.routes = router.table
        (listening, listeningContinuation) = AsyncStream.makeStream(of: Int.self, bufferingPolicy: .bufferingNewest(1))
        let continuation = listeningContinuation
        let listened = listened
        let connections = ConnectionRegistry(maximum: connectionCap, logger: logger)
        self.connections = connections
        application = Application(
            router: router,
            server: .guardedHTTP1(limits: configuration.connections, registry: connections),
            configuration: .init(address: .hostname(configuration.host, port: configuration.port),
                                 serverName: "Countersign"),
            onServerRunning: { channel in
                let port = channel.localAddress?.port ?? configuration.port
                origin.learn(host: configuration.host, port: port)
                listened.set()
                continuation.yield(port)
            },
            logger: logger)
    }

    /// The push, webhook and client-notification dispatchers, the HTTP server, the cross-node
    /// listener, and (shut down first) the closer of live streams. Shut down in reverse order:
    /// the dispatchers last, so that what the final requests queued is still sent.
    private var serviceList: [any Service] {
        dispatchers + radius.services + [application, clusterListener, liveStreamCloser]
    }

    /// Serves until `signals` arrive (SIGINT and SIGTERM by default) or the task is cancelled;
    /// requests in flight finish before it returns, then the webhook client and the database are
    /// closed. A start that fails before the server listens (its port taken, say) withdraws the
    /// bootstrap admin key made for it: the next start makes and shows a new one.
    public func run(signals: [UnixSignal] = [.sigint, .sigterm]) async throws {
        let group = ServiceGroup(configuration: .init(
            services: serviceList, gracefulShutdownSignals: signals, logger: logger))
        do {
            try await group.run()
        } catch {
            if let secret = bootstrapAdminKey, !listened.isSet {
                do {
                    try await bootstrapper.withdraw(secret: secret)
                } catch {
                    logger.error("the bootstrap admin key of a start that failed could not be withdrawn",
                                          metadata: ["error": "\(ErrorMiddleware.describe(error))"])
                }
            }
            await webhookClient.shutdown()
            await database.close()
            throw error
        }
        await webhookClient.shutdown()
        await database.close()
    }

    /// Closes what `make` opened, for a server that was never run (its router driven in memory).
    func close() async {
        await webhookClient.shutdown()
        await database.close()
    }

    /// The UDP port RADIUS is answered on, once it is; nil without RADIUS.
    public func radiusPort() async -> Int? {
        await radius.udp?.bound.value()
    }

    /// The TCP port RadSec is answered on, once it is; nil without RadSec.
    public func radsecPort() async -> Int? {
        await radius.tls?.bound.value()
    }

    /// The port the server listens on, once it does.
    public func port() async -> Int? {
        for await port in listening { return port }
        return nil
    }

    /// A server running in the background, for tests and benchmarks: started on its port,
    /// stopped gracefully by `stop()`.
    public final class Running: Sendable {
        public let server: CountersignServer
        public let port: Int
        private let group: ServiceGroup
        private let task: Task<Void, any Error>

        fileprivate init(server: CountersignServer, port: Int, group: ServiceGroup, task: Task<Void, any Error>) {
            self.server = server
            self.port = port
            self.group = group
            self.task = task
        }

        public var baseURL: String { server.origin.base }

        public func stop() async throws {
            await group.triggerGracefulShutdown()
            do {
                try await task.value
            } catch {
                await server.webhookClient.shutdown()
                throw error
            }
            await server.webhookClient.shutdown()
            await server.database.close()
        }
    }

    /// Starts serving in the background and returns once the socket is bound.
    public func start() async throws -> Running {
        let group = ServiceGroup(configuration: .init(
            services: serviceList, gracefulShutdownSignals: [], logger: logger))
        let task = Task { try await group.run() }
        guard let port = await port() else {
            task.cancel()
            throw StorageError.unavailable("the server stopped before it listened")
        }
        return Running(server: self, port: port, group: group, task: task)
    }
}

/// Set once the server listens; read when a start fails, to tell a failed start from a stop.
private final class ListeningFlag: Sendable {
    private let state = Mutex(false)

    func set() { state.withLock { $0 = true } }

    var isSet: Bool { state.withLock { $0 } }
}

extension CountersignServer {
    /// A route of the router: its method and path, with captures written `{name}`.
    struct Route: Sendable, Hashable {
        let method: HTTPRequest.Method
        let path: String
    }
}

extension Router<CountersignRequestContext> {
    /// Every route registered so far.
    var table: [CountersignServer.Route] {
        routes.map { CountersignServer.Route(method: $0.method, path: $0.path.description) }
    }
}
