/// The tables this feature owns: `token_signing_keys`, the keys that sign each tenant's tokens.
/// Each change runs in the schema version it names, in the order `Migrations.features` gives the
/// features.
extension FeatureMigrations {
    static let openID = FeatureMigrations(feature: "OpenID", changes: [
        SchemaChange(.approvals, [
            // Token-signing keys, apart from the device-protocol key of `tenants`: a token and a
            // device-protocol message can never be confused, and each can rotate on its own.
            """
            CREATE TABLE token_signing_keys (
                id TEXT PRIMARY KEY,
                tenant_id TEXT NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
                sealed_key \(.bytes) NOT NULL,
                public_jwk TEXT NOT NULL,
                created_at BIGINT NOT NULL,
                retired_at BIGINT
            )
            """,
            "CREATE INDEX token_signing_keys_tenant ON token_signing_keys (tenant_id, created_at)",
        ]),
        SchemaChange(.rs256Tokens, [
            // Each tenant signs with an RS256 key beside its ES256 one; the keys there are were
            // all ES256. Each client chooses the algorithm of its tokens, ES256 unless it says.
            "ALTER TABLE token_signing_keys ADD COLUMN algorithm TEXT NOT NULL DEFAULT 'ES256'",
        ]),
    ])
}
