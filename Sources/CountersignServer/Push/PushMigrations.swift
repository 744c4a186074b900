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
        // A push may announce a security notice instead of a request (a device or passkey added,
        // a recovery code used: `SQLSecurityNoticeRepository`), so a row names one or the other,
        // and goes with it. Neither engine changes a column's nullability or foreign key in
        // place the same way, so the table is made again and its rows copied.
        SchemaChange(.notices, [
            """
            CREATE TABLE push_outbox_next (
                id TEXT PRIMARY KEY,
                tenant_id TEXT NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
                transaction_id TEXT REFERENCES approval_transactions(id) ON DELETE CASCADE,
                notice_id TEXT REFERENCES security_notices(id) ON DELETE CASCADE,
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
                sent_at BIGINT,
                CHECK ((transaction_id IS NULL) <> (notice_id IS NULL))
            )
            """,
            """
            INSERT INTO push_outbox_next (id, tenant_id, transaction_id, device_id, kind, provider, status, attempts,
                next_attempt_at, expires_at, last_error, provider_message_id, created_at, updated_at, sent_at)
            SELECT id, tenant_id, transaction_id, device_id, kind, provider, status, attempts, next_attempt_at,
                expires_at, last_error, provider_message_id, created_at, updated_at, sent_at
            FROM push_outbox
            """,
            "DROP TABLE push_outbox",
            "ALTER TABLE push_outbox_next RENAME TO push_outbox",
            // PostgreSQL named the constraints after the table as it was made; they get the
            // names they had (renaming a primary key renames its index too).
            .postgresOnly("ALTER TABLE push_outbox RENAME CONSTRAINT push_outbox_next_pkey TO push_outbox_pkey"),
            .postgresOnly("ALTER TABLE push_outbox RENAME CONSTRAINT push_outbox_next_tenant_id_fkey TO push_outbox_tenant_id_fkey"),
            .postgresOnly(
                "ALTER TABLE push_outbox RENAME CONSTRAINT push_outbox_next_transaction_id_fkey TO push_outbox_transaction_id_fkey"),
            .postgresOnly("ALTER TABLE push_outbox RENAME CONSTRAINT push_outbox_next_notice_id_fkey TO push_outbox_notice_id_fkey"),
            .postgresOnly("ALTER TABLE push_outbox RENAME CONSTRAINT push_outbox_next_check TO push_outbox_check"),
            "CREATE INDEX push_outbox_due ON push_outbox (status, next_attempt_at)",
            "CREATE INDEX push_outbox_transaction ON push_outbox (transaction_id, device_id)",
            "CREATE INDEX push_outbox_notice ON push_outbox (notice_id)",
            "CREATE INDEX push_outbox_tenant_created ON push_outbox (tenant_id, created_at)",
        ]),
    ])
}
