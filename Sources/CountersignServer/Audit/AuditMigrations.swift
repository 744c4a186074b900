/// The tables this feature owns: `audit_events`. Each change runs in the schema version it names,
/// in the order `Migrations.features` gives the features.
extension FeatureMigrations {
    static let audit = FeatureMigrations(feature: "Audit", changes: [
        SchemaChange(.foundation, [
            """
            CREATE TABLE audit_events (
                id TEXT PRIMARY KEY,
                tenant_id TEXT,
                actor TEXT NOT NULL,
                action TEXT NOT NULL,
                target_type TEXT NOT NULL,
                target_id TEXT NOT NULL,
                details TEXT NOT NULL,
                occurred_at BIGINT NOT NULL
            )
            """,
            "CREATE INDEX audit_events_tenant ON audit_events (tenant_id, id)",
        ]),
    ])
}
