/// The tables this feature owns: the server's own records (`server_meta`), where `SecretSealer`
/// keeps the check of the master key. Each change runs in the schema version it names, in the order
/// `Migrations.features` gives the features.
extension FeatureMigrations {
    static let security = FeatureMigrations(feature: "Security", changes: [
        SchemaChange(.foundation, [
            """
            CREATE TABLE server_meta (
                key TEXT PRIMARY KEY,
                value TEXT NOT NULL
            )
            """,
        ]),
    ])
}
