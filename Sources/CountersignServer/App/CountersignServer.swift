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
    public let services: ServerServices
    /// The default tenant.
    public let defaultTenant: Tenant
    /// The bootstrap admin key, on the very first start only; shown once, stored as a hash.
    public let bootstrapAdminKey: String?
    /// Made the default tenant and the bootstrap key; withdraws the key if this start fails.
    private let bootstrapper: Bootstrap
    /// The HTTP application: the router with its middleware, served on a socket by `run()` and
    /// `start()`, and driven in memory by the feature tests.
    let application: Application<RouterResponder<CountersignRequestContext>>
    /// The open HTTP connections, under the cap.
    let connections: ConnectionRegistry
    private let listening: AsyncStream<Int>
    private let listeningContinuation: AsyncStream<Int>.Continuation
    /// Whether the HTTP server has bound its socket, at this start.
    private let listened = ListeningFlag()

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
            let services = ServerServices(
                configuration: configuration, origin: PublicOrigin(configuration.publicURL), database: database,
                sealer: sealer, metrics: ServerMetrics(), logger: logger)
            let bootstrapper = Bootstrap(
                database: database, tenants: services.repositories.tenants, adminKeys: services.repositories.adminKeys,
                tenantService: services.tenantService, authenticator: services.adminAuthenticator, audit: services.audit,
                now: configuration.now)
            let bootstrap = try await bootstrapper.run()
            return CountersignServer(
                services: services, bootstrapper: bootstrapper, bootstrap: bootstrap, connectionCap: connectionCap)
        } catch {
            await database.close()
            throw error
        }
    }

    private init(services: ServerServices, bootstrapper: Bootstrap, bootstrap: Bootstrap.Result, connectionCap: Int) {
        self.bootstrapper = bootstrapper
        self.services = services
        self.defaultTenant = bootstrap.tenant
        self.bootstrapAdminKey = bootstrap.adminKeySecret
        (listening, listeningContinuation) = AsyncStream.makeStream(of: Int.self, bufferingPolicy: .bufferingNewest(1))
        let router = Router(context: CountersignRequestContext.self)
        router.add(middleware: MetricsMiddleware(metrics: services.metrics))
        router.add(middleware: ErrorMiddleware(surface: .api, logger: services.logger))
        router.add(middleware: NULInPathRefusal())
        HealthRoutes(database: services.database, metrics: services.metrics).register(on: router)
        let throttle = FailedAuthenticationMiddleware(throttle: services.authenticationThrottle, metrics: services.metrics)
        let guardian = AdminGuard(
            authenticator: services.adminAuthenticator, tenants: services.tenantService, now: services.configuration.now)
        let tenantRoutes = TenantRoutes(
            tenant: TenantMiddleware(tenants: services.tenantService, origin: services.origin), throttle: throttle,
            logger: services.logger)
        let features = Features(services: services)
        DiscoveryRoutes(signingKeys: services.tokenSigningKeys).register(on: tenantRoutes)
        CIBARoutes(features: features, metrics: services.metrics, now: services.configuration.now).register(on: tenantRoutes)
        DeviceRoutes(
            features: features, tenants: services.tenantService, origin: services.origin, metrics: services.metrics,
            maximumBodySize: services.configuration.maximumBodySize, now: services.configuration.now,
            liveStreamKeepalive: services.configuration.liveStreamKeepalive
        ).register(on: tenantRoutes)
        let pushCredentials = PushCredentialService(
            database: services.database, credentials: services.repositories.pushCredentials, sealer: services.sealer,
            audit: services.audit, now: services.configuration.now)
        let (now, bodyLimit) = (services.configuration.now, services.configuration.maximumBodySize)
        CyberArkMobileRoutes(credentials: pushCredentials, guardian: guardian, maximumBodySize: bodyLimit)
            .register(on: tenantRoutes)
        tenantRoutes.mount(on: router)
        let admin = router.group("").add(middleware: throttle)
        let (database, repositories, audit) = (services.database, services.repositories, services.audit)
        TenantAdminRoutes(
            store: SQLTenantAdminStore(
                database: database, tenants: repositories.tenants, tenantService: services.tenantService, audit: audit),
            guardian: guardian, origin: services.origin, maximumBodySize: bodyLimit, now: now
        ).register(on: admin)
        AdminKeyRoutes(
            store: SQLAdminKeyStore(
                database: database, keys: repositories.adminKeys, authenticator: services.adminAuthenticator, audit: audit),
            guardian: guardian, maximumBodySize: bodyLimit, now: now
        ).register(on: admin)
        ClientAdminRoutes(
            store: SQLClientAdminStore(database: database, clients: repositories.clients, audit: audit),
            guardian: guardian, maximumBodySize: bodyLimit, now: now
        ).register(on: admin)
        UserAdminRoutes(
            store: SQLUserAdminStore(
                database: database, users: repositories.users, userCodes: SQLUserCodeRepository(), tickets: repositories.tickets,
                devices: repositories.devices, audit: audit, masterKey: services.sealer.masterKey),
            guardian: guardian, enrollment: features.enrollment, maximumBodySize: bodyLimit, now: now
        ).register(on: admin)
        AuditAdminRoutes(store: SQLAuditAdminStore(database: database, audit: repositories.audit), guardian: guardian)
            .register(on: admin)
        PushAdminRoutes(credentials: pushCredentials, guardian: guardian, maximumBodySize: bodyLimit).register(on: admin)
        DeliveryAdminRoutes(
            store: SQLDeliveryAdminStore(
                database: database, approvals: repositories.approvals, devices: repositories.devices,
                pushOutbox: repositories.pushOutbox, clientNotifications: repositories.clientNotifications),
            guardian: guardian, now: now
        ).register(on: admin)
        WebhookAdminRoutes(
            webhooks: TenantWebhookService(
                database: database, webhooks: repositories.webhooks, sealer: services.sealer, audit: audit, now: now),
            store: SQLWebhookAdminStore(database: database, outbox: repositories.webhookOutbox),
            guardian: guardian, maximumBodySize: bodyLimit
        ).register(on: admin)
        PolicyAdminRoutes(
            store: SQLPolicyAdminStore(
                database: database, tenants: repositories.tenants, users: repositories.users, audit: audit,
                tenantService: services.tenantService),
            guardian: guardian, maximumBodySize: bodyLimit, now: now
        ).register(on: admin)
        AuthorizationDetailTypeAdminRoutes(
            store: SQLAuthorizationDetailTypeAdminStore(
                database: database, tenants: repositories.tenants, audit: audit, tenantService: services.tenantService),
            guardian: guardian, maximumBodySize: bodyLimit, now: now
        ).register(on: admin)
        let configuration = services.configuration
        let origin = services.origin
        let continuation = listeningContinuation
        let listened = listened
        let connections = ConnectionRegistry(maximum: connectionCap, logger: services.logger)
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
            logger: services.logger)
    }

    /// The push, webhook and client-notification dispatchers, the HTTP server, the cross-node listener, and (shut
    /// down first) the closer of live streams.
    private var serviceList: [any Service] {
        // Shut down in reverse order: the dispatchers last, so that what the final requests queued
        // is still sent.
        var list: [any Service] = services.configuration.push.dispatch ? dispatchers : []
        list += [application, ClusterRelayListener(relay: services.clusterRelay, approvals: services.repositories.approvals),
                 LiveStreamCloser(events: services.approvalEvents)]
        return list
    }

    /// The push, webhook and client-notification dispatchers, each given what it reads and writes.
    private var dispatchers: [any Service] {
        let configuration = services.configuration
        let repositories = services.repositories
        let push = PushDispatcher(
            store: SQLPushDeliveryStore(
                database: services.database, outbox: repositories.pushOutbox, devices: repositories.devices,
                approvals: repositories.approvals, audit: services.audit),
            senders: PushSenders(
                credentials: SQLActivePushCredentials(database: services.database, credentials: repositories.pushCredentials),
                sealer: services.sealer, configuration: configuration.push,
                providerTokens: SQLAPNsProviderTokenStore(database: services.database, sealer: services.sealer),
                now: configuration.now, logger: services.logger),
            configuration: configuration.push, wakeup: services.pushWakeup, metrics: services.metrics,
            logger: services.logger, now: configuration.now)
        let webhooks = WebhookDispatcher(
            store: SQLWebhookDeliveryStore(
                database: services.database, outbox: repositories.webhookOutbox,
                targets: SQLWebhookTargets(database: services.database, webhooks: repositories.webhooks, sealer: services.sealer)),
            client: services.webhookClient, configuration: configuration.webhooks, wakeup: services.webhookWakeup,
            logger: services.logger, now: configuration.now)
        let store = SQLClientNotificationStore(
            database: services.database, notifications: repositories.clientNotifications, approvals: repositories.approvals,
            clients: repositories.clients, tenants: repositories.tenants)
        let notifications = ClientNotificationDispatcher(
            store: store,
            sender: ClientNotificationSender(
                store: store, sealer: services.sealer, tokens: TokenIssuer(keys: services.tokenSigningKeys),
                http: services.webhookClient, origin: services.origin, timeout: configuration.clientNotifications.timeout,
                now: configuration.now),
            configuration: configuration.clientNotifications, wakeup: services.clientNotificationWakeup,
            logger: services.logger, now: configuration.now)
        return [push, webhooks, notifications]
    }

    /// Serves until `signals` arrive (SIGINT and SIGTERM by default) or the task is cancelled;
    /// requests in flight finish before it returns, then the webhook client and the database are
    /// closed. A start that fails before the server listens (its port taken, say) withdraws the
    /// bootstrap admin key made for it: the next start makes and shows a new one.
    public func run(signals: [UnixSignal] = [.sigint, .sigterm]) async throws {
        let group = ServiceGroup(configuration: .init(
            services: serviceList, gracefulShutdownSignals: signals, logger: services.logger))
        do {
            try await group.run()
        } catch {
            if let secret = bootstrapAdminKey, !listened.isSet {
                do {
                    try await bootstrapper.withdraw(secret: secret)
                } catch {
                    services.logger.error("the bootstrap admin key of a start that failed could not be withdrawn",
                                          metadata: ["error": "\(ErrorMiddleware.describe(error))"])
                }
            }
            await services.webhookClient.shutdown()
            await services.database.close()
            throw error
        }
        await services.webhookClient.shutdown()
        await services.database.close()
    }

    /// Closes what `make` opened, for a server that was never run (its router driven in memory).
    func close() async {
        await services.webhookClient.shutdown()
        await services.database.close()
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

        public var baseURL: String { server.services.origin.base }

        public func stop() async throws {
            await group.triggerGracefulShutdown()
            do {
                try await task.value
            } catch {
                await server.services.webhookClient.shutdown()
                throw error
            }
            await server.services.webhookClient.shutdown()
            await server.services.database.close()
        }
    }

    /// Starts serving in the background and returns once the socket is bound.
    public func start() async throws -> Running {
        let group = ServiceGroup(configuration: .init(
            services: serviceList, gracefulShutdownSignals: [], logger: services.logger))
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
