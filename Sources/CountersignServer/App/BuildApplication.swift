import CountersignMail
import Foundation
import Hummingbird
import Logging
import ServiceLifecycle

extension CountersignServer {
    /// Builds one node on its opened, migrated database: every shared part once, the default
    /// tenant and the bootstrap key, each feature with the few parts it declares, the router,
    /// and the background services. Read top to bottom, this is the whole assembly: no part is
    /// reached through another, and nothing is built twice.
    static func buildApplication(
        configuration: ServerConfiguration, database: any Database, sealer: SecretSealer, connectionCap: Int, logger: Logger
    ) async throws -> CountersignServer {
        let now = configuration.now
        let origin = PublicOrigin(configuration.publicURL)
        let metrics = ServerMetrics()
        // Live-stream wake-ups and cache invalidations between nodes.
        let approvalEvents = ApprovalEvents()
        let clusterRelay = ClusterRelay(database: database, events: approvalEvents, caches: RecordCaches(), logger: logger)
        // Every store that records a security notice announces it to the devices' live streams.
        let notices = SQLSecurityNoticeRepository(live: LiveNotices(events: approvalEvents, relay: clusterRelay))

        // Storage: each feature's repository over its own tables. They hold no state; a test may
        // put a fake behind any of these protocols.
        let tenantRepository: any TenantRepository = SQLTenantRepository()
        let adminKeys: any AdminKeyRepository = SQLAdminKeyRepository()
        let clients: any ClientRepository = CachedClientRepository(base: SQLClientRepository(), relay: clusterRelay)
        let users: any UserRepository = SQLUserRepository()
        let tickets: any EnrollmentTicketRepository = SQLEnrollmentTicketRepository()
        let devices: any DeviceRepository = SQLDeviceRepository()
        let auditRepository: any AuditRepository = SQLAuditRepository()
        let approvals: any ApprovalTransactionRepository = SQLApprovalTransactionRepository()
        let pushCredentialRepository: any PushCredentialRepository = SQLPushCredentialRepository()
        let pushOutbox: any PushOutboxRepository = SQLPushOutboxRepository()
        let webhooks: any TenantWebhookRepository = SQLTenantWebhookRepository()
        let webhookOutbox: any WebhookOutboxRepository = SQLWebhookOutboxRepository()
        let clientNotifications: any ClientNotificationRepository = SQLClientNotificationRepository()
        let clientRequestWindows: any ClientRequestWindowRepository = SQLClientRequestWindowRepository()
        let radiusClients: any RADIUSClientRepository = SQLRADIUSClientRepository()
        let groups: any GroupRepository = SQLGroupRepository()
        let directories: any DirectoryRepository = SQLDirectoryRepository()

        // The node's shared parts. The audit log also queues the Shared Signals its events make.
        let (securityEventWakeup, securityEventPolls) = (PushWakeup(), StreamSignal())
        let sharedSignals = SharedSignals(
            users: users, devices: devices, tenants: tenantRepository, origin: origin, pushWakeup: securityEventWakeup,
            polls: securityEventPolls)
        let audit = AuditLog(repository: auditRepository, signals: sharedSignals)
        let tenants = TenantService(
            store: SQLTenantStore(database: database, tenants: tenantRepository, audit: audit), sealer: sealer)
        let throttle = FailedAuthenticationThrottle(limit: configuration.failedAuthenticationLimit, now: now)
        let adminAuthenticator = AdminAuthenticator(
            store: SQLAdminAuthenticatorStore(database: database, keys: adminKeys, audit: audit), throttle: throttle,
            metrics: metrics)
        let tokenSigningKeys = TokenSigningKeys(
            store: SQLTokenSigningKeyStore(database: database), sealer: sealer, now: now,
            rotationAge: configuration.tokenSigningKeyRotation)
        let (pushWakeup, webhookWakeup, clientNotificationWakeup) = (PushWakeup(), PushWakeup(), PushWakeup())
        let mailWakeup = PushWakeup()
        let webhookClient = WebhookHTTPClient()
        let webhookTargets = SQLWebhookTargets(database: database, webhooks: webhooks, sealer: sealer)
        let tenantEvents = TenantEvents(
            webhooks: webhooks, tenants: tenantRepository, outbox: webhookOutbox, wakeup: webhookWakeup)
        let customVerifier = CustomVerifier(
            targets: webhookTargets, client: webhookClient, timeout: configuration.webhooks.verifierTimeout, logger: logger,
            now: now)

        let directorySync = DirectorySync(
            database: database, directories: directories, users: users, groups: groups, audit: audit, sealer: sealer, now: now)

        let directoryLookup = DirectoryLookup(
            database: database, directories: directories, users: users, groups: groups, sync: directorySync, audit: audit,
            logger: logger, now: now)

        let authenticatorMetadata = AuthenticatorMetadataService(
            configuration: configuration.metadata, database: database, metrics: metrics, logger: logger, now: now)

        let directoryPasswords = DirectoryPasswords(
            database: database, directories: directories, sync: directorySync, metrics: metrics, logger: logger, now: now)

        let bootstrapper = Bootstrap(
            database: database, tenants: tenantRepository, adminKeys: adminKeys, tenantService: tenants,
            authenticator: adminAuthenticator, audit: audit, now: now)
        let bootstrap = try await bootstrapper.run()

        // The features the routes call.
        let pins = PINVerifier(store: SQLPINAttemptStore(database: database, devices: devices, audit: audit), now: now)
        let approvalService = ApprovalService(
            store: SQLApprovalStore(
                database: database, approvals: approvals, devices: devices, users: users, pushOutbox: pushOutbox,
                clientNotifications: clientNotifications, clientRequestWindows: clientRequestWindows, audit: audit,
                notRequested: NotRequestedReport(users: users, audit: audit, events: tenantEvents), cluster: clusterRelay),
            signals: ApprovalSignals(
                pushWakeup: pushWakeup, clientNotificationWakeup: clientNotificationWakeup,
                notifiers: [LiveStreamNotifier(events: approvalEvents)], events: approvalEvents),
            answers: AnswerCheck(
                store: SQLAnswerCheckStore(database: database, users: users, approvals: approvals), pins: pins,
                verifier: customVerifier),
            sealer: sealer, metrics: metrics, logger: logger, now: now)
        let jwtIDs = JWTIDLedger(store: SQLJWTIDLedgerStore(database: database), now: now)
        let userHints = UserHintResolver(
            store: SQLUserHintStore(database: database, users: users, directory: directoryLookup), signingKeys: tokenSigningKeys, now: now)
        let tokens = TokenIssuer(keys: tokenSigningKeys, records: SQLIssuedTokenStore(database: database))
        let housekeeping = TokenHousekeeping(store: SQLTokenHousekeepingStore(database: database), logger: logger)
        let codeFlow = SQLCodeFlowStore(database: database, clients: clients, users: users, audit: audit)
        let authorization = AuthorizationEndpoint(store: codeFlow, now: now)
        let accessTokens = AccessTokenVerifier(
            store: SQLAccessTokenVerifierStore(database: database, users: users), signingKeys: tokenSigningKeys, now: now)
        let trustedIssuers: any TrustedIssuerRepository = SQLTrustedIssuerRepository()
        let certificates = DeviceCertificates(keys: tokenSigningKeys, origin: origin, now: now)
        let enrollment = EnrollmentService(
            store: SQLEnrollmentStore(
                database: database, tickets: tickets, users: users, devices: devices, audit: audit, notices: notices,
                mailWakeup: mailWakeup),
            accessTokens: accessTokens,
            trustedIssuers: TrustedIssuerTokenVerifier(
                store: SQLTrustedIssuerTokenStore(
                    database: database, issuers: trustedIssuers, users: users, directory: directoryLookup),
                keys: TrustedIssuerKeyCache(fetcher: HTTPJWKSFetcher(), logger: logger, now: now), now: now),
            jwtIDs: jwtIDs, sealer: sealer, certificates: certificates,
            tenants: tenants, origin: origin, ticketLifetime: configuration.enrollmentTicketLifetime,
            signatureWindow: configuration.signatureWindow, now: now)
        let deviceAuthenticator = DeviceAuthenticator(
            store: SQLDeviceSignatureStore(database: database, devices: devices), window: configuration.signatureWindow,
            metrics: metrics, now: now)
        let deviceSelfService = DeviceSelfService(
            store: SQLDeviceSelfServiceStore(database: database, devices: devices, users: users, audit: audit), pins: pins,
            now: now)
        let oauthEndpoint = OAuthEndpoint(
            clientAuthentication: ClientAuthentication(
                store: SQLClientAuthenticationStore(database: database, clients: clients), origin: origin, throttle: throttle,
                metrics: metrics, jwtIDs: jwtIDs, now: now),
            metrics: metrics)
        let backchannel = BackchannelAuthentication(
            rateLimit: ClientRateLimit(
                store: SQLClientRateLimitStore(database: database, windows: clientRequestWindows), metrics: metrics,
                now: now),
            jwtIDs: jwtIDs, userHints: userHints,
            userCodes: UserCodeCheck(
                store: SQLUserCodeCheckStore(database: database, audit: audit), sealer: sealer, now: now),
            approvals: approvalService)
        let cibaGrant = CIBAGrant(
            store: SQLCIBAGrantStore(
                database: database, approvals: approvals, users: users, devices: devices, tokens: tokens, audit: audit),
            tokens: tokens, now: now)
        let tokenEndpoint = TokenEndpoint(
            ciba: cibaGrant,
            code: AuthorizationCodeGrant(store: codeFlow, tokens: tokens, now: now),
            refresh: RefreshTokenGrant(
                store: SQLRefreshTokenStore(database: database, users: users, tokens: tokens, audit: audit),
                now: now, tokens: tokens, housekeeping: housekeeping))

        // The router: health first, then the tenant routes (at "" and "/t/{tenant}"), then admin.
        let router = Router(context: CountersignRequestContext.self)
        router.add(middleware: SecurityHeadersMiddleware(origin: origin))
        router.add(middleware: MetricsMiddleware(metrics: metrics))
        let routeMethods = RouteMethods()
        router.add(middleware: ErrorMiddleware(surface: .api, logger: logger, methods: routeMethods))
        router.add(middleware: NULInPathRefusal())
        router.add(middleware: LoopbackAliasRedirect(origin: origin))
        HealthRoutes(database: database, metrics: metrics).register(on: router)
        OpenAPIRoutes().register(on: router)
        let throttling = FailedAuthenticationMiddleware(throttle: throttle, metrics: metrics)
        let guardian = AdminGuard(authenticator: adminAuthenticator, tenants: tenants, now: now)
        let (bodyLimit, pushCredentials) = (
            configuration.maximumBodySize,
            PushCredentialService(
                store: SQLPushCredentialStore(database: database, credentials: pushCredentialRepository, audit: audit),
                sealer: sealer, now: now))
        let tenantRoutes = TenantRoutes(
            tenant: TenantMiddleware(tenants: tenants, origin: origin), throttle: throttling, logger: logger)
        DiscoveryRoutes(signingKeys: tokenSigningKeys).register(on: tenantRoutes)
        OAuthRoutes(
            endpoint: oauthEndpoint, tokens: tokenEndpoint, authorization: authorization,
            revocation: TokenRevocation(
                store: SQLTokenRevocationStore(database: database, audit: audit), signingKeys: tokenSigningKeys, now: now,
                housekeeping: housekeeping),
            introspection: TokenIntrospection(
                store: SQLTokenIntrospectionStore(database: database, users: users), now: now, accessTokens: accessTokens)
        ).register(on: tenantRoutes)
        CIBARoutes(
            endpoint: oauthEndpoint, backchannel: backchannel, requests: cibaGrant.store, certificates: certificates, now: now
        ).register(on: tenantRoutes)
        let totp = TOTPVerification(
            store: SQLTOTPVerificationStore(database: database, devices: devices, users: users, audit: audit),
            sealer: sealer, userHints: userHints, now: now)
        TOTPRoutes(endpoint: oauthEndpoint, verification: totp).register(on: tenantRoutes)
        UserInfoRoutes(metrics: metrics, accessTokens: accessTokens).register(on: tenantRoutes.group(surface: .oauth))
        SCIMRoutes(
            store: SCIMStore(database: database, users: users, groups: groups, audit: audit), guardian: guardian,
            maximumBodySize: bodyLimit, now: now
        ).register(on: tenantRoutes.group("/scim/v2", surface: .scim, takesSecret: true))
        let passkeyStore = SQLPasskeyStore(database: database, users: users, audit: audit, notices: notices)
        let rememberedBrowsers = RememberedBrowsers(database: database, audit: audit, now: now)
        let recovery = RecoveryService(
            store: SQLRecoveryStore(database: database, audit: audit, events: tenantEvents, notices: notices), now: now,
            metrics: metrics)
        let signInFlow = SignInFlow(
            store: SQLSignInStore(
                database: database, users: users, approvals: approvals, devices: devices, passkeys: passkeyStore, audit: audit,
                directory: directoryLookup),
            interaction: AuthorizationInteraction(endpoint: authorization, signingKeys: tokenSigningKeys, origin: origin, now: now),
            approvals: approvalService, events: approvalEvents, throttle: throttle, pushLimits: SignInPushLimits(now: now),
            cookies: BrowserCookies(origin: origin), now: now, passwords: directoryPasswords)
        let passkeys = PasskeyService(
            store: passkeyStore, origin: origin, metadata: authenticatorMetadata, metrics: metrics, now: now)
        SignInRoutes(
            flow: signInFlow,
            invitations: InvitationFlow(enrollment: enrollment, signIn: signInFlow, events: approvalEvents),
            passkeys: PasskeySignInFlow(signIn: signInFlow, passkeys: passkeys)
        ).register(on: tenantRoutes)
        SignInRoutes.registerAssets(on: router)
        let accountFlow = AccountFlow(
            signIn: signInFlow,
            store: SQLAccountStore(
                database: database, users: users, devices: devices, tickets: tickets, approvals: approvals,
                clients: clients, audit: audit,
                notRequested: NotRequestedReport(users: users, audit: audit, events: tenantEvents)),
            passkeys: passkeyStore, enrollment: enrollment, recovery: recovery, rememberedBrowsers: rememberedBrowsers, now: now)
        AccountRoutes(
            flow: accountFlow, passkeys: PasskeyAccountFlow(account: accountFlow, passkeys: passkeys),
            recovery: RecoveryFlow(signIn: signInFlow, service: recovery, users: { username, tenantID in
                try await users.find(username: username, tenantID: tenantID, on: database)
            })
        ).register(on: tenantRoutes)
        let inProcess = InProcessRouter()
        let consoleStore = SQLConsoleStore(
            database: database, keys: adminKeys, authenticator: adminAuthenticator, audit: audit)
        let consoleFlow = ConsoleFlow(
            store: consoleStore, clients: clients, database: database, router: inProcess,
            cookies: ConsoleCookies(origin: origin, sealer: sealer), now: now)
        ConsoleRoutes(flow: consoleFlow).register(on: tenantRoutes)
        DeviceRoutes(
            enrollment: enrollment, authenticator: deviceAuthenticator, selfService: deviceSelfService,
            approvals: approvalService, events: approvalEvents,
            tenants: tenants, origin: origin, metrics: metrics, maximumBodySize: bodyLimit, now: now,
            liveStreamKeepalive: configuration.liveStreamKeepalive,
            notices: SecurityNoticeService(
                database: database, devices: devices, users: users,
                passkeys: passkeyStore, audit: audit,
                events: tenantEvents, now: now)
        ).register(on: tenantRoutes)
        CyberArkMobileRoutes(credentials: pushCredentials, guardian: guardian, maximumBodySize: bodyLimit)
            .register(on: tenantRoutes)
        let securityEventSigner = SecurityEventSigner(
            keys: tokenSigningKeys, tenants: tenantRepository, origin: origin, database: database)
        let sharedSignalsRoutes = SharedSignalsRoutes(
            streams: EventStreams(
                database: database, audit: audit, signals: sharedSignals, signer: securityEventSigner, sealer: sealer,
                configuration: configuration.sharedSignals, metrics: metrics, now: now),
            guardian: guardian, maximumBodySize: bodyLimit)
        sharedSignalsRoutes.register(on: tenantRoutes.group("/ssf", surface: .api, takesSecret: true))
        sharedSignalsRoutes.registerMetadata(on: tenantRoutes.rootGroup(surface: .api))
        tenantRoutes.mount(on: router)

        let admin = router.group("").add(middleware: throttling)
        TenantAdminRoutes(
            store: SQLTenantAdminStore(database: database, tenants: tenantRepository, tenantService: tenants, audit: audit),
            guardian: guardian, origin: origin, maximumBodySize: bodyLimit, now: now
        ).register(on: admin)
        AdminKeyRoutes(
            store: SQLAdminKeyStore(database: database, keys: adminKeys, authenticator: adminAuthenticator, audit: audit),
            guardian: guardian, maximumBodySize: bodyLimit, now: now
        ).register(on: admin)
        ClientAdminRoutes(
            store: SQLClientAdminStore(database: database, clients: clients, audit: audit),
            guardian: guardian, maximumBodySize: bodyLimit, now: now
        ).register(on: admin)
        let userAdminStore = SQLUserAdminStore(
            database: database, users: users, userCodes: SQLUserCodeRepository(), tickets: tickets, devices: devices,
            audit: audit, masterKey: sealer.masterKey)
        UserAdminRoutes(
            store: userAdminStore,
            guardian: guardian, enrollment: enrollment, maximumBodySize: bodyLimit, now: now
        ).register(on: admin)
        RecoveryAdminRoutes(service: recovery, users: userAdminStore, guardian: guardian, maximumBodySize: bodyLimit)
            .register(on: admin)
        RememberedBrowserAdminRoutes(browsers: rememberedBrowsers, users: userAdminStore, guardian: guardian)
            .register(on: admin)
        GroupAdminRoutes(
            store: SQLGroupAdminStore(database: database, groups: SQLGroupRepository(), users: users, audit: audit),
            guardian: guardian, maximumBodySize: bodyLimit, now: now
        ).register(on: admin)
        AuditAdminRoutes(store: SQLAuditAdminStore(database: database, audit: auditRepository), guardian: guardian)
            .register(on: admin)
        PushAdminRoutes(credentials: pushCredentials, guardian: guardian, maximumBodySize: bodyLimit).register(on: admin)
        DeliveryAdminRoutes(
            store: SQLDeliveryAdminStore(
                database: database, approvals: approvals, devices: devices, pushOutbox: pushOutbox,
                clientNotifications: clientNotifications),
            guardian: guardian, now: now
        ).register(on: admin)
        WebhookAdminRoutes(
            webhooks: TenantWebhookService(
                store: SQLTenantWebhookStore(database: database, webhooks: webhooks, audit: audit), sealer: sealer, now: now),
            store: SQLWebhookAdminStore(database: database, outbox: webhookOutbox),
            guardian: guardian, maximumBodySize: bodyLimit
        ).register(on: admin)
        PolicyAdminRoutes(
            store: SQLPolicyAdminStore(
                database: database, tenants: tenantRepository, users: users, audit: audit, tenantService: tenants),
            guardian: guardian, origin: origin, metadata: configuration.metadata != nil, maximumBodySize: bodyLimit, now: now
        ).register(on: admin)
        AuthorizationDetailTypeAdminRoutes(
            store: SQLAuthorizationDetailTypeAdminStore(
                database: database, tenants: tenantRepository, audit: audit, tenantService: tenants),
            guardian: guardian, maximumBodySize: bodyLimit, now: now
        ).register(on: admin)
        SharedSignalsAdminRoutes(database: database, audit: audit, guardian: guardian, now: now).register(on: admin)
        TrustedIssuerAdminRoutes(
            store: SQLTrustedIssuerAdminStore(database: database, issuers: trustedIssuers, audit: audit),
            guardian: guardian, origin: origin, maximumBodySize: bodyLimit, now: now
        ).register(on: admin)
        RADIUSClientAdminRoutes(
            store: SQLRADIUSClientAdminStore(database: database, clients: radiusClients, relay: clusterRelay, audit: audit),
            guardian: guardian, sealer: sealer, maximumBodySize: bodyLimit, now: now
        ).register(on: admin)
        DirectoryAdminRoutes(
            database: database, directories: directories, sync: directorySync, guardian: guardian, sealer: sealer,
            audit: audit, maximumBodySize: bodyLimit, now: now
        ).register(on: admin)
        MailAdminRoutes(
            database: database, guardian: guardian, sealer: sealer, audit: audit, client: SMTPClient(),
            configuration: configuration.mail, maximumBodySize: bodyLimit, now: now
        ).register(on: admin)
        PasskeyAdminRoutes(store: passkeyStore, guardian: guardian, now: now).register(on: admin)
        MetadataAdminRoutes(
            metadata: authenticatorMetadata,
            findings: PasskeyFindings(store: passkeyStore, metadata: authenticatorMetadata, now: now), guardian: guardian
        ).register(on: admin)
        StatisticsAdminRoutes(store: SQLStatisticsStore(database: database), guardian: guardian, now: now).register(on: admin)
        ConsoleRoleAdminRoutes(
            store: consoleStore, users: userAdminStore, guardian: guardian, maximumBodySize: bodyLimit, now: now
        ).register(on: admin)
        routeMethods.learn(router.table)
        inProcess.install(router)

        // Background work: the dispatchers of push notifications, webhook events and client
        // callbacks, each given what it reads and writes.
        let push = PushDispatcher(
            store: SQLPushDeliveryStore(
                database: database, outbox: pushOutbox, devices: devices, approvals: approvals, audit: audit),
            senders: PushSenders(
                credentials: SQLActivePushCredentials(database: database, credentials: pushCredentialRepository),
                sealer: sealer, configuration: configuration.push,
                providerTokens: SQLAPNsProviderTokenStore(database: database, sealer: sealer), now: now, logger: logger),
            configuration: configuration.push, wakeup: pushWakeup, metrics: metrics, logger: logger, now: now)
        let webhookDispatcher = WebhookDispatcher(
            store: SQLWebhookDeliveryStore(database: database, outbox: webhookOutbox, targets: webhookTargets),
            client: webhookClient, configuration: configuration.webhooks, wakeup: webhookWakeup, logger: logger, now: now)
        let securityEventDispatcher = StreamPushDispatcher(
            database: database, signer: securityEventSigner, sealer: sealer, client: webhookClient,
            configuration: configuration.webhooks, wakeup: securityEventWakeup, metrics: metrics, logger: logger, now: now,
            retention: configuration.sharedSignals.retention)
        let mailDispatcher = MailDispatcher(
            database: database, sealer: sealer, client: SMTPClient(), configuration: configuration.mail,
            wakeup: mailWakeup, metrics: metrics, logger: logger, now: now)
        let notificationStore = SQLClientNotificationStore(
            database: database, notifications: clientNotifications, approvals: approvals, clients: clients,
            tenants: tenantRepository)
        let notifications = ClientNotificationDispatcher(
            store: notificationStore,
            sender: ClientNotificationSender(
                store: notificationStore, sealer: sealer, tokens: tokens, http: webhookClient, origin: origin,
                timeout: configuration.clientNotifications.timeout, now: now),
            configuration: configuration.clientNotifications, wakeup: clientNotificationWakeup, logger: logger, now: now)

        // RADIUS, over UDP and over TLS (RadSec), when a port is given: the same approvals.
        let radius = configuration.radiusPort != nil || configuration.radsec != nil
            ? RADIUSAuthentication(
                directory: RADIUSClientDirectory(
                    database: database, clients: radiusClients, caches: clusterRelay.caches, sealer: sealer,
                    logger: logger),
                store: SQLRADIUSStore(
                    database: database, tenants: tenantRepository, users: users, devices: devices, approvals: approvals,
                    logins: SQLRADIUSLoginRepository(), audit: audit, directory: directoryLookup),
                approvals: approvalService, totp: totp, duplicates: RADIUSDuplicateCache(), drops: RADIUSDropLog(),
                metrics: metrics, events: approvalEvents, logger: logger, now: now, passwords: directoryPasswords)
            : nil
        let radiusListeners = RADIUSListeners(
            udp: configuration.radiusPort.flatMap { port in radius?.listening(host: configuration.host, port: port) },
            tls: try configuration.radsec.flatMap { radsec in
                try radius.map {
                    RadSecListener(
                        host: configuration.host, port: radsec.port, context: try radsec.tlsContext(), authentication: $0,
                        logger: logger)
                }
            })

        return CountersignServer(
            router: router, configuration: configuration, origin: origin, database: database, logger: logger,
            connectionCap: connectionCap, bootstrapper: bootstrapper, bootstrap: bootstrap,
            dispatchers: (configuration.push.dispatch ? [push, webhookDispatcher, securityEventDispatcher, notifications, mailDispatcher] : [])
                + [DirectoryScheduler(database: database, directories: directories, sync: directorySync, logger: logger, now: now)]
                + (configuration.metadata == nil ? [] : [MetadataScheduler(metadata: authenticatorMetadata, logger: logger)]),
            clusterListener: ClusterRelayListener(relay: clusterRelay, approvals: approvals),
            liveStreamCloser: LiveStreamCloser(events: approvalEvents, polls: securityEventPolls), webhookClient: webhookClient,
            sealer: sealer, tenants: tenants, tokenSigningKeys: tokenSigningKeys, adminAuthenticator: adminAuthenticator,
            approvalEvents: approvalEvents, tenantEvents: tenantEvents, customVerifier: customVerifier, radius: radiusListeners)
    }
}
