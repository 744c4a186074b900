import Foundation

/// The schema, as an ordered list of migrations. Each runs once, in its own transaction, and is
/// recorded in `schema_migrations`; the server applies the missing ones at start-up. Statements
/// are written once for both engines (`?` placeholders and `BLOB` are translated for
/// PostgreSQL). Times are integer milliseconds since 1970.
public enum Migrations {
    public struct Migration: Sendable {
        public let version: Int64
        public let name: String
        public let statements: [String]
    }

    public static let all: [Migration] = [
        Migration(version: 1, name: "foundation", statements: [
            """
            CREATE TABLE server_meta (
                key TEXT PRIMARY KEY,
                value TEXT NOT NULL
            )
            """,
            """
            CREATE TABLE tenants (
                id TEXT PRIMARY KEY,
                slug TEXT NOT NULL UNIQUE,
                display_name TEXT NOT NULL,
                is_default BIGINT NOT NULL DEFAULT 0,
                signing_key_sealed BLOB NOT NULL,
                signing_key_jwk TEXT NOT NULL,
                created_at BIGINT NOT NULL,
                updated_at BIGINT NOT NULL
            )
            """,
            """
            CREATE TABLE admin_keys (
                id TEXT PRIMARY KEY,
                tenant_id TEXT REFERENCES tenants(id) ON DELETE CASCADE,
                name TEXT NOT NULL,
                secret_hash BLOB NOT NULL,
                rights TEXT NOT NULL,
                created_by TEXT,
                created_at BIGINT NOT NULL,
                last_used_at BIGINT,
                revoked_at BIGINT
            )
            """,
            """
            CREATE TABLE clients (
                id TEXT PRIMARY KEY,
                tenant_id TEXT NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
                name TEXT NOT NULL,
                secret_hash BLOB NOT NULL,
                scopes TEXT NOT NULL,
                delivery_mode TEXT NOT NULL,
                notification_endpoint TEXT,
                created_at BIGINT NOT NULL,
                updated_at BIGINT NOT NULL
            )
            """,
            "CREATE INDEX clients_tenant ON clients (tenant_id, id)",
            """
            CREATE TABLE users (
                id TEXT PRIMARY KEY,
                tenant_id TEXT NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
                username TEXT NOT NULL,
                display_name TEXT,
                status TEXT NOT NULL,
                created_at BIGINT NOT NULL,
                updated_at BIGINT NOT NULL,
                UNIQUE (tenant_id, username)
            )
            """,
            """
            CREATE TABLE enrollment_tickets (
                id TEXT PRIMARY KEY,
                tenant_id TEXT NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
                user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
                secret_hash BLOB NOT NULL UNIQUE,
                created_by TEXT NOT NULL,
                created_at BIGINT NOT NULL,
                expires_at BIGINT NOT NULL,
                used_at BIGINT,
                revoked_at BIGINT,
                device_id TEXT
            )
            """,
            "CREATE INDEX enrollment_tickets_user ON enrollment_tickets (user_id, id)",
            """
            CREATE TABLE devices (
                id TEXT PRIMARY KEY,
                tenant_id TEXT NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
                user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
                name TEXT NOT NULL,
                platform TEXT NOT NULL,
                signing_key_jwk TEXT NOT NULL,
                signing_key_thumbprint TEXT NOT NULL UNIQUE,
                encryption_key_jwk TEXT NOT NULL,
                push_provider TEXT,
                push_token TEXT,
                push_token_valid BIGINT NOT NULL DEFAULT 1,
                status TEXT NOT NULL,
                created_at BIGINT NOT NULL,
                updated_at BIGINT NOT NULL,
                last_seen_at BIGINT,
                deleted_at BIGINT
            )
            """,
            "CREATE INDEX devices_user ON devices (user_id, id)",
            """
            CREATE TABLE device_request_nonces (
                device_id TEXT NOT NULL,
                nonce TEXT NOT NULL,
                expires_at BIGINT NOT NULL,
                PRIMARY KEY (device_id, nonce)
            )
            """,
            "CREATE INDEX device_request_nonces_expiry ON device_request_nonces (expires_at)",
            """
            CREATE TABLE audit_events (
                id TEXT PRIMARY KEY,
                tenant_id TEXT,
                actor TEXT NOT NULL,
                action TEXT NOT NULL,
                target_type TEXT NOT NULL,
                target_id TEXT NOT NULL,
                details TEXT NOT NULL,
                occurred_at BIGINT NOT NULL
            )
            """,
            "CREATE INDEX audit_events_tenant ON audit_events (tenant_id, id)",
        ]),
        Migration(version: 2, name: "approvals", statements: [
            // Token-signing keys, apart from the device-protocol key of `tenants`: a token and a
            // device-protocol message can never be confused, and each can rotate on its own.
            """
            CREATE TABLE token_signing_keys (
                id TEXT PRIMARY KEY,
                tenant_id TEXT NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
                sealed_key BLOB NOT NULL,
                public_jwk TEXT NOT NULL,
                created_at BIGINT NOT NULL,
                retired_at BIGINT
            )
            """,
            "CREATE INDEX token_signing_keys_tenant ON token_signing_keys (tenant_id, created_at)",
            // One row per CIBA request. `auth_req_id` is a bearer value for the client, so only
            // its SHA-256 is stored. `details` is the canonical JSON sealed to every device.
            """
            CREATE TABLE approval_transactions (
                id TEXT PRIMARY KEY,
                auth_req_id_hash BLOB NOT NULL UNIQUE,
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
        Migration(version: 3, name: "push", statements: [
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
                sealed_secret BLOB NOT NULL,
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
            // When the push token was registered (a late APNs 410 must not invalidate a newer
            // token) and why the provider refused it.
            "ALTER TABLE devices ADD COLUMN push_token_updated_at BIGINT",
            "ALTER TABLE devices ADD COLUMN push_token_error TEXT",
            // System keys that manage tenants (the bootstrap key among them) could set a
            // tenant's push credentials through tenants:manage before the right existed.
            """
            UPDATE admin_keys SET rights = rights || ' push-credentials:manage'
            WHERE tenant_id IS NULL AND revoked_at IS NULL AND (' ' || rights || ' ') LIKE '% tenants:manage %'
            """,
        ]),
        Migration(version: 4, name: "factors", statements: [
            // The keys of the PIN and biometric factors (public halves only), the server's count
            // of wrong PINs in a row, and the TOTP seed (sealed) with the last step accepted.
            "ALTER TABLE devices ADD COLUMN pin_key_jwk TEXT",
            "ALTER TABLE devices ADD COLUMN pin_failures BIGINT NOT NULL DEFAULT 0",
            "ALTER TABLE devices ADD COLUMN biometric_key_jwk TEXT",
            "ALTER TABLE devices ADD COLUMN totp_seed_sealed BLOB",
            "ALTER TABLE devices ADD COLUMN totp_last_step BIGINT",
            "ALTER TABLE devices ADD COLUMN deregistered_reason TEXT",
            // The tenant's authentication policy (JSON, `AuthenticationPolicy`); NULL: defaults.
            "ALTER TABLE tenants ADD COLUMN authentication_policy TEXT",
            // A client's default and minimum authentication context class.
            "ALTER TABLE clients ADD COLUMN default_acr TEXT",
            "ALTER TABLE clients ADD COLUMN minimum_acr TEXT",
            // What a request requires (`TransactionDetails.Verification`, JSON), the number the
            // relying party shows, and why a denial was a denial.
            "ALTER TABLE approval_transactions ADD COLUMN verification TEXT",
            "ALTER TABLE approval_transactions ADD COLUMN match_number BIGINT",
            "ALTER TABLE approval_transactions ADD COLUMN deny_reason TEXT",
            "CREATE INDEX approval_transactions_user_created ON approval_transactions (user_id, created_at)",
            // A user who said "I did not request this" gets no new requests until then; wrong
            // TOTP codes in a row, and until when TOTP is locked for the user.
            "ALTER TABLE users ADD COLUMN requests_suppressed_until BIGINT",
            "ALTER TABLE users ADD COLUMN totp_failures BIGINT NOT NULL DEFAULT 0",
            "ALTER TABLE users ADD COLUMN totp_locked_until BIGINT",
            // Each tenant's webhooks: the custom-factor verifier and the event receiver.
            """
            CREATE TABLE tenant_webhooks (
                tenant_id TEXT NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
                purpose TEXT NOT NULL,
                url TEXT NOT NULL,
                secret_sealed BLOB NOT NULL,
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
            // System keys that manage tenants could change everything about a tenant before
            // its authentication policy had a right of its own.
            """
            UPDATE admin_keys SET rights = rights || ' authentication-policy:manage'
            WHERE tenant_id IS NULL AND revoked_at IS NULL AND (' ' || rights || ' ') LIKE '% tenants:manage %'
            """,
        ]),
        Migration(version: 5, name: "webhooks", statements: [
            // The deliveries view lists a tenant's events newest first.
            "CREATE INDEX webhook_outbox_tenant ON webhook_outbox (tenant_id, id)",
            // System keys that manage tenants (the bootstrap key among them) hold every right
            // that existed when they were made; without this no key could set a webhook.
            """
            UPDATE admin_keys SET rights = rights || ' webhooks:manage'
            WHERE tenant_id IS NULL AND revoked_at IS NULL AND (' ' || rights || ' ') LIKE '% tenants:manage %'
            """,
        ]),
        Migration(version: 6, name: "tokens", statements: [
            // One row per grant that holds refresh tokens: what every token of it restates (the
            // user, the scope granted, how the user authenticated) and its absolute expiry. The
            // grant goes with its user or client.
            """
            CREATE TABLE refresh_token_families (
                id TEXT PRIMARY KEY,
                tenant_id TEXT NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
                client_id TEXT NOT NULL REFERENCES clients(id) ON DELETE CASCADE,
                user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
                scope TEXT NOT NULL,
                auth_time BIGINT NOT NULL,
                acr TEXT NOT NULL,
                amr TEXT NOT NULL,
                created_at BIGINT NOT NULL,
                expires_at BIGINT NOT NULL,
                revoked_at BIGINT
            )
            """,
            "CREATE INDEX refresh_token_families_expiry ON refresh_token_families (expires_at)",
            // Every refresh token of a family, used or not, so that a used one presented again is
            // recognised. The token is a bearer secret: only its SHA-256 is stored. The access
            // token issued with it is named by its `jti`, to revoke it with the family.
            """
            CREATE TABLE refresh_tokens (
                id TEXT PRIMARY KEY,
                family_id TEXT NOT NULL REFERENCES refresh_token_families(id) ON DELETE CASCADE,
                token_hash BLOB NOT NULL UNIQUE,
                issued_at BIGINT NOT NULL,
                expires_at BIGINT NOT NULL,
                access_token_id TEXT NOT NULL,
                access_token_expires_at BIGINT NOT NULL,
                used_at BIGINT,
                revoked_at BIGINT
            )
            """,
            "CREATE INDEX refresh_tokens_family ON refresh_tokens (family_id)",
            // Access tokens revoked before their expiry, by `jti`, kept until they expire.
            """
            CREATE TABLE revoked_access_tokens (
                jti TEXT PRIMARY KEY,
                tenant_id TEXT NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
                expires_at BIGINT NOT NULL,
                revoked_at BIGINT NOT NULL
            )
            """,
            "CREATE INDEX revoked_access_tokens_expiry ON revoked_access_tokens (expires_at)",
        ]),
        Migration(version: 7, name: "client-keys", statements: [
            // How each client authenticates (RFC 7591's default for the clients there are), its
            // public keys (JSON Web Key Set) and whether it must sign its requests or name
            // users with a user code.
            "ALTER TABLE clients ADD COLUMN token_endpoint_auth_method TEXT NOT NULL DEFAULT 'client_secret_basic'",
            "ALTER TABLE clients ADD COLUMN jwks TEXT",
            "ALTER TABLE clients ADD COLUMN require_signed_request_object BIGINT NOT NULL DEFAULT 0",
            "ALTER TABLE clients ADD COLUMN backchannel_user_code_parameter BIGINT NOT NULL DEFAULT 0",
            // A user's code (HMAC under a key derived from the master key), wrong codes in a
            // row, and until when the code is locked.
            "ALTER TABLE users ADD COLUMN user_code_hash BLOB",
            "ALTER TABLE users ADD COLUMN user_code_failures BIGINT NOT NULL DEFAULT 0",
            "ALTER TABLE users ADD COLUMN user_code_locked_until BIGINT",
            // The `jti` of each client assertion and signed request, kept until the JWT expires.
            """
            CREATE TABLE client_jwt_ids (
                client_id TEXT NOT NULL REFERENCES clients(id) ON DELETE CASCADE,
                purpose TEXT NOT NULL,
                jti TEXT NOT NULL,
                expires_at BIGINT NOT NULL,
                PRIMARY KEY (client_id, purpose, jti)
            )
            """,
            "CREATE INDEX client_jwt_ids_expiry ON client_jwt_ids (expires_at)",
        ]),
        Migration(version: 8, name: "client-notifications", statements: [
            // How a request's client receives the result (NULL: poll), and for ping and push
            // clients the auth_req_id and the client's bearer token, sealed: both are sent back
            // to the client's endpoint, so neither can be kept as a hash.
            "ALTER TABLE approval_transactions ADD COLUMN delivery_mode TEXT",
            "ALTER TABLE approval_transactions ADD COLUMN auth_req_id_sealed BLOB",
            "ALTER TABLE approval_transactions ADD COLUMN notification_token_sealed BLOB",
            // Push mode: whether the client was told the request expired undecided.
            "ALTER TABLE approval_transactions ADD COLUMN expiry_notified BIGINT NOT NULL DEFAULT 0",
            "CREATE INDEX approval_transactions_push_expiry ON approval_transactions (delivery_mode, status, expires_at)",
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
        Migration(version: 9, name: "authorization-details", statements: [
            // RFC 9396: the tenant's registry of authorization detail types (JSON, NULL: none),
            // the types each client may request (space-separated), and the details a request
            // carried, kept with the request and with the refresh tokens its approval earned, so
            // that every token of the grant states them.
            "ALTER TABLE tenants ADD COLUMN authorization_detail_types TEXT",
            "ALTER TABLE clients ADD COLUMN authorization_details_types TEXT",
            "ALTER TABLE approval_transactions ADD COLUMN authorization_details TEXT",
            "ALTER TABLE refresh_token_families ADD COLUMN authorization_details TEXT",
        ]),
        Migration(version: 10, name: "client-rate-limit", statements: [
            // A client's own limit of bc-authorize requests a minute (NULL: the tenant's, 0: none).
            "ALTER TABLE clients ADD COLUMN backchannel_requests_per_minute BIGINT",
            // The requests each client was let through, per minute (`window_start`, the minute's
            // first millisecond). Counted by one upsert outside any transaction, so several nodes
            // share the count without locking the client. No foreign key: the client row is
            // neither locked nor read by the count, and the housekeeping removes a deleted
            // client's windows with every other window older than two minutes.
            """
            CREATE TABLE client_request_windows (
                client_id TEXT NOT NULL,
                window_start BIGINT NOT NULL,
                requests BIGINT NOT NULL,
                PRIMARY KEY (client_id, window_start)
            )
            """,
            "CREATE INDEX client_request_windows_start ON client_request_windows (window_start)",
        ]),
        Migration(version: 11, name: "apns-provider-tokens", statements: [
            // The provider token of each APNs signing key, shared by every node and kept across
            // restarts: APNs refuses a key whose token changes more often than every 20 minutes.
            // By key (`APNsSigningKey.fingerprint`), not by credential, and so without a foreign
            // key: the same key set again keeps its token.
            """
            CREATE TABLE apns_provider_tokens (
                key_fingerprint TEXT PRIMARY KEY,
                token_sealed BLOB NOT NULL,
                issued_at BIGINT NOT NULL
            )
            """,
        ]),
        Migration(version: 12, name: "rs256-tokens", statements: [
            // Each tenant signs with an RS256 key beside its ES256 one; the keys there are were
            // all ES256. Each client chooses the algorithm of its tokens, ES256 unless it says.
            "ALTER TABLE token_signing_keys ADD COLUMN algorithm TEXT NOT NULL DEFAULT 'ES256'",
            "ALTER TABLE clients ADD COLUMN id_token_signed_response_alg TEXT NOT NULL DEFAULT 'ES256'",
        ]),
    ]

    /// Applies every migration the database lacks, in order, up to `version` (nil: all of
    /// them). On PostgreSQL an advisory lock keeps several nodes starting at once from racing.
    public static func migrate(_ database: any Database, through version: Int64? = nil) async throws {
        try await database.transaction { executor in
            try await executor.lockForStartup()
            try await executor.query(
                "CREATE TABLE IF NOT EXISTS schema_migrations (version BIGINT PRIMARY KEY, name TEXT NOT NULL, applied_at BIGINT NOT NULL)",
                [])
        }
        for migration in all where migration.version <= version ?? .max {
            try await database.transaction { executor in
                try await executor.lockForStartup()
                let applied = try await executor.query(
                    "SELECT version FROM schema_migrations WHERE version = ?", [.integer(migration.version)])
                guard applied.isEmpty else { return }
                for statement in migration.statements {
                    try await executor.query(statement, [])
                }
                try await executor.query(
                    "INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)",
                    [.integer(migration.version), .text(migration.name), SQLValue(Date())])
            }
        }
    }

    /// The highest version applied.
    public static func currentVersion(_ database: any Database) async throws -> Int64 {
        try await database.first("SELECT MAX(version) AS version FROM schema_migrations")?.optionalInt("version") ?? 0
    }
}

extension SQLExecutor {
    /// Serialises start-up work (migrations, the master-key check, the first tenant) between
    /// nodes starting at once on one PostgreSQL database, until the transaction ends. SQLite
    /// needs nothing more: its transactions already take the database's write lock.
    func lockForStartup() async throws {
        if dialect == .postgres {
            try await query("SELECT pg_advisory_xact_lock(4242001) IS NULL AS locked", [])
        }
    }
}
