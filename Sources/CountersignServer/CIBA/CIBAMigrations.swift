/// The table this feature owns: `client_request_windows` (each client's request count per
/// minute). Each change runs in the schema version it names, in the order `Migrations.features`
/// gives the features.
extension FeatureMigrations {
    static let ciba = FeatureMigrations(feature: "CIBA", changes: [
        SchemaChange(.clientRateLimit, [
            // The requests each client was let through, per minute (`window_start`, the minute's
            // first millisecond). Counted by one upsert outside any transaction, so several nodes
            // share the count without locking the client. No foreign key: the client row is
            // neither locked nor read by the count, and the housekeeping removes a deleted
            // client's windows with every other window older than two minutes.
            """
            CREATE TABLE client_request_windows (
                client_id TEXT NOT NULL,
                window_start BIGINT NOT NULL,
                requests BIGINT NOT NULL,
                PRIMARY KEY (client_id, window_start)
            )
            """,
            "CREATE INDEX client_request_windows_start ON client_request_windows (window_start)",
        ]),
    ])
}
