import CountersignCore
import Foundation

/// What the passkey ceremonies, the account page and the admin API read and write: users'
/// handles, their credential records, and issued challenges. Every change that a user or an
/// administrator makes is one transaction with its audit record.
protocol PasskeyStore: Sendable {
    func user(id: String, tenantID: String) async throws -> User?
    /// The user's WebAuthn user handle, made on first use.
    func userHandle(userID: String, tenantID: String, at date: Date) async throws -> Data
    /// The user a handle names within the tenant.
    func userID(handle: Data, tenantID: String) async throws -> String?
    func passkeys(userID: String, tenantID: String) async throws -> [Passkey]
    /// The tenant's passkeys by id after `cursor`, at most `limit`.
    func passkeys(tenantID: String, after cursor: String?, limit: Int) async throws -> [Passkey]
    func passkey(credentialID: Data, tenantID: String) async throws -> Passkey?
    func passkey(id: String, tenantID: String) async throws -> Passkey?
    /// Stores a new credential; false when its credential ID is registered already, in any
    /// tenant (nothing is stored then).
    func insert(_ passkey: Passkey, actor: String) async throws -> Bool
    /// Records a successful sign-in: the new counter, backup state and time, and whether the
    /// counter failed to increase.
    func recordUse(of passkey: Passkey, signCount: Int64, backupState: Bool, cloneWarning: Bool, at date: Date) async throws
    /// Marks a credential whose counter went backwards in a refused sign-in.
    func flagCloneWarning(of passkey: Passkey, at date: Date) async throws
    func rename(_ passkey: Passkey, to name: String, actor: String, at date: Date) async throws
    func delete(_ passkey: Passkey, actor: String, at date: Date) async throws -> Bool
    func insert(_ ceremony: PasskeyCeremony, handleHash: Data) async throws
    /// The ceremony under `handleHash` if it belongs to `binding`, is unexpired and unused; it
    /// is used from then on, whatever the verification decides.
    func takeCeremony(handleHash: Data, tenantID: String, binding: String, at date: Date) async throws -> PasskeyCeremony?
    func purgeExpired(before date: Date) async throws
    /// The ids of the groups the user is in: which `passkeys.group_rules` apply.
    func groupIDs(userID: String) async throws -> Set<String>
}

/// The passkey store on the server's database (SQLite or PostgreSQL).
struct SQLPasskeyStore: PasskeyStore {
    let database: any Database
    let users: any UserRepository
    let audit: AuditLog
    /// Tells the user's devices that a passkey was added.
    let notices: SQLSecurityNoticeRepository

    func user(id: String, tenantID: String) async throws -> User? {
        try await users.find(id: id, tenantID: tenantID, on: database)
    }

    func groupIDs(userID: String) async throws -> Set<String> {
        try await GroupReferences.groupIDs(of: userID, on: database)
    }

    func userHandle(userID: String, tenantID: String, at date: Date) async throws -> Data {
        if let handle = try await existingHandle(userID: userID) { return handle }
        do {
            try await database.run(
                """
                INSERT INTO passkey_user_handles (user_id, tenant_id, handle)
                VALUES (\(userID), \(tenantID), \(Secrets.randomBytes(32)))
                """)
        } catch StorageError.uniqueViolation {
            // Another request made it first; use theirs.
        }
        guard let handle = try await existingHandle(userID: userID) else { throw StorageError.uniqueViolation }
        return handle
    }

    private func existingHandle(userID: String) async throws -> Data? {
        try await database.first(
            "SELECT handle FROM passkey_user_handles WHERE user_id = \(userID)", column: "handle", as: Data.self)
    }

    func userID(handle: Data, tenantID: String) async throws -> String? {
        try await database.first(
            "SELECT user_id FROM passkey_user_handles WHERE handle = \(handle) AND tenant_id = \(tenantID)",
            column: "user_id", as: String.self)
    }

    func passkeys(userID: String, tenantID: String) async throws -> [Passkey] {
        try await database.all(
            """
            SELECT \(raw: PasskeyRow.columns) FROM passkeys WHERE tenant_id = \(tenantID) AND user_id = \(userID)
            ORDER BY created_at, id
            """, as: PasskeyRow.self).map { $0.passkey() }
    }

