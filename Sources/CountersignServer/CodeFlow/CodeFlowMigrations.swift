/// The tables this feature owns: `authorization_requests`, the requests clients pushed
/// (RFC 9126) until the browser brings their `request_uri`, and `authorization_codes`, each
/// code until it is redeemed and then as the record of what it issued. Each change runs in the
/// schema version it names, in the order `Migrations.features` gives the features.
extension FeatureMigrations {
    static let codeFlow = FeatureMigrations(feature: "CodeFlow", changes: [
        SchemaChange(.codeFlow, [
            // Only the hash of a request_uri is kept, as for every bearer value.
            """
            CREATE TABLE authorization_requests (
                handle_hash \(.bytes) PRIMARY KEY,
                tenant_id TEXT NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
                client_id TEXT NOT NULL,
                parameters TEXT NOT NULL,
                created_at BIGINT NOT NULL,
                expires_at BIGINT NOT NULL,
                used_at BIGINT
            )
            """,
            "CREATE INDEX authorization_requests_expiry ON authorization_requests (expires_at)",
            // A code's hash; once redeemed, what the redemption issued, so that a second use
            // can revoke it (RFC 6749 §4.1.2).
            """
            CREATE TABLE authorization_codes (
                code_hash \(.bytes) PRIMARY KEY,
                tenant_id TEXT NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
                client_id TEXT NOT NULL,
                user_id TEXT NOT NULL,
                redirect_uri TEXT NOT NULL,
                scope TEXT NOT NULL,
                nonce TEXT,
                code_challenge TEXT NOT NULL,
                auth_time BIGINT NOT NULL,
                acr TEXT NOT NULL,
                amr TEXT NOT NULL,
                session_id TEXT,
                created_at BIGINT NOT NULL,
                expires_at BIGINT NOT NULL,
                redeemed_at BIGINT,
                access_token_id TEXT,
                access_token_expires_at BIGINT,
                refresh_family_id TEXT
            )
            """,
            "CREATE INDEX authorization_codes_expiry ON authorization_codes (expires_at)",
        ]),
    ])
}
