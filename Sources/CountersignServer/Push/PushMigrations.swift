/// The tables this feature owns: `push_credentials`, the `push_outbox` and `apns_provider_tokens`.
/// Each change runs in the schema version it names, in the order `Migrations.features` gives the
/// features.
extension FeatureMigrations {
    static let push = FeatureMigrations(feature: "Push", changes: [
        SchemaChange(.push, [
            // A tenant's APNs and FCM credentials. The secret parts (PKCS#12 and its password, the
            // .p8 key, the service account) are sealed; `summary` holds only what may be shown.
            // `client_app_key` tells APNs certificates apart ('' for the other kinds).
            """
            CREATE TABLE push_credentials (
                id TEXT PRIMARY KEY,
                tenant_id TEXT NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
                provider TEXT NOT NULL,
                kind TEXT NOT NULL,
                client_app_key TEXT NOT NULL,
                environment TEXT,
                topic TEXT,
                summary TEXT NOT NULL,
                sealed_secret \(.bytes) NOT NULL,
                created_at BIGINT NOT NULL,
                updated_at BIGINT NOT NULL,
                UNIQUE (tenant_id, kind, client_app_key)
            )
            """,
            "CREATE INDEX push_credentials_tenant ON push_credentials (tenant_id, provider, updated_at)",
            // One row per notification to send: written in the transaction that creates (or
            // decides) the request it announces, claimed by a dispatcher. While a row is being
            // sent `next_attempt_at` is its lease: a node that dies mid-send leaves it to be
            // claimed again once the lease passes.
            """
            CREATE TABLE push_outbox (
                id TEXT PRIMARY KEY,
                tenant_id TEXT NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
                transaction_id TEXT NOT NULL REFERENCES approval_transactions(id) ON DELETE CASCADE,
                device_id TEXT NOT NULL,
                kind TEXT NOT NULL,
                provider TEXT NOT NULL,
                status TEXT NOT NULL,
                attempts BIGINT NOT NULL DEFAULT 0,
                next_attempt_at BIGINT NOT NULL,
                expires_at BIGINT NOT NULL,
                last_error TEXT,
                provider_message_id TEXT,
                created_at BIGINT NOT NULL,
                updated_at BIGINT NOT NULL,
                sent_at BIGINT
            )
            """,
            "CREATE INDEX push_outbox_due ON push_outbox (status, next_attempt_at)",
            "CREATE INDEX push_outbox_transaction ON push_outbox (transaction_id, device_id)",
        ]),
        SchemaChange(.apnsProviderTokens, [
            // The provider token of each APNs signing key, shared by every node and kept across
            // restarts: APNs refuses a key whose token changes more often than every 20 minutes.
            // By key (`APNsSigningKey.fingerprint`), not by credential, and so without a foreign
            // key: the same key set again keeps its token.
            """
            CREATE TABLE apns_provider_tokens (
                key_fingerprint TEXT PRIMARY KEY,
                token_sealed \(.bytes) NOT NULL,
                issued_at BIGINT NOT NULL
            )
            """,
        ]),
        // The dashboard's failed pushes by the hour (`StatisticsAdminRoutes`).
        SchemaChange(.console, [
            "CREATE INDEX push_outbox_tenant_created ON push_outbox (tenant_id, created_at)",
        ]),
    ])
}
