/// The tables this feature owns: `client_notifications`, the calls to ping and push clients. Each
/// change runs in the schema version it names, in the order `Migrations.features` gives the
/// features.
extension FeatureMigrations {
    static let notifications = FeatureMigrations(feature: "Notifications", changes: [
        SchemaChange(.clientNotifications, [
            // Calls to ping and push clients' notification endpoints, written with the decision.
            """
            CREATE TABLE client_notifications (
                id TEXT PRIMARY KEY,
                tenant_id TEXT NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
                transaction_id TEXT NOT NULL REFERENCES approval_transactions(id) ON DELETE CASCADE,
                client_id TEXT NOT NULL,
                kind TEXT NOT NULL,
                error TEXT,
                status TEXT NOT NULL,
                attempts BIGINT NOT NULL DEFAULT 0,
                next_attempt_at BIGINT NOT NULL,
                give_up_at BIGINT NOT NULL,
                last_error TEXT,
                created_at BIGINT NOT NULL,
                updated_at BIGINT NOT NULL,
                sent_at BIGINT
            )
            """,
            "CREATE INDEX client_notifications_due ON client_notifications (status, next_attempt_at)",
            "CREATE INDEX client_notifications_transaction ON client_notifications (transaction_id)",
        ]),
    ])
}
