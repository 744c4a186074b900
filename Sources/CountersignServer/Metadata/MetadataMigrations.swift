/// The tables this feature owns: `authenticator_metadata`, the entries of the FIDO metadata
/// BLOB loaded last, and `authenticator_metadata_source`, one row saying which BLOB that was,
/// when the next load is due, why the last attempt failed, and which node holds the load lease.
extension FeatureMigrations {
    static let metadata = FeatureMigrations(feature: "Metadata", changes: [
        SchemaChange(.authenticatorMetadata, [
            // An entry is kept by its AAGUID, or for a U2F model by its first key identifier.
            """
            CREATE TABLE authenticator_metadata (
                entry_key TEXT PRIMARY KEY,
                aaguid TEXT UNIQUE,
                key_identifiers TEXT NOT NULL,
                description TEXT,
                status_reports TEXT NOT NULL,
                time_of_last_status_change TEXT,
                attestation_roots TEXT NOT NULL,
                statement TEXT
            )
            """,
            """
            CREATE TABLE authenticator_metadata_source (
                id TEXT PRIMARY KEY,
                serial BIGINT,
                next_update TEXT,
                legal_header TEXT,
                entries BIGINT NOT NULL DEFAULT 0,
                loaded_at BIGINT,
                checked_at BIGINT,
                last_error TEXT,
                lease_until BIGINT
            )
            """,
        ]),
    ])
}
