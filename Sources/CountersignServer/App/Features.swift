import Foundation

/// The features the routes call, each built once with the few things it needs. A feature that
/// reads or writes storage gets the narrow store it declares beside its flow (`ApprovalStore`,
/// `CIBAGrantStore`, `DeviceSignatureStore`), implemented on the server's database.
struct Features: Sendable {
    let approvals: ApprovalService
    let deviceAuthenticator: DeviceAuthenticator
    let deviceSelfService: DeviceSelfService
    let clientAuthentication: ClientAuthentication
    let backchannel: BackchannelAuthentication
    let tokenEndpoint: TokenEndpoint
    let revocation: TokenRevocation
    let introspection: TokenIntrospection
    let accessTokens: AccessTokenVerifier
    let totp: TOTPVerification
    let enrollment: EnrollmentService
    /// Wakes the live streams of connected devices.
    let approvalEvents: ApprovalEvents

    init(services: ServerServices) {
        let database = services.database
        let repositories = services.repositories
        let now = services.configuration.now
        approvalEvents = services.approvalEvents
        enrollment = EnrollmentService(
            database: database, tickets: repositories.tickets, users: repositories.users, devices: repositories.devices,
            audit: services.audit, sealer: services.sealer, tenants: services.tenantService, origin: services.origin,
            ticketLifetime: services.configuration.enrollmentTicketLifetime,
            signatureWindow: services.configuration.signatureWindow, now: now)
        let pins = PINVerifier(database: database, devices: repositories.devices, audit: services.audit, now: now)
        approvals = ApprovalService(
            store: SQLApprovalStore(
                database: database, approvals: repositories.approvals, devices: repositories.devices,
                users: repositories.users, pushOutbox: repositories.pushOutbox,
                clientNotifications: repositories.clientNotifications,
                clientRequestWindows: repositories.clientRequestWindows, audit: services.audit,
                notRequested: NotRequestedReport(users: repositories.users, audit: services.audit, events: services.tenantEvents)),
            signals: ApprovalSignals(
                pushWakeup: services.pushWakeup, clientNotificationWakeup: services.clientNotificationWakeup,
                notifiers: services.notifiers, events: services.approvalEvents, cluster: services.clusterRelay),
            answers: AnswerCheck(
                database: database, users: repositories.users, approvals: repositories.approvals, pins: pins,
                verifier: CustomVerifier(
                    targets: SQLWebhookTargets(database: database, webhooks: repositories.webhooks, sealer: services.sealer),
                    client: services.webhookClient, timeout: services.configuration.webhooks.verifierTimeout,
                    logger: services.logger, now: now)),
            sealer: services.sealer, metrics: services.metrics, logger: services.logger, now: now)
        deviceAuthenticator = DeviceAuthenticator(
            store: SQLDeviceSignatureStore(database: database, devices: repositories.devices),
            window: services.configuration.signatureWindow, metrics: services.metrics, now: now)
        deviceSelfService = DeviceSelfService(
            database: database, devices: repositories.devices, users: repositories.users, audit: services.audit,
            pins: pins, now: now)

        let signingKeys = services.tokenSigningKeys
        let jwtIDs = JWTIDLedger(database: database, now: now)
        clientAuthentication = ClientAuthentication(
            database: database, clients: repositories.clients, origin: services.origin,
            throttle: services.authenticationThrottle, metrics: services.metrics, jwtIDs: jwtIDs, now: now)
        let userHints = UserHintResolver(database: database, users: repositories.users, signingKeys: signingKeys, now: now)
        backchannel = BackchannelAuthentication(
            rateLimit: ClientRateLimit(
                database: database, windows: repositories.clientRequestWindows, metrics: services.metrics, now: now),
            jwtIDs: jwtIDs, userHints: userHints,
            userCodes: UserCodeCheck(database: database, sealer: services.sealer, audit: services.audit, now: now),
            approvals: approvals)
        let tokens = TokenIssuer(keys: signingKeys)
        let housekeeping = TokenHousekeeping(database: database, logger: services.logger)
        tokenEndpoint = TokenEndpoint(
            ciba: CIBAGrant(
                store: SQLCIBAGrantStore(
                    database: database, approvals: repositories.approvals, users: repositories.users,
                    devices: repositories.devices, tokens: tokens, audit: services.audit),
                tokens: tokens, now: now),
            refresh: RefreshTokenGrant(
                database: database, users: repositories.users, audit: services.audit, now: now, tokens: tokens,
                housekeeping: housekeeping))
        revocation = TokenRevocation(
            database: database, audit: services.audit, signingKeys: signingKeys, now: now, housekeeping: housekeeping)
        accessTokens = AccessTokenVerifier(database: database, users: repositories.users, signingKeys: signingKeys, now: now)
        introspection = TokenIntrospection(database: database, users: repositories.users, now: now, accessTokens: accessTokens)
        totp = TOTPVerification(
            database: database, devices: repositories.devices, users: repositories.users, sealer: services.sealer,
            audit: services.audit, userHints: userHints, now: now)
    }
}