    func passkeys(tenantID: String, after cursor: String?, limit: Int) async throws -> [Passkey] {
        try await database.all(
            """
            SELECT \(raw: PasskeyRow.columns) FROM passkeys WHERE tenant_id = \(tenantID) AND id > \(cursor ?? "")
            ORDER BY id LIMIT \(limit)
            """, as: PasskeyRow.self).map { $0.passkey() }
    }

    func passkey(credentialID: Data, tenantID: String) async throws -> Passkey? {
        try await database.first(
            "SELECT \(raw: PasskeyRow.columns) FROM passkeys WHERE credential_id = \(credentialID) AND tenant_id = \(tenantID)",
            as: PasskeyRow.self)?.passkey()
    }

    func passkey(id: String, tenantID: String) async throws -> Passkey? {
        try await database.first(
            "SELECT \(raw: PasskeyRow.columns) FROM passkeys WHERE id = \(id) AND tenant_id = \(tenantID)",
            as: PasskeyRow.self)?.passkey()
    }

    func insert(_ passkey: Passkey, actor: String) async throws -> Bool {
        do {
            try await database.transaction { executor in
                try await executor.run(
                    """
                    INSERT INTO passkeys (id, tenant_id, user_id, credential_id, public_key, algorithm, sign_count,
                        uv_initialized, backup_eligible, backup_state, transports, aaguid, attestation_format,
                        attestation_kind, attestation_trusted, attestation_object, client_data_json, name, created_at)
                    VALUES (\(passkey.id), \(passkey.tenantID), \(passkey.userID), \(passkey.credentialID),
                        \(passkey.publicKey), \(passkey.algorithm), \(passkey.signCount), \(passkey.uvInitialized),
                        \(passkey.backupEligible), \(passkey.backupState), \(passkey.transports.joined(separator: " ")),
                        \(passkey.aaguid), \(passkey.attestationFormat), \(passkey.attestationKind),
                        \(passkey.attestationTrusted), \(passkey.attestationObject), \(passkey.clientDataJSON),
                        \(passkey.name), \(passkey.createdAt))
                    """)
                try await audit.record(
                    "passkey.registered", actor: actor, tenantID: passkey.tenantID, target: ("passkey", passkey.id),
                    details: [
                        "user_id": passkey.userID, "name": passkey.name, "aaguid": passkey.aaguidString,
                        "attestation": passkey.attestationFormat, "backup_eligible": String(passkey.backupEligible),
                        "transports": passkey.transports.joined(separator: " "),
                    ], at: passkey.createdAt, on: executor)
                try await notices.record(
                    .passkeyAdded, tenantID: passkey.tenantID, userID: passkey.userID, subjectID: passkey.id,
                    subjectName: passkey.name, ipAddress: nil, at: passkey.createdAt, on: executor)
            }
            return true
        } catch StorageError.uniqueViolation {
            return false
        }
    }

    func recordUse(of passkey: Passkey, signCount: Int64, backupState: Bool, cloneWarning: Bool, at date: Date) async throws {
        try await database.transaction { executor in
            try await executor.run(
                """
                UPDATE passkeys SET sign_count = \(signCount), backup_state = \(backupState), last_used_at = \(date),
                    clone_warning_at = \(cloneWarning ? date : passkey.cloneWarningAt)
                WHERE id = \(passkey.id)
                """)
            var details = ["user_id": passkey.userID, "sign_count": String(signCount)]
            if cloneWarning { details["clone_warning"] = "true" }
            try await audit.record(
                "passkey.used", actor: "user:\(passkey.userID)", tenantID: passkey.tenantID, target: ("passkey", passkey.id),
                details: details, at: date, on: executor)
            // A counter let through (the tenant's `flag`) is the same warning as one refused: the
            // account's activity and whoever watches the audit log see it under one action.
            if cloneWarning { try await recordCloneWarning(of: passkey, at: date, on: executor) }
        }
    }

