/// The tables this feature owns: `refresh_token_families`, `refresh_tokens` and
/// `revoked_access_tokens`. Each change runs in the schema version it names, in the order
/// `Migrations.features` gives the features.
extension FeatureMigrations {
    static let tokens = FeatureMigrations(feature: "Tokens", changes: [
        SchemaChange(.tokens, [
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
                token_hash \(.bytes) NOT NULL UNIQUE,
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
        SchemaChange(.authorizationDetails, [
            "ALTER TABLE refresh_token_families ADD COLUMN authorization_details TEXT",
        ]),
    ])
}
