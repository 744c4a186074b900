/// The tables this feature owns: `trusted_issuers`, the identity providers each tenant trusts to
/// enroll phones with their tokens, and `trusted_issuer_jwt_ids`, the tokens that did. Each change runs in the schema version it names, in the
/// order `Migrations.features` gives the features.
extension FeatureMigrations {
    static let trustedIssuers = FeatureMigrations(feature: "TrustedIssuers", changes: [
        SchemaChange(.codeFlow, [
            // An issuer's keys come from its jwks_uri or are registered inline (jwks, canonical
            // JSON), never both; required_scope is '' when no scope is required. The unique
            // pair is also the lookup of a token's iss.
            """
            CREATE TABLE trusted_issuers (
                id TEXT PRIMARY KEY,
                tenant_id TEXT NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
                issuer TEXT NOT NULL,
                jwks_uri TEXT,
                jwks TEXT,
                audience TEXT NOT NULL,
                username_claim TEXT NOT NULL,
                required_scope TEXT NOT NULL,
                created_at BIGINT NOT NULL,
                updated_at BIGINT NOT NULL,
                UNIQUE (tenant_id, issuer),
                CHECK ((jwks_uri IS NULL) <> (jwks IS NULL))
            )
            """,
            // Each used jti per issuer (its iss), until the token expires. No foreign key: a
            // deleted issuer's tokens stay spent until they expire, should it be trusted again.
            """
            CREATE TABLE trusted_issuer_jwt_ids (
                issuer TEXT NOT NULL,
                jti TEXT NOT NULL,
                expires_at BIGINT NOT NULL,
                PRIMARY KEY (issuer, jti)
            )
            """,
        ]),
    ])
}
