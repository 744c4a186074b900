/// The tables of recovery without the phone (docs/recovery.md): `recovery_codes`, each user's
/// one set of one-time codes; `temporary_access_passes`, what an administrator issues; and
/// `recovery_failures`, the wrong tries counted against a username and an address; and
/// `security_notices`, what the user's devices are told about their account.
extension FeatureMigrations {
    static let recovery = FeatureMigrations(feature: "Recovery", changes: [
        SchemaChange(.recovery, [
            // A code is kept as its lookup (its first group, to find the one row to check) and
            // a salted scrypt hash of the whole code (`RecoveryHash`); never the code.
            """
            CREATE TABLE recovery_codes (
                id TEXT PRIMARY KEY,
                tenant_id TEXT NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
                user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
                set_id TEXT NOT NULL,
                lookup TEXT NOT NULL,
                salt \(.bytes) NOT NULL,
                hash \(.bytes) NOT NULL,
                created_at BIGINT NOT NULL,
                used_at BIGINT,
                used_from TEXT
            )
            """,
            "CREATE UNIQUE INDEX recovery_codes_lookup ON recovery_codes (user_id, lookup)",
            // A pass: valid from `starts_at` to `expires_at`, once or until then, from the
            // networks it names (a JSON array of CIDR blocks; empty for any).
            """
            CREATE TABLE temporary_access_passes (
                id TEXT PRIMARY KEY,
                tenant_id TEXT NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
                user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
                lookup TEXT NOT NULL,
                salt \(.bytes) NOT NULL,
                hash \(.bytes) NOT NULL,
                starts_at BIGINT NOT NULL,
                expires_at BIGINT NOT NULL,
                one_time BIGINT NOT NULL,
                allowed_networks TEXT NOT NULL,
                created_by TEXT NOT NULL,
                created_at BIGINT NOT NULL,
                used_at BIGINT,
                uses BIGINT NOT NULL DEFAULT 0,
                revoked_at BIGINT
            )
            """,
            "CREATE INDEX temporary_access_passes_user ON temporary_access_passes (user_id, lookup)",
            "CREATE INDEX temporary_access_passes_expiry ON temporary_access_passes (expires_at)",
            // One row per wrong try, against `user:<lowercased username>` and `address:<ip>`
            // (written before the try is checked, deleted when it was right).
            """
            CREATE TABLE recovery_failures (
                id TEXT PRIMARY KEY,
                tenant_id TEXT NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
                subject TEXT NOT NULL,
                failed_at BIGINT NOT NULL
            )
            """,
            // What the user's devices are told about their account: a device or passkey added,
            // a recovery code or pass used. A device may answer "not me" until `expires_at`.
            """
            CREATE TABLE security_notices (
                id TEXT PRIMARY KEY,
                tenant_id TEXT NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
                user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
                kind TEXT NOT NULL,
                subject_id TEXT NOT NULL,
                subject_name TEXT,
                ip_address TEXT,
                created_at BIGINT NOT NULL,
                expires_at BIGINT NOT NULL,
                reported_at BIGINT,
                reported_by TEXT
            )
            """,
            "CREATE INDEX security_notices_user ON security_notices (user_id, created_at)",
            "CREATE INDEX recovery_failures_subject ON recovery_failures (tenant_id, subject, failed_at)",
            "CREATE INDEX recovery_failures_age ON recovery_failures (failed_at)",
        ]),
    ])
}
