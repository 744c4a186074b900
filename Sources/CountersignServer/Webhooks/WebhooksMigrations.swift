/// The tables this feature owns: `tenant_webhooks` and the `webhook_outbox`. Each change runs in
/// the schema version it names, in the order `Migrations.features` gives the features.
extension FeatureMigrations {
    static let webhooks = FeatureMigrations(feature: "Webhooks", changes: [
        SchemaChange(.factors, [
            // Each tenant's webhooks: the custom-factor verifier and the event receiver.
            """
            CREATE TABLE tenant_webhooks (
                tenant_id TEXT NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
                purpose TEXT NOT NULL,
                url TEXT NOT NULL,
                secret_sealed \(.bytes) NOT NULL,
                created_at BIGINT NOT NULL,
                updated_at BIGINT NOT NULL,
                PRIMARY KEY (tenant_id, purpose)
            )
            """,
            // Events for a tenant's event receiver, written in the transaction of what they
            // report and delivered by the webhook dispatcher, with retries.
            """
            CREATE TABLE webhook_outbox (
                id TEXT PRIMARY KEY,
                tenant_id TEXT NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
                event TEXT NOT NULL,
                payload TEXT NOT NULL,
                status TEXT NOT NULL,
                attempts BIGINT NOT NULL DEFAULT 0,
                next_attempt_at BIGINT NOT NULL,
                last_error TEXT,
                created_at BIGINT NOT NULL,
                updated_at BIGINT NOT NULL,
                sent_at BIGINT
            )
            """,
            "CREATE INDEX webhook_outbox_due ON webhook_outbox (status, next_attempt_at)",
        ]),
        SchemaChange(.webhooks, [
            // The deliveries view lists a tenant's events newest first.
            "CREATE INDEX webhook_outbox_tenant ON webhook_outbox (tenant_id, id)",
        ]),
    ])
}
