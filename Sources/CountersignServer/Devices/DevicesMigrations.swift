/// The tables this feature owns: `devices`, with their push registration and factor keys, and the
/// `device_request_nonces` that stop a signed device request from being replayed. Each change runs
/// in the schema version it names, in the order `Migrations.features` gives the features.
extension FeatureMigrations {
    static let devices = FeatureMigrations(feature: "Devices", changes: [
        SchemaChange(.foundation, [
            """
            CREATE TABLE devices (
                id TEXT PRIMARY KEY,
                tenant_id TEXT NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
                user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
                name TEXT NOT NULL,
                platform TEXT NOT NULL,
                signing_key_jwk TEXT NOT NULL,
                signing_key_thumbprint TEXT NOT NULL UNIQUE,
                encryption_key_jwk TEXT NOT NULL,
                push_provider TEXT,
                push_token TEXT,
                push_token_valid BIGINT NOT NULL DEFAULT 1,
                status TEXT NOT NULL,
                created_at BIGINT NOT NULL,
                updated_at BIGINT NOT NULL,
                last_seen_at BIGINT,
                deleted_at BIGINT
            )
            """,
            "CREATE INDEX devices_user ON devices (user_id, id)",
            """
            CREATE TABLE device_request_nonces (
                device_id TEXT NOT NULL,
                nonce TEXT NOT NULL,
                expires_at BIGINT NOT NULL,
                PRIMARY KEY (device_id, nonce)
            )
            """,
            "CREATE INDEX device_request_nonces_expiry ON device_request_nonces (expires_at)",
        ]),
        SchemaChange(.push, [
            // When the push token was registered (a late APNs 410 must not invalidate a newer
            // token) and why the provider refused it.
            "ALTER TABLE devices ADD COLUMN push_token_updated_at BIGINT",
            "ALTER TABLE devices ADD COLUMN push_token_error TEXT",
        ]),
        SchemaChange(.factors, [
            // The keys of the PIN and biometric factors (public halves only), the server's count
            // of wrong PINs in a row, and the TOTP seed (sealed) with the last step accepted.
            "ALTER TABLE devices ADD COLUMN pin_key_jwk TEXT",
            "ALTER TABLE devices ADD COLUMN pin_failures BIGINT NOT NULL DEFAULT 0",
            "ALTER TABLE devices ADD COLUMN biometric_key_jwk TEXT",
            "ALTER TABLE devices ADD COLUMN totp_seed_sealed \(.bytes)",
            "ALTER TABLE devices ADD COLUMN totp_last_step BIGINT",
            "ALTER TABLE devices ADD COLUMN deregistered_reason TEXT",
        ]),
        SchemaChange(.consoleDevices, [
            // The tenant-wide device list (`GET …/devices`), by id.
            "CREATE INDEX devices_tenant ON devices (tenant_id, id)",
        ]),
        SchemaChange(.hybridSealing, [
            // The device's X-Wing public key (raw, 1216 bytes), when it announced one.
            "ALTER TABLE devices ADD COLUMN xwing_key \(.bytes)",
        ]),
        SchemaChange(.deviceCertificates, [
            // The newest device certificate (`DeviceCertificate`); NULL until one is issued, and
            // again once the device's factor keys change.
            "ALTER TABLE devices ADD COLUMN certificate TEXT",
        ]),
    ])
}
