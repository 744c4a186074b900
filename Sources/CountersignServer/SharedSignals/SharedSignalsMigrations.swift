/// The tables this feature owns: `ssf_streams`, the event streams receivers registered, and
/// `ssf_events`, each Security Event Token kept for its stream until it is delivered (pushed and
/// accepted, or polled and acknowledged) or given up.
extension FeatureMigrations {
    static let sharedSignals = FeatureMigrations(feature: "SharedSignals", changes: [
        SchemaChange(.sharedSignals, [
            // One row per stream. `owner_key_id` is the admin key of the receiver that created
            // it: a receiver sees and changes only its own streams. `audience` and
            // `events_requested` are JSON; the push endpoint's Authorization header is sealed.
            """
            CREATE TABLE ssf_streams (
                id TEXT PRIMARY KEY,
                tenant_id TEXT NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
                owner_key_id TEXT NOT NULL,
                audience TEXT NOT NULL,
                delivery_method TEXT NOT NULL,
                endpoint_url TEXT,
                authorization_sealed \(.bytes),
                events_requested TEXT NOT NULL,
                subject_format TEXT NOT NULL,
                description TEXT,
                status TEXT NOT NULL,
                status_reason TEXT,
                verification_requested_at BIGINT,
                created_at BIGINT NOT NULL,
                updated_at BIGINT NOT NULL
            )
            """,
            "CREATE INDEX ssf_streams_tenant ON ssf_streams (tenant_id, status)",
            // The SETs, written in the transaction of the change they report, with their claims
            // (signed when they leave, with the tenant's current key). Push rows go queued →
            // sending → sent or failed, as every outbox; poll rows wait until a poll hands them
            // out (delivered, due again after `next_attempt_at` if not acknowledged), then are
            // acknowledged; a paused stream's rows are held.
            """
            CREATE TABLE ssf_events (
                id TEXT PRIMARY KEY,
                stream_id TEXT NOT NULL REFERENCES ssf_streams(id) ON DELETE CASCADE,
                tenant_id TEXT NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
                event_type TEXT NOT NULL,
                claims TEXT NOT NULL,
                status TEXT NOT NULL,
                attempts BIGINT NOT NULL DEFAULT 0,
                next_attempt_at BIGINT NOT NULL,
                last_error TEXT,
                created_at BIGINT NOT NULL,
                updated_at BIGINT NOT NULL,
                sent_at BIGINT
            )
            """,
            "CREATE INDEX ssf_events_due ON ssf_events (status, next_attempt_at)",
            "CREATE INDEX ssf_events_stream ON ssf_events (stream_id, status, next_attempt_at)",
        ]),
    ])
}
