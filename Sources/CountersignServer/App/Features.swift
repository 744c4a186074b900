import Foundation

/// The features the routes call, each built once with the few things it needs. A feature that
/// reads or writes storage gets the narrow store it declares beside its flow (`ApprovalStore`,
/// `CIBAGrantStore`, `DeviceSignatureStore`), implemented on the server's database.
struct Features: Sendable {
    let approvals: ApprovalService
    let deviceAuthenticator: DeviceAuthenticator
    let deviceSelfService: DeviceSelfService

    init(services: ServerServices) {
        let database = services.database
        let repositories = services.repositories
        let now = services.configuration.now
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
                verifier: CustomVerifier(services: services)),
            sealer: services.sealer, metrics: services.metrics, logger: services.logger, now: now)
        deviceAuthenticator = DeviceAuthenticator(
            store: SQLDeviceSignatureStore(database: database, devices: repositories.devices),
            window: services.configuration.signatureWindow, metrics: services.metrics, now: now)
        deviceSelfService = DeviceSelfService(
            database: database, devices: repositories.devices, users: repositories.users, audit: services.audit,
            pins: pins, now: now)
    }
}
