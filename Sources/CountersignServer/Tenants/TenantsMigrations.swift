/// The tables this feature owns: `tenants`: each issuer, with its device-protocol key, its
/// authentication policy and its registry of authorization detail types. Each change runs in the
/// schema version it names, in the order `Migrations.features` gives the features.
extension FeatureMigrations {
    static let tenants = FeatureMigrations(feature: "Tenants", changes: [
        SchemaChange(.foundation, [
            """
            CREATE TABLE tenants (
                id TEXT PRIMARY KEY,
                slug TEXT NOT NULL UNIQUE,
                display_name TEXT NOT NULL,
                is_default BIGINT NOT NULL DEFAULT 0,
                signing_key_sealed \(.bytes) NOT NULL,
                signing_key_jwk TEXT NOT NULL,
                created_at BIGINT NOT NULL,
                updated_at BIGINT NOT NULL
            )
            """,
        ]),
        SchemaChange(.factors, [
            // The tenant's authentication policy (JSON, `AuthenticationPolicy`); NULL: defaults.
            "ALTER TABLE tenants ADD COLUMN authentication_policy TEXT",
        ]),
        SchemaChange(.authorizationDetails, [
            // RFC 9396: the tenant's registry of authorization detail types (JSON, NULL: none),
            // the types each client may request (space-separated), and the details a request
            // carried, kept with the request and with the refresh tokens its approval earned, so
            // that every token of the grant states them.
            "ALTER TABLE tenants ADD COLUMN authorization_detail_types TEXT",
        ]),
    ])
}
