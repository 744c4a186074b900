/// The tables this feature owns: `tenant_mail`, each tenant's mail settings (one row at most),
/// with the SMTP password sealed under the master key, and `mail_outbox`, each message as it is
/// sent, written in the transaction of what it tells of and sent by the mail dispatcher with
/// retries. Each change runs in the schema version it names, in the order `Migrations.features`
/// gives the features.
extension FeatureMigrations {
    static let mail = FeatureMigrations(feature: "Mail", changes: [
        SchemaChange(.mail, [
            // `settings`: the `MailSettings` as JSON (without its tenant and times).
            """
            CREATE TABLE tenant_mail (
                tenant_id TEXT PRIMARY KEY REFERENCES tenants(id) ON DELETE CASCADE,
                settings TEXT NOT NULL,
                password_sealed \(.bytes),
                created_at BIGINT NOT NULL,
                updated_at BIGINT NOT NULL
            )
            """,
            // The message is rendered when it is queued: every attempt sends the same subject,
            // text and Message-ID, whatever the templates become in between. `user_id` is kept
            // for the deliveries view and is cleared when the user is deleted; the address stays
            // with the message.
            """
            CREATE TABLE mail_outbox (
                id TEXT PRIMARY KEY,
                tenant_id TEXT NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
                kind TEXT NOT NULL,
                user_id TEXT REFERENCES users(id) ON DELETE SET NULL,
                recipient TEXT NOT NULL,
                recipient_name TEXT,
                sender TEXT NOT NULL,
                sender_name TEXT,
                subject TEXT NOT NULL,
                body TEXT NOT NULL,
                status TEXT NOT NULL,
                attempts BIGINT NOT NULL DEFAULT 0,
                next_attempt_at BIGINT NOT NULL,
                last_error TEXT,
                created_at BIGINT NOT NULL,
                updated_at BIGINT NOT NULL,
                sent_at BIGINT
            )
            """,
            "CREATE INDEX mail_outbox_due ON mail_outbox (status, next_attempt_at)",
            // The deliveries view lists a tenant's mail newest first.
            "CREATE INDEX mail_outbox_tenant ON mail_outbox (tenant_id, id)",
            "CREATE INDEX mail_outbox_user ON mail_outbox (user_id) WHERE user_id IS NOT NULL",
        ]),
    ])
}
