/// The tables this feature owns: `radius_clients`, the gateways and network devices of a tenant
/// that send Access-Requests, and `radius_logins`, the logins they are waiting on, which every
/// node reads so that a retransmission or a failover joins the login instead of starting another.
/// Each change runs in the schema version it names, in the order `Migrations.features` gives the
/// features.
extension FeatureMigrations {
    static let radius = FeatureMigrations(feature: "RADIUS", changes: [
        SchemaChange(.radius, [
            // `networks` is the client's CIDR networks, space-separated; `secret_sealed` its shared
            // secret under the master key (needed in clear for the HMAC, so not a hash);
            // `reply_attributes` JSON, what an Access-Accept carries besides Countersign's own.
            """
            CREATE TABLE radius_clients (
                id TEXT PRIMARY KEY,
                tenant_id TEXT NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
                name TEXT NOT NULL,
                networks TEXT NOT NULL,
                secret_sealed \(.bytes) NOT NULL,
                mode TEXT NOT NULL,
                wait_seconds BIGINT NOT NULL,
                strip_realm BIGINT NOT NULL,
                strip_domain BIGINT NOT NULL,
                unenrolled_users TEXT NOT NULL,
                reply_attributes TEXT NOT NULL,
                created_at BIGINT NOT NULL,
                updated_at BIGINT NOT NULL
            )
            """,
            "CREATE INDEX radius_clients_tenant ON radius_clients (tenant_id, id)",
            // The login a RADIUS client waits on, one row per client, user and calling station
            // (what a retry with a new Identifier, or a failover to another node, has in common
            // with the first request). `login` names the login that holds the row: a new login
            // replaces a finished one only if the row still names the login it saw finished, so
            // two nodes never start two approvals for one login. `transaction_id` is its approval
            // (NULL while it is being started), `state` the State of its Access-Challenge in
            // push-number mode, `accepted_request` the Request Authenticator answered
            // Access-Accept, the one request that answer may be repeated for.
            """
            CREATE TABLE radius_logins (
                radius_client_id TEXT NOT NULL REFERENCES radius_clients(id) ON DELETE CASCADE,
                user_id TEXT NOT NULL,
                calling_station TEXT NOT NULL,
                login TEXT NOT NULL,
                transaction_id TEXT,
                state \(.bytes),
                accepted_request \(.bytes),
                created_at BIGINT NOT NULL,
                expires_at BIGINT NOT NULL,
                PRIMARY KEY (radius_client_id, user_id, calling_station)
            )
            """,
            "CREATE UNIQUE INDEX radius_logins_state ON radius_logins (state)",
            "CREATE INDEX radius_logins_expiry ON radius_logins (expires_at)",
        ]),
        SchemaChange(.directory, [
            // User-Password is the directory password, checked before the push; the groups
            // whose members may log in (space-separated ids, empty for everyone); what an
            // Access-Accept carries for the members of a group (JSON `[{group, attributes}]`).
            "ALTER TABLE radius_clients ADD COLUMN directory_password BIGINT NOT NULL DEFAULT 0",
            "ALTER TABLE radius_clients ADD COLUMN allowed_groups TEXT NOT NULL DEFAULT ''",
            "ALTER TABLE radius_clients ADD COLUMN group_reply_attributes TEXT NOT NULL DEFAULT '[]'",
        ]),
    ])
}
