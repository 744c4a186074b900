import Foundation
import Logging
import Prometheus

/// The repositories of every feature, each behind its own protocol.
public struct Repositories: Sendable {
    public var tenants: any TenantRepository = SQLTenantRepository()
    public var adminKeys: any AdminKeyRepository = SQLAdminKeyRepository()
    public var clients: any ClientRepository = SQLClientRepository()
    public var users: any UserRepository = SQLUserRepository()
    public var tickets: any EnrollmentTicketRepository = SQLEnrollmentTicketRepository()
    public var devices: any DeviceRepository = SQLDeviceRepository()
    public var audit: any AuditRepository = SQLAuditRepository()
    public var approvals: any ApprovalTransactionRepository = SQLApprovalTransactionRepository()
    public var tokenSigningKeys: any TokenSigningKeyRepository = SQLTokenSigningKeyRepository()
    public var pushCredentials: any PushCredentialRepository = SQLPushCredentialRepository()
    public var pushOutbox: any PushOutboxRepository = SQLPushOutboxRepository()
    public var webhooks: any TenantWebhookRepository = SQLTenantWebhookRepository()
    public var webhookOutbox: any WebhookOutboxRepository = SQLWebhookOutboxRepository()

    public var clientNotifications: any ClientNotificationRepository = SQLClientNotificationRepository()
    public var clientRequestWindows: any ClientRequestWindowRepository = SQLClientRequestWindowRepository()

    public init() {}
}

/// What one node has once: configuration, the database and its repositories, the sealer, the
/// audit log, the clock, metrics, the wake-ups and the cross-node relay. Only the assembly reads
/// it (`CountersignServer`, `Features`, `Bootstrap`) to hand each feature the few parts it
/// declares; no feature, route or store takes it whole.
public struct ServerServices: Sendable {
    public let configuration: ServerConfiguration
    public let origin: PublicOrigin
    public let database: any Database
    public let repositories: Repositories
    public let sealer: SecretSealer
    public let audit: AuditLog
    public let tenantService: TenantService
    public let adminAuthenticator: AdminAuthenticator
    public let metrics: ServerMetrics
    /// Failed authentications per source and per credential (`FailedAuthenticationThrottle`).
    public let authenticationThrottle: FailedAuthenticationThrottle
    public let logger: Logger
    /// Wakes the live streams of connected devices.
    public let approvalEvents = ApprovalEvents()
    /// The channels that tell a device a request is waiting: its live streams today.
    public let notifiers: [any RequestNotifier]
    /// Wakes this node's push dispatcher when notifications are queued.
    let pushWakeup = PushWakeup()
    /// Wakes this node's webhook dispatcher when events are queued.
    let webhookWakeup = PushWakeup()
    /// Wakes this node's dispatcher of ping and push callbacks.
    let clientNotificationWakeup = PushWakeup()
    /// The HTTP client of every webhook call, shut down when the server stops.
    let webhookClient = WebhookHTTPClient()
    /// Wakes live streams held by other nodes (PostgreSQL only).
    public let clusterRelay: ClusterRelay
    /// Each tenant's keys for the ID tokens and access tokens it issues.
    public let tokenSigningKeys: TokenSigningKeys

    init(configuration: ServerConfiguration, origin: PublicOrigin, database: any Database, sealer: SecretSealer,
         metrics: ServerMetrics, logger: Logger) {
        self.configuration = configuration
        self.origin = origin
        self.database = database
        self.repositories = Repositories()
        self.sealer = sealer
        self.audit = AuditLog(repository: repositories.audit)
        self.tenantService = TenantService(database: database, tenants: repositories.tenants, sealer: sealer, audit: audit)
        self.authenticationThrottle = FailedAuthenticationThrottle(
            limit: configuration.failedAuthenticationLimit, now: configuration.now)
        self.adminAuthenticator = AdminAuthenticator(
            database: database, keys: repositories.adminKeys, audit: audit, throttle: authenticationThrottle, metrics: metrics)
        self.metrics = metrics
        self.logger = logger
        self.notifiers = [LiveStreamNotifier(events: approvalEvents)]
        self.clusterRelay = ClusterRelay(database: database, events: approvalEvents, logger: logger)
        self.tokenSigningKeys = TokenSigningKeys(
            database: database, repository: repositories.tokenSigningKeys, sealer: sealer, now: configuration.now,
            rotationAge: configuration.tokenSigningKeyRotation)
    }

    public func now() -> Date { configuration.now() }
}