    func flagCloneWarning(of passkey: Passkey, at date: Date) async throws {
        try await database.transaction { executor in
            try await executor.run("UPDATE passkeys SET clone_warning_at = \(date) WHERE id = \(passkey.id)")
            try await recordCloneWarning(of: passkey, at: date, on: executor)
        }
    }

    private func recordCloneWarning(of passkey: Passkey, at date: Date, on executor: any SQLExecutor) async throws {
        try await audit.record(
            "passkey.clone_warning", actor: "system", tenantID: passkey.tenantID, target: ("passkey", passkey.id),
            details: ["user_id": passkey.userID, "sign_count": String(passkey.signCount)], at: date, on: executor)
    }

    func rename(_ passkey: Passkey, to name: String, actor: String, at date: Date) async throws {
        try await database.transaction { executor in
            try await executor.run("UPDATE passkeys SET name = \(name) WHERE id = \(passkey.id)")
            try await audit.record(
                "passkey.renamed", actor: actor, tenantID: passkey.tenantID, target: ("passkey", passkey.id),
                details: ["user_id": passkey.userID, "name": name], at: date, on: executor)
        }
    }

    func delete(_ passkey: Passkey, actor: String, at date: Date) async throws -> Bool {
        try await database.transaction { executor in
            try await delete(passkey, actor: actor, reason: nil, at: date, on: executor)
        }
    }

    /// Deletes the passkey in the caller's transaction, with its audit record; false when it was
    /// gone already.
    func delete(_ passkey: Passkey, actor: String, reason: String?, at date: Date, on executor: any SQLExecutor)
        async throws -> Bool {
        let deleted = try await executor.run("DELETE FROM passkeys WHERE id = \(passkey.id) RETURNING id")
        guard !deleted.isEmpty else { return false }
        var details = ["user_id": passkey.userID, "name": passkey.name]
        if let reason { details["reason"] = reason }
        try await audit.record(
            "passkey.removed", actor: actor, tenantID: passkey.tenantID, target: ("passkey", passkey.id),
            details: details, at: date, on: executor)
        return true
    }

    func insert(_ ceremony: PasskeyCeremony, handleHash: Data) async throws {
        let expectation = String(decoding: try JSONEncoder().encode(ceremony.expectation), as: UTF8.self)
        try await database.run(
            """
            INSERT INTO passkey_ceremonies (handle_hash, tenant_id, purpose, binding, user_id, challenge, expectation,
                created_at, expires_at)
            VALUES (\(handleHash), \(ceremony.tenantID), \(ceremony.purpose.rawValue), \(ceremony.binding),
                \(ceremony.userID), \(ceremony.challenge), \(expectation), \(ceremony.createdAt), \(ceremony.expiresAt))
            """)
    }

    func takeCeremony(handleHash: Data, tenantID: String, binding: String, at date: Date) async throws -> PasskeyCeremony? {
        // Used whatever the binding says: a handle seen from another browser is spent too.
        let row = try await database.first(
            """
            UPDATE passkey_ceremonies SET used_at = \(date)
            WHERE handle_hash = \(handleHash) AND tenant_id = \(tenantID) AND used_at IS NULL AND expires_at > \(date)
            RETURNING \(raw: PasskeyCeremonyRow.columns)
            """, as: PasskeyCeremonyRow.self)
        guard let row, row.binding == binding else { return nil }
        return try row.ceremony()
    }

    func purgeExpired(before date: Date) async throws {
        try await database.run("DELETE FROM passkey_ceremonies WHERE expires_at < \(date)")
    }
}

/// What the administration API does to a user's passkeys inside its own transactions.
struct SQLPasskeyRepository: Sendable {
    /// Deletes every passkey of the user; their ids and names.
    func deleteAll(userID: String, on executor: any SQLExecutor) async throws -> [(id: String, name: String)] {
        try await executor.run("DELETE FROM passkeys WHERE user_id = \(userID) RETURNING id, name").map {
            (try $0.decode(column: "id", as: String.self), try $0.decode(column: "name", as: String.self))
        }
    }
}
