/// The tables this feature owns: `enrollment_tickets` and `device_handovers`. Each change runs in
/// the schema version it names, in the order `Migrations.features` gives the features.
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
        SchemaChange(.handover, [
            // A device handing over to a new one of the same user (`startHandover`): the ticket
            // it asked for, the new device enrolled with it (pending until approved), the number
            // that device shows, and how it ended. Device ids are not foreign keys: devices are
            // never deleted, only marked so.
            """
            CREATE TABLE device_handovers (
                id TEXT PRIMARY KEY,
                tenant_id TEXT NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
                user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
                ticket_id TEXT NOT NULL UNIQUE REFERENCES enrollment_tickets(id) ON DELETE CASCADE,
                from_device_id TEXT NOT NULL,
                retire BIGINT NOT NULL,
                status TEXT NOT NULL,
                new_device_id TEXT,
                match_number TEXT,
                created_at BIGINT NOT NULL,
                expires_at BIGINT NOT NULL,
                decided_at BIGINT
            )
            """,
            "CREATE INDEX device_handovers_from ON device_handovers (from_device_id, created_at)",
            "CREATE INDEX device_handovers_expiry ON device_handovers (status, expires_at)",
        ]),
    ])
}
