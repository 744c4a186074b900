import Foundation

/// How code that still holds the whole `ServerServices` reaches the push, webhook and
/// client-notification features: each door hands a feature only the parts it declares it needs.
/// They go with `ServerServices`.
extension ServerServices {
    /// Queues events for tenants' event receivers.
    public var tenantEvents: TenantEvents {
        TenantEvents(webhooks: repositories.webhooks, outbox: repositories.webhookOutbox, wakeup: webhookWakeup)
    }

    /// Tenants' webhooks, their secrets opened.
    var webhookTargets: SQLWebhookTargets {
        SQLWebhookTargets(database: database, webhooks: repositories.webhooks, sealer: sealer)
    }
}

extension CustomVerifier {
    /// The verifier of the tenants' `custom-verifier` webhooks, called with the server's webhook
    /// client within `WebhookConfiguration.verifierTimeout`.
    public init(services: ServerServices) {
        self.init(
            targets: services.webhookTargets, client: services.webhookClient,
            timeout: services.configuration.webhooks.verifierTimeout, logger: services.logger, now: services.configuration.now)
    }
}

extension WebhookTarget {
    /// The tenant's webhook for `purpose` (see `WebhookTargets.target`).
    static func load(tenantID: String, purpose: WebhookPurpose, services: ServerServices) async throws -> WebhookTarget? {
        try await services.webhookTargets.target(tenantID: tenantID, purpose: purpose)
    }
}
