/// The tables this feature owns: `passkey_user_handles`, the opaque WebAuthn user handle of
/// each user who has registered a passkey; `passkeys`, the credential records of WebAuthn
/// Level 3 §7.1 step 29; and `passkey_ceremonies`, each issued challenge until it is used or
/// expires.
extension FeatureMigrations {
    static let passkeys = FeatureMigrations(feature: "Passkeys", changes: [
        SchemaChange(.passkeys, [
            // A random handle, never the user ID: it is sent to authenticators and returned
            // in usernameless sign-ins, and must carry nothing personal (§14.6.1).
            """
            CREATE TABLE passkey_user_handles (
                user_id TEXT PRIMARY KEY REFERENCES users(id) ON DELETE CASCADE,
                tenant_id TEXT NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
                handle \(.bytes) NOT NULL UNIQUE
            )
            """,
            // credential_id is unique across tenants: a credential registered anywhere is
            // refused everywhere else (§7.1 step 28).
            """
            CREATE TABLE passkeys (
                id TEXT PRIMARY KEY,
                tenant_id TEXT NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
                user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
                credential_id \(.bytes) NOT NULL UNIQUE,
                public_key \(.bytes) NOT NULL,
                algorithm BIGINT NOT NULL,
                sign_count BIGINT NOT NULL,
                uv_initialized BIGINT NOT NULL,
                backup_eligible BIGINT NOT NULL,
                backup_state BIGINT NOT NULL,
                transports TEXT NOT NULL,
                aaguid \(.bytes) NOT NULL,
                attestation_format TEXT NOT NULL,
                attestation_kind TEXT NOT NULL,
                attestation_trusted BIGINT NOT NULL,
                attestation_object \(.bytes) NOT NULL,
                client_data_json \(.bytes) NOT NULL,
                name TEXT NOT NULL,
                created_at BIGINT NOT NULL,
                last_used_at BIGINT,
                clone_warning_at BIGINT
            )
            """,
            "CREATE INDEX passkeys_user ON passkeys (tenant_id, user_id)",
            // Only the hash of a ceremony's handle is kept; the browser that started it is
            // named by `binding` (a hash of its browser cookie, or its session).
            """
            CREATE TABLE passkey_ceremonies (
                handle_hash \(.bytes) PRIMARY KEY,
                tenant_id TEXT NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
                purpose TEXT NOT NULL,
                binding TEXT NOT NULL,
                user_id TEXT,
                challenge \(.bytes) NOT NULL,
                expectation TEXT NOT NULL,
                created_at BIGINT NOT NULL,
                expires_at BIGINT NOT NULL,
                used_at BIGINT
            )
            """,
            "CREATE INDEX passkey_ceremonies_expiry ON passkey_ceremonies (expires_at)",
        ]),
    ])
}
