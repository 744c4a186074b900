/// The tables this feature owns: `sign_in_attempts`, a browser's sign-in at the authorization
/// endpoint from the checked request to the code, `browser_sessions`, who is signed in
/// in which browser, and `remembered_browsers`, the browsers that may skip the push. Each change runs in the schema version it names, in the order
/// `Migrations.features` gives the features.
extension FeatureMigrations {
    static let signIn = FeatureMigrations(feature: "SignIn", changes: [
        SchemaChange(.codeFlow, [
            // The handle the page posts back and the browser's cookie are kept as hashes; an
            // attempt answers only the browser it began in.
            """
            CREATE TABLE sign_in_attempts (
                handle_hash \(.bytes) PRIMARY KEY,
                tenant_id TEXT NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
                client_id TEXT NOT NULL,
                parameters TEXT NOT NULL,
                browser_hash \(.bytes) NOT NULL,
                user_id TEXT,
                transaction_id TEXT,
                created_at BIGINT NOT NULL,
                expires_at BIGINT NOT NULL,
                completed_at BIGINT
            )
            """,
            "CREATE INDEX sign_in_attempts_expiry ON sign_in_attempts (expires_at)",
            """
            CREATE TABLE browser_sessions (
                id TEXT PRIMARY KEY,
                token_hash \(.bytes) NOT NULL UNIQUE,
                tenant_id TEXT NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
                user_id TEXT NOT NULL,
                csrf_token TEXT NOT NULL,
                auth_time BIGINT NOT NULL,
                acr TEXT NOT NULL,
                amr TEXT NOT NULL,
                ip_address TEXT,
                user_agent TEXT,
                created_at BIGINT NOT NULL,
                last_seen_at BIGINT NOT NULL,
                expires_at BIGINT NOT NULL,
                revoked_at BIGINT
            )
            """,
            "CREATE INDEX browser_sessions_user ON browser_sessions (tenant_id, user_id)",
        ]),
        // What a session was signed in with (`SessionAuthenticator`): removing it ends the
        // session. Sessions begun before this version have none.
        SchemaChange(.signInSecurity, [
            "ALTER TABLE browser_sessions ADD COLUMN authenticator TEXT",
            // The browsers each user signed in with (the hash of the browser's mark), by when
            // last: a sign-in from one of them is the user's own (`SignInPushLimits`).
            """
            CREATE TABLE sign_in_browsers (
                tenant_id TEXT NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
                user_id TEXT NOT NULL,
                browser_hash \(.bytes) NOT NULL,
                last_used_at BIGINT NOT NULL,
                PRIMARY KEY (tenant_id, user_id, browser_hash)
            )
            """,
            "CREATE INDEX sign_in_browsers_last_used ON sign_in_browsers (last_used_at)",
        ]),
        // Whether the request an attempt sent followed the user's directory password.
        SchemaChange(.directory, [
            "ALTER TABLE sign_in_attempts ADD COLUMN password_verified BIGINT NOT NULL DEFAULT 0",
        ]),
        // Browsers the user asked to be remembered (`RememberedBrowser`): the cookie's token and
        // the one it replaced as hashes, the public half of the browser's WebCrypto key as a JWK,
        // and what the phone's approval gave. An attempt that a remembered browser may answer
        // keeps which one, and the hash of the challenge it must sign.
        SchemaChange(.rememberedBrowsers, [
            """
            CREATE TABLE remembered_browsers (
                id TEXT PRIMARY KEY,
                tenant_id TEXT NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
                user_id TEXT NOT NULL,
                token_hash \(.bytes) NOT NULL UNIQUE,
                previous_token_hash \(.bytes),
                public_key TEXT NOT NULL,
                acr TEXT NOT NULL,
                amr TEXT NOT NULL,
                auth_time BIGINT NOT NULL,
                ip_address TEXT,
                user_agent TEXT,
                created_at BIGINT NOT NULL,
                last_used_at BIGINT NOT NULL,
                expires_at BIGINT NOT NULL
            )
            """,
            "CREATE INDEX remembered_browsers_user ON remembered_browsers (user_id)",
            "CREATE INDEX remembered_browsers_previous ON remembered_browsers (previous_token_hash)",
            "CREATE INDEX remembered_browsers_expiry ON remembered_browsers (expires_at)",
            "ALTER TABLE sign_in_attempts ADD COLUMN remembered_browser_id TEXT",
            "ALTER TABLE sign_in_attempts ADD COLUMN remembered_challenge_hash \(.bytes)",
        ]),
    ])
}
