/// The table this feature owns: `client_jwt_ids`, the ledger of the identifiers (`jti`) of the
/// JWTs clients present (client assertions, signed requests, access tokens that enrolled a
/// device), each kept until the JWT expires (`JWTIDLedger`). Each change runs in the schema
/// version it names, in the order `Migrations.features` gives the features.
extension FeatureMigrations {
    static let oauth = FeatureMigrations(feature: "OAuth", changes: [
        SchemaChange(.clientKeys, [
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
    ])
}
