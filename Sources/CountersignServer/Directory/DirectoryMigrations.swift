/// The table this feature owns: `directories`, each tenant's LDAP directory (one at most), with
/// its service account's password sealed under the master key, when its next scheduled sync is
/// due, the lease of the node running a sync, and what the last sync did. The users and groups a
/// sync writes are the Admin feature's. Each change runs in the schema version it names, in the
/// order `Migrations.features` gives the features.
extension FeatureMigrations {
    static let directory = FeatureMigrations(feature: "Directory", changes: [
        SchemaChange(.directory, [
            // `settings`: the `Directory` as JSON (without its tenant and times); `last_sync`: the
            // last `DirectorySyncRecord` as JSON.
            """
            CREATE TABLE directories (
                tenant_id TEXT PRIMARY KEY REFERENCES tenants(id) ON DELETE CASCADE,
                settings TEXT NOT NULL,
                bind_password_sealed \(.bytes) NOT NULL,
                next_sync_at BIGINT,
                sync_lease_until BIGINT,
                last_sync TEXT,
                created_at BIGINT NOT NULL,
                updated_at BIGINT NOT NULL
            )
            """,
            "CREATE INDEX directories_next_sync ON directories (next_sync_at) WHERE next_sync_at IS NOT NULL",
        ]),
    ])
}
