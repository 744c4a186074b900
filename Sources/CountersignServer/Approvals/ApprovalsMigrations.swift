/// The tables this feature owns: `approval_transactions`, one row per CIBA request, and
/// `approval_deliveries`, what was sealed for each device. Each change runs in the schema version
/// it names, in the order `Migrations.features` gives the features.
extension FeatureMigrations {
    static let approvals = FeatureMigrations(feature: "Approvals", changes: [
        SchemaChange(.approvals, [
            // One row per CIBA request. `auth_req_id` is a bearer value for the client, so only
            // its SHA-256 is stored. `details` is the canonical JSON sealed to every device.
            """
            CREATE TABLE approval_transactions (
                id TEXT PRIMARY KEY,
                auth_req_id_hash \(.bytes) NOT NULL UNIQUE,
                tenant_id TEXT NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
                client_id TEXT NOT NULL,
                user_id TEXT NOT NULL,
                scope TEXT NOT NULL,
                acr_values TEXT,
                binding_message TEXT,
                details TEXT NOT NULL,
                details_sha256 TEXT NOT NULL,
                challenge TEXT NOT NULL,
                status TEXT NOT NULL,
                poll_interval BIGINT NOT NULL,
                last_polled_at BIGINT,
                created_at BIGINT NOT NULL,
                expires_at BIGINT NOT NULL,
                decided_at BIGINT,
                decided_by_device TEXT,
                response_jws TEXT,
                factors TEXT,
                exchanged_at BIGINT
            )
            """,
            "CREATE INDEX approval_transactions_expiry ON approval_transactions (expires_at)",
            """
            CREATE TABLE approval_deliveries (
                device_id TEXT NOT NULL,
                transaction_id TEXT NOT NULL REFERENCES approval_transactions(id) ON DELETE CASCADE,
                sealed_details TEXT NOT NULL,
                PRIMARY KEY (device_id, transaction_id)
            )
            """,
            "CREATE INDEX approval_deliveries_transaction ON approval_deliveries (transaction_id)",
        ]),
        SchemaChange(.factors, [
            // What a request requires (`TransactionDetails.Verification`, JSON), the number the
            // relying party shows, and why a denial was a denial.
            "ALTER TABLE approval_transactions ADD COLUMN verification TEXT",
            "ALTER TABLE approval_transactions ADD COLUMN match_number BIGINT",
            "ALTER TABLE approval_transactions ADD COLUMN deny_reason TEXT",
            "CREATE INDEX approval_transactions_user_created ON approval_transactions (user_id, created_at)",
        ]),
        SchemaChange(.clientNotifications, [
            // How a request's client receives the result (NULL: poll), and for ping and push
            // clients the auth_req_id and the client's bearer token, sealed: both are sent back
            // to the client's endpoint, so neither can be kept as a hash.
            "ALTER TABLE approval_transactions ADD COLUMN delivery_mode TEXT",
            "ALTER TABLE approval_transactions ADD COLUMN auth_req_id_sealed \(.bytes)",
            "ALTER TABLE approval_transactions ADD COLUMN notification_token_sealed \(.bytes)",
            // Push mode: whether the client was told the request expired undecided.
            "ALTER TABLE approval_transactions ADD COLUMN expiry_notified BIGINT NOT NULL DEFAULT 0",
            "CREATE INDEX approval_transactions_push_expiry ON approval_transactions (delivery_mode, status, expires_at)",
        ]),
        SchemaChange(.authorizationDetails, [
            "ALTER TABLE approval_transactions ADD COLUMN authorization_details TEXT",
        ]),
        // The dashboard's counts by the hour (`StatisticsAdminRoutes`).
        SchemaChange(.console, [
            "CREATE INDEX approval_transactions_tenant_created ON approval_transactions (tenant_id, created_at)",
        ]),
        // 0 for a hosted sign-in from a browser the user never signed in with: counted by the
        // sign-in's own limits, not against the user's requests per minute.
        SchemaChange(.signInSecurity, [
            "ALTER TABLE approval_transactions ADD COLUMN counts_for_user BIGINT NOT NULL DEFAULT 1",
        ]),
        // The network a request came from, for the risk rules' `new_network` (`RiskEvaluation`);
        // their questions about one user's recent requests use `approval_transactions_user_created`.
        SchemaChange(.riskRules, [
            "ALTER TABLE approval_transactions ADD COLUMN request_network TEXT",
        ]),
        // The browser a request came from (`UserAgentFamily`), for `new_user_agent`.
        SchemaChange(.riskSignals, [
            "ALTER TABLE approval_transactions ADD COLUMN request_agent TEXT",
        ]),
    ])
}
