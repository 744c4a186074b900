/// The table this feature owns: `console_roles`, the users who may sign in to the console and
/// what they administer there (`ConsoleRole`).
extension FeatureMigrations {
    static let console = FeatureMigrations(feature: "Console", changes: [
        SchemaChange(.console, [
            """
            CREATE TABLE console_roles (
                user_id TEXT PRIMARY KEY REFERENCES users(id) ON DELETE CASCADE,
                tenant_id TEXT NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
                role TEXT NOT NULL,
                granted_by TEXT NOT NULL,
                granted_at BIGINT NOT NULL
            )
            """,
        ]),
    ])
}
