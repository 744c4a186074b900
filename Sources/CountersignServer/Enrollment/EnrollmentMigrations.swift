/// The tables this feature owns: `enrollment_tickets`. Each change runs in the schema version it
/// names, in the order `Migrations.features` gives the features.
extension FeatureMigrations {
    static let enrollment = FeatureMigrations(feature: "Enrollment", changes: [
        SchemaChange(.foundation, [
            """
            CREATE TABLE enrollment_tickets (
                id TEXT PRIMARY KEY,
                tenant_id TEXT NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
                user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
                secret_hash \(.bytes) NOT NULL UNIQUE,
                created_by TEXT NOT NULL,
                created_at BIGINT NOT NULL,
                expires_at BIGINT NOT NULL,
                used_at BIGINT,
                revoked_at BIGINT,
                device_id TEXT
            )
            """,
            "CREATE INDEX enrollment_tickets_user ON enrollment_tickets (user_id, id)",
        ]),
    ])
}
