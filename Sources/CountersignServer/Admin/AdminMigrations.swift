/// The tables this feature owns: the administration API's `admin_keys` (with the rights that system
/// keys gained as rights were added), `clients`, `users`, and the users' groups (`user_groups`,
/// `group_members`). Each change runs in the schema version it names, in the order
/// `Migrations.features` gives the features.
extension FeatureMigrations {
    static let admin = FeatureMigrations(feature: "Admin", changes: [
        SchemaChange(.foundation, [
            """
            CREATE TABLE admin_keys (
                id TEXT PRIMARY KEY,
                tenant_id TEXT REFERENCES tenants(id) ON DELETE CASCADE,
                name TEXT NOT NULL,
                secret_hash \(.bytes) NOT NULL,
                rights TEXT NOT NULL,
                created_by TEXT,
                created_at BIGINT NOT NULL,
                last_used_at BIGINT,
                revoked_at BIGINT
            )
            """,
            """
            CREATE TABLE clients (
                id TEXT PRIMARY KEY,
                tenant_id TEXT NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
                name TEXT NOT NULL,
                secret_hash \(.bytes) NOT NULL,
                scopes TEXT NOT NULL,
                delivery_mode TEXT NOT NULL,
                notification_endpoint TEXT,
                created_at BIGINT NOT NULL,
                updated_at BIGINT NOT NULL
            )
            """,
            "CREATE INDEX clients_tenant ON clients (tenant_id, id)",
            """
            CREATE TABLE users (
                id TEXT PRIMARY KEY,
                tenant_id TEXT NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
                username TEXT NOT NULL,
                display_name TEXT,
                status TEXT NOT NULL,
                created_at BIGINT NOT NULL,
                updated_at BIGINT NOT NULL,
                UNIQUE (tenant_id, username)
            )
            """,
        ]),
        SchemaChange(.push, [
            // System keys that manage tenants (the bootstrap key among them) could set a
            // tenant's push credentials through tenants:manage before the right existed.
            """
            UPDATE admin_keys SET rights = rights || ' push-credentials:manage'
            WHERE tenant_id IS NULL AND revoked_at IS NULL AND (' ' || rights || ' ') LIKE '% tenants:manage %'
            """,
        ]),
        SchemaChange(.factors, [
            // A client's default and minimum authentication context class.
            "ALTER TABLE clients ADD COLUMN default_acr TEXT",
            "ALTER TABLE clients ADD COLUMN minimum_acr TEXT",
            // A user who said "I did not request this" gets no new requests until then; wrong
            // TOTP codes in a row, and until when TOTP is locked for the user.
            "ALTER TABLE users ADD COLUMN requests_suppressed_until BIGINT",
            "ALTER TABLE users ADD COLUMN totp_failures BIGINT NOT NULL DEFAULT 0",
            "ALTER TABLE users ADD COLUMN totp_locked_until BIGINT",
            // System keys that manage tenants could change everything about a tenant before
            // its authentication policy had a right of its own.
            """
            UPDATE admin_keys SET rights = rights || ' authentication-policy:manage'
            WHERE tenant_id IS NULL AND revoked_at IS NULL AND (' ' || rights || ' ') LIKE '% tenants:manage %'
            """,
        ]),
        SchemaChange(.webhooks, [
            // System keys that manage tenants (the bootstrap key among them) hold every right
            // that existed when they were made; without this no key could set a webhook.
            """
            UPDATE admin_keys SET rights = rights || ' webhooks:manage'
            WHERE tenant_id IS NULL AND revoked_at IS NULL AND (' ' || rights || ' ') LIKE '% tenants:manage %'
            """,
        ]),
        SchemaChange(.clientKeys, [
            // How each client authenticates (RFC 7591's default for the clients there are), its
            // public keys (JSON Web Key Set) and whether it must sign its requests or name
            // users with a user code.
            "ALTER TABLE clients ADD COLUMN token_endpoint_auth_method TEXT NOT NULL DEFAULT 'client_secret_basic'",
            "ALTER TABLE clients ADD COLUMN jwks TEXT",
            "ALTER TABLE clients ADD COLUMN require_signed_request_object BIGINT NOT NULL DEFAULT 0",
            "ALTER TABLE clients ADD COLUMN backchannel_user_code_parameter BIGINT NOT NULL DEFAULT 0",
            // A user's code (HMAC under a key derived from the master key), wrong codes in a
            // row, and until when the code is locked.
            "ALTER TABLE users ADD COLUMN user_code_hash \(.bytes)",
            "ALTER TABLE users ADD COLUMN user_code_failures BIGINT NOT NULL DEFAULT 0",
            "ALTER TABLE users ADD COLUMN user_code_locked_until BIGINT",
        ]),
        SchemaChange(.authorizationDetails, [
            "ALTER TABLE clients ADD COLUMN authorization_details_types TEXT",
        ]),
        SchemaChange(.clientRateLimit, [
            // A client's own limit of bc-authorize requests a minute (NULL: the tenant's, 0: none).
            "ALTER TABLE clients ADD COLUMN backchannel_requests_per_minute BIGINT",
        ]),
        SchemaChange(.rs256Tokens, [
            "ALTER TABLE clients ADD COLUMN id_token_signed_response_alg TEXT NOT NULL DEFAULT 'ES256'",
        ]),
        SchemaChange(.codeFlow, [
            // The authorization code flow: where a client may send the user back after sign-in
            // and after sign-out (URIs separated by spaces), and whether it must push its
            // authorization requests first (RFC 9126).
            "ALTER TABLE clients ADD COLUMN redirect_uris TEXT",
            "ALTER TABLE clients ADD COLUMN post_logout_redirect_uris TEXT",
            "ALTER TABLE clients ADD COLUMN require_pushed_authorization_requests BIGINT NOT NULL DEFAULT 0",
        ]),
        SchemaChange(.authenticatorPolicies, [
            // A client's own alternatives per class (`AuthenticatorPolicy` as JSON); NULL: the tenant's.
            "ALTER TABLE clients ADD COLUMN authenticators TEXT",
        ]),
        SchemaChange(.directory, [
            // The hosted sign-in of this client asks for the directory password before the push;
            // only members of these groups (ids separated by spaces; NULL: everyone) may use it.
            "ALTER TABLE clients ADD COLUMN directory_password BIGINT NOT NULL DEFAULT 0",
            "ALTER TABLE clients ADD COLUMN allowed_groups TEXT",
            // Users from a directory or a provisioning client: an e-mail address, the client's
            // own id (SCIM `externalId`), who keeps the user (`User.Source`), the directory's
            // stable id for the user (unique per tenant and source), and whether the source
            // disabled the user (and so may enable them again).
            "ALTER TABLE users ADD COLUMN email TEXT",
            "ALTER TABLE users ADD COLUMN external_id TEXT",
            "ALTER TABLE users ADD COLUMN source TEXT NOT NULL DEFAULT 'local'",
            "ALTER TABLE users ADD COLUMN source_id TEXT",
            "ALTER TABLE users ADD COLUMN disabled_by_source BIGINT NOT NULL DEFAULT 0",
            // When a SCIM client deleted the user (who stays, disabled), and the SCIM attributes
            // beyond Countersign's fields that the client sent (JSON: names, every e-mail).
            "ALTER TABLE users ADD COLUMN deprovisioned_at BIGINT",
            "ALTER TABLE users ADD COLUMN scim_profile TEXT",
            "CREATE INDEX users_external_id ON users (tenant_id, external_id) WHERE external_id IS NOT NULL",
            "CREATE INDEX users_email ON users (tenant_id, lower(email)) WHERE email IS NOT NULL",
            "CREATE UNIQUE INDEX users_source_id ON users (tenant_id, source, source_id) WHERE source_id IS NOT NULL",
            // Groups of users, by name within a tenant (policies name them), kept like users
            // by a source; and who is in each.
            """
            CREATE TABLE user_groups (
                id TEXT PRIMARY KEY,
                tenant_id TEXT NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
                name TEXT NOT NULL,
                external_id TEXT,
                source TEXT NOT NULL,
                source_id TEXT,
                created_at BIGINT NOT NULL,
                updated_at BIGINT NOT NULL,
                UNIQUE (tenant_id, name)
            )
            """,
            "CREATE UNIQUE INDEX user_groups_source_id ON user_groups (tenant_id, source, source_id) WHERE source_id IS NOT NULL",
            """
            CREATE TABLE group_members (
                group_id TEXT NOT NULL REFERENCES user_groups(id) ON DELETE CASCADE,
                user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
                PRIMARY KEY (group_id, user_id)
            )
            """,
            "CREATE INDEX group_members_user ON group_members (user_id)",
            // System keys that manage tenants hold every right that existed when they were made.
            """
            UPDATE admin_keys SET rights = rights || ' directory:manage scim'
            WHERE tenant_id IS NULL AND revoked_at IS NULL AND (' ' || rights || ' ') LIKE '% tenants:manage %'
            """,
        ]),
        SchemaChange(.mail, [
            // The same for the right to a tenant's mail settings.
            """
            UPDATE admin_keys SET rights = rights || ' mail:manage'
            WHERE tenant_id IS NULL AND revoked_at IS NULL AND (' ' || rights || ' ') LIKE '% tenants:manage %'
            """,
        ]),
        SchemaChange(.rememberedBrowsers, [
            // How many days this client's sign-ins may remember a browser for; NULL: the tenant's.
            "ALTER TABLE clients ADD COLUMN remember_browser_days BIGINT",
        ]),
        SchemaChange(.sharedSignals, [
            // The same for the right a Shared Signals receiver's key holds.
            """
            UPDATE admin_keys SET rights = rights || ' ssf'
            WHERE tenant_id IS NULL AND revoked_at IS NULL AND (' ' || rights || ' ') LIKE '% tenants:manage %'
            """,
        ]),
    ])
}
