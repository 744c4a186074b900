import CountersignCore
import Foundation

/// A user's set of recovery codes, as the account page and the admin API show it: never the
/// codes.
struct RecoveryCodeSet: Sendable, Equatable {
    let setID: String
    let createdAt: Date
    let total: Int
    let remaining: Int
    let lastUsedAt: Date?
}

/// One recovery code as stored.
struct StoredRecoveryCode: Sendable, Equatable {
    let id: String
    let tenantID: String
    let userID: String
    let verifier: RecoveryHash.Stored
}

/// A new code, hashed, for `RecoveryStore.replaceCodes`.
struct NewRecoveryCode: Sendable {
    let id: String
    let lookup: String
    let verifier: RecoveryHash.Stored
}

/// A temporary access pass, as stored and shown (never the pass itself, once issued).
struct TemporaryAccessPass: Sendable, Equatable {
    let id: String
    let tenantID: String
    let userID: String
    let startsAt: Date
    let expiresAt: Date
    let oneTime: Bool
    /// CIDR blocks the pass may be used from; empty for anywhere.
    let allowedNetworks: [String]
    let createdBy: String
    let createdAt: Date
    var usedAt: Date?
    var uses: Int
    var revokedAt: Date?

    enum State: String, Sendable {
        case scheduled, active, used, expired, revoked
    }

    func state(at date: Date) -> State {
        if revokedAt != nil { return .revoked }
        if oneTime && usedAt != nil { return .used }
        if date >= expiresAt { return .expired }
        if date < startsAt { return .scheduled }
        return .active
    }
}

/// What recovery reads and writes. Every change is one transaction with its audit record, and,
/// for a use, the tenant's event.
protocol RecoveryStore: Sendable {
    /// Replaces the user's codes (if any) with `codes`, as `actor`.
    func replaceCodes(_ codes: [NewRecoveryCode], setID: String, userID: String, tenantID: String, actor: String,
                      at date: Date) async throws
    func codeSet(userID: String, tenantID: String) async throws -> RecoveryCodeSet?
    /// Deletes the user's codes; false when there were none.
    func revokeCodes(userID: String, tenantID: String, actor: String, at date: Date) async throws -> Bool
    /// The user's unused code whose first group is `lookup`.
    func unusedCode(lookup: String, userID: String) async throws -> StoredRecoveryCode?
    /// Marks the code used, once; false when it was used meanwhile.
    func useCode(_ code: StoredRecoveryCode, username: String, from address: String?, at date: Date) async throws -> Bool

    func issuePass(_ pass: TemporaryAccessPass, lookup: String, verifier: RecoveryHash.Stored) async throws
    func passes(userID: String, tenantID: String) async throws -> [TemporaryAccessPass]
    func pass(id: String, tenantID: String) async throws -> TemporaryAccessPass?
    /// Revokes the pass; false when it was revoked already or is not the tenant's.
    func revokePass(id: String, tenantID: String, actor: String, at date: Date) async throws -> Bool
    /// The user's passes whose first group is `lookup`, with their hashes, that may still be used at `date`.
    func usablePasses(lookup: String, userID: String, at date: Date) async throws -> [(TemporaryAccessPass, RecoveryHash.Stored)]
    /// Counts a use of the pass; a one-time pass only once (false when used meanwhile).
    func usePass(_ pass: TemporaryAccessPass, username: String, from address: String?, at date: Date) async throws -> Bool

    /// The times of the wrong tries against each subject since `date`.
    func failures(tenantID: String, subjects: [String], since date: Date) async throws -> [String: [Date]]
    /// Counts a try against each subject; the rows' ids, for `forgetTries`.
    func recordTry(tenantID: String, subjects: [String], at date: Date) async throws -> [String]
    /// Takes back tries that turned out right.
    func forgetTries(_ ids: [String]) async throws
    /// Deletes wrong tries older than `date`.
    func purgeFailures(before date: Date) async throws
}

/// Recovery's store on the server's database (SQLite or PostgreSQL).
struct SQLRecoveryStore: RecoveryStore {
    let database: any Database
    let audit: AuditLog
    let events: TenantEvents
    /// Tells the user's devices that a code or pass was used.
    let notices: SQLSecurityNoticeRepository

    static let codeUsedEvent = "user.recovery_code_used"
    static let passUsedEvent = "user.temporary_access_pass_used"

    func replaceCodes(_ codes: [NewRecoveryCode], setID: String, userID: String, tenantID: String, actor: String,
                      at date: Date) async throws {
        try await database.transaction { executor in
            let replaced = try await executor.run(
                "DELETE FROM recovery_codes WHERE user_id = \(userID) AND tenant_id = \(tenantID) RETURNING id").count
            for code in codes {
                try await executor.run(
                    """
                    INSERT INTO recovery_codes (id, tenant_id, user_id, set_id, lookup, salt, hash, created_at)
                    VALUES (\(code.id), \(tenantID), \(userID), \(setID), \(code.lookup), \(code.verifier.salt),
                        \(code.verifier.hash), \(date))
                    """)
            }
            var details = ["count": String(codes.count), "set_id": setID]
            if replaced > 0 { details["replaced"] = String(replaced) }
            try await audit.record(
                "recovery.codes_created", actor: actor, tenantID: tenantID, target: ("user", userID), details: details,
                at: date, on: executor)
        }
    }

    private struct SetRow: Decodable {
        var setID: String?
        var createdAt: Date?
        var total: Int64
        var remaining: Int64?
        var lastUsedAt: Date?

        enum CodingKeys: String, CodingKey {
            case total, remaining
            case setID = "set_id"
            case createdAt = "created_at"
            case lastUsedAt = "last_used_at"
        }
    }

    func codeSet(userID: String, tenantID: String) async throws -> RecoveryCodeSet? {
        guard let row = try await database.first(
            """
            SELECT MIN(set_id) AS set_id, MIN(created_at) AS created_at, COUNT(*) AS total,
                SUM(CASE WHEN used_at IS NULL THEN 1 ELSE 0 END) AS remaining, MAX(used_at) AS last_used_at
            FROM recovery_codes WHERE user_id = \(userID) AND tenant_id = \(tenantID)
            """, as: SetRow.self), row.total > 0, let setID = row.setID, let createdAt = row.createdAt else { return nil }
        return RecoveryCodeSet(
            setID: setID, createdAt: createdAt, total: Int(row.total), remaining: Int(row.remaining ?? 0),
            lastUsedAt: row.lastUsedAt)
    }

    func revokeCodes(userID: String, tenantID: String, actor: String, at date: Date) async throws -> Bool {
        try await database.transaction { executor in
            let deleted = try await executor.run(
                "DELETE FROM recovery_codes WHERE user_id = \(userID) AND tenant_id = \(tenantID) RETURNING id").count
            guard deleted > 0 else { return false }
            try await audit.record(
                "recovery.codes_revoked", actor: actor, tenantID: tenantID, target: ("user", userID),
                details: ["count": String(deleted)], at: date, on: executor)
            return true
        }
    }

    private struct CodeRow: Decodable {
        var id: String
        var tenantID: String
        var userID: String
        var salt: Data
        var hash: Data

        enum CodingKeys: String, CodingKey {
            case id, salt, hash
            case tenantID = "tenant_id"
            case userID = "user_id"
        }
    }

    func unusedCode(lookup: String, userID: String) async throws -> StoredRecoveryCode? {
        try await database.first(
            """
            SELECT id, tenant_id, user_id, salt, hash FROM recovery_codes
            WHERE user_id = \(userID) AND lookup = \(lookup) AND used_at IS NULL
            """, as: CodeRow.self).map {
            StoredRecoveryCode(id: $0.id, tenantID: $0.tenantID, userID: $0.userID,
                               verifier: RecoveryHash.Stored(salt: $0.salt, hash: $0.hash))
        }
    }

    func useCode(_ code: StoredRecoveryCode, username: String, from address: String?, at date: Date) async throws -> Bool {
        try await database.transaction { executor in
            let used = try await executor.run(
                """
                UPDATE recovery_codes SET used_at = \(date), used_from = \(address)
                WHERE id = \(code.id) AND used_at IS NULL RETURNING id
                """)
            guard !used.isEmpty else { return false }
            let remaining = try await executor.first(
                "SELECT COUNT(*) AS remaining FROM recovery_codes WHERE user_id = \(code.userID) AND used_at IS NULL",
                column: "remaining", as: Int64.self) ?? 0
            var details = ["code_id": code.id, "remaining": String(remaining)]
            if let address { details["ip_address"] = address }
            try await audit.record(
                "recovery.code_used", actor: "user:\(code.userID)", tenantID: code.tenantID, target: ("user", code.userID),
                details: details, at: date, on: executor)
            var data: [String: JSONValue] = [
                "user_id": .string(code.userID), "username": .string(username), "remaining": .integer(remaining),
                "used_at": .string(Timestamps.format(date)),
            ]
            if let address { data["ip_address"] = .string(address) }
            try await events.enqueue(
                event: Self.codeUsedEvent, payload: JSONValue.object(data), tenantID: code.tenantID, at: date, on: executor)
            try await notices.record(
                .recoveryCodeUsed, tenantID: code.tenantID, userID: code.userID, subjectID: code.id, subjectName: nil,
                ipAddress: address, at: date, on: executor)
            return true
        }
    }

    // MARK: - Temporary access passes

    private struct PassRow: Decodable {
        static let columns = CodingKeys.allCases.map(\.rawValue).joined(separator: ", ")

        var id: String
        var tenantID: String
        var userID: String
        var startsAt: Date
        var expiresAt: Date
        var oneTime: Bool
        var allowedNetworks: String
        var createdBy: String
        var createdAt: Date
        var usedAt: Date?
        var uses: Int64
        var revokedAt: Date?
        var salt: Data
        var hash: Data

        enum CodingKeys: String, CodingKey, CaseIterable {
            case id, uses, salt, hash
            case tenantID = "tenant_id"
            case userID = "user_id"
            case startsAt = "starts_at"
            case expiresAt = "expires_at"
            case oneTime = "one_time"
            case allowedNetworks = "allowed_networks"
            case createdBy = "created_by"
            case createdAt = "created_at"
            case usedAt = "used_at"
            case revokedAt = "revoked_at"
        }

        var pass: TemporaryAccessPass {
            TemporaryAccessPass(
                id: id, tenantID: tenantID, userID: userID, startsAt: startsAt, expiresAt: expiresAt, oneTime: oneTime,
                allowedNetworks: (try? JSONDecoder().decode([String].self, from: Data(allowedNetworks.utf8))) ?? [],
                createdBy: createdBy, createdAt: createdAt, usedAt: usedAt, uses: Int(uses), revokedAt: revokedAt)
        }
    }

    func issuePass(_ pass: TemporaryAccessPass, lookup: String, verifier: RecoveryHash.Stored) async throws {
        let networks = String(decoding: try JSONEncoder().encode(pass.allowedNetworks), as: UTF8.self)
        try await database.transaction { executor in
            try await executor.run(
                """
                INSERT INTO temporary_access_passes (id, tenant_id, user_id, lookup, salt, hash, starts_at, expires_at,
                    one_time, allowed_networks, created_by, created_at)
                VALUES (\(pass.id), \(pass.tenantID), \(pass.userID), \(lookup), \(verifier.salt), \(verifier.hash),
                    \(pass.startsAt), \(pass.expiresAt), \(pass.oneTime), \(networks), \(pass.createdBy), \(pass.createdAt))
                """)
            var details = ["pass_id": pass.id, "starts_at": Timestamps.format(pass.startsAt),
                           "expires_at": Timestamps.format(pass.expiresAt), "one_time": pass.oneTime ? "true" : "false"]
            if !pass.allowedNetworks.isEmpty { details["allowed_networks"] = pass.allowedNetworks.joined(separator: " ") }
            try await audit.record(
                "recovery.access_pass_issued", actor: pass.createdBy, tenantID: pass.tenantID, target: ("user", pass.userID),
                details: details, at: pass.createdAt, on: executor)
            // The person is told a pass exists (never the pass): one they did not ask for is a
            // warning that reaches them even without their phone.
            var values = ["starts": MailText.time(pass.startsAt), "expires": MailText.time(pass.expiresAt)]
            if pass.oneTime { values["one_time"] = "true" }
            try await TenantMail.queue(
                .accessPassIssued, toUser: pass.userID, tenantID: pass.tenantID, values: values, at: pass.createdAt,
                on: executor)
        }
    }

    func passes(userID: String, tenantID: String) async throws -> [TemporaryAccessPass] {
        try await database.all(
            """
            SELECT \(raw: PassRow.columns) FROM temporary_access_passes
            WHERE user_id = \(userID) AND tenant_id = \(tenantID) ORDER BY created_at DESC, id DESC
            """, as: PassRow.self).map(\.pass)
    }

    func pass(id: String, tenantID: String) async throws -> TemporaryAccessPass? {
        try await database.first(
            "SELECT \(raw: PassRow.columns) FROM temporary_access_passes WHERE id = \(id) AND tenant_id = \(tenantID)",
            as: PassRow.self)?.pass
    }

    func revokePass(id: String, tenantID: String, actor: String, at date: Date) async throws -> Bool {
        try await database.transaction { executor in
            guard let userID = try await executor.first(
                """
                UPDATE temporary_access_passes SET revoked_at = \(date)
                WHERE id = \(id) AND tenant_id = \(tenantID) AND revoked_at IS NULL RETURNING user_id
                """, column: "user_id", as: String.self) else { return false }
            try await audit.record(
                "recovery.access_pass_revoked", actor: actor, tenantID: tenantID, target: ("user", userID),
                details: ["pass_id": id], at: date, on: executor)
            return true
        }
    }

    func usablePasses(lookup: String, userID: String, at date: Date) async throws -> [(TemporaryAccessPass, RecoveryHash.Stored)] {
        try await database.all(
            """
            SELECT \(raw: PassRow.columns) FROM temporary_access_passes
            WHERE user_id = \(userID) AND lookup = \(lookup) AND revoked_at IS NULL AND expires_at > \(date)
                AND starts_at <= \(date) AND (one_time = \(false) OR used_at IS NULL)
            """, as: PassRow.self).map { ($0.pass, RecoveryHash.Stored(salt: $0.salt, hash: $0.hash)) }
    }

    func usePass(_ pass: TemporaryAccessPass, username: String, from address: String?, at date: Date) async throws -> Bool {
        try await database.transaction { executor in
            let used = try await executor.run(
                """
                UPDATE temporary_access_passes SET used_at = \(date), uses = uses + 1
                WHERE id = \(pass.id) AND revoked_at IS NULL AND (one_time = \(false) OR used_at IS NULL) RETURNING id
                """)
            guard !used.isEmpty else { return false }
            var details = ["pass_id": pass.id]
            if let address { details["ip_address"] = address }
            try await audit.record(
                "recovery.access_pass_used", actor: "user:\(pass.userID)", tenantID: pass.tenantID,
                target: ("user", pass.userID), details: details, at: date, on: executor)
            var data: [String: JSONValue] = [
                "user_id": .string(pass.userID), "username": .string(username), "pass_id": .string(pass.id),
                "one_time": .bool(pass.oneTime), "used_at": .string(Timestamps.format(date)),
            ]
            if let address { data["ip_address"] = .string(address) }
            try await events.enqueue(
                event: Self.passUsedEvent, payload: JSONValue.object(data), tenantID: pass.tenantID, at: date, on: executor)
            try await notices.record(
                .accessPassUsed, tenantID: pass.tenantID, userID: pass.userID, subjectID: pass.id, subjectName: nil,
                ipAddress: address, at: date, on: executor)
            return true
        }
    }

    // MARK: - Wrong tries

    private struct FailureRow: Decodable {
        var subject: String
        var failedAt: Date

        enum CodingKeys: String, CodingKey {
            case subject
            case failedAt = "failed_at"
        }
    }

    func failures(tenantID: String, subjects: [String], since date: Date) async throws -> [String: [Date]] {
        guard !subjects.isEmpty else { return [:] }
        let rows = try await database.all(
            """
            SELECT subject, failed_at FROM recovery_failures
            WHERE tenant_id = \(tenantID) AND subject IN (\(list: subjects)) AND failed_at > \(date)
            ORDER BY failed_at
            """, as: FailureRow.self)
        return Dictionary(grouping: rows, by: \.subject).mapValues { $0.map(\.failedAt) }
    }

    func recordTry(tenantID: String, subjects: [String], at date: Date) async throws -> [String] {
        try await database.transaction { executor in
            var ids: [String] = []
            for subject in subjects {
                let id = Identifier.make("rft", at: date)
                try await executor.run(
                    """
                    INSERT INTO recovery_failures (id, tenant_id, subject, failed_at)
                    VALUES (\(id), \(tenantID), \(subject), \(date))
                    """)
                ids.append(id)
            }
            return ids
        }
    }

    func forgetTries(_ ids: [String]) async throws {
        guard !ids.isEmpty else { return }
        try await database.run("DELETE FROM recovery_failures WHERE id IN (\(list: ids))")
    }

    func purgeFailures(before date: Date) async throws {
        try await database.run("DELETE FROM recovery_failures WHERE failed_at < \(date)")
    }
}

/// What the sign-in asks recovery of a session it opened (`SQLSignInStore.stands`).
struct SQLRecoverySessions: Sendable {
    /// Whether the code a session was opened with is still the user's (replacing or revoking
    /// the set ends it), or its pass was not revoked.
    func stands(_ authenticator: SessionAuthenticator?, userID: String, on executor: any SQLExecutor) async throws -> Bool {
        switch authenticator {
        case .recoveryCode(let id)?:
            return try await executor.first(
                "SELECT user_id FROM recovery_codes WHERE id = \(id)", column: "user_id", as: String.self) == userID
        case .temporaryAccessPass(let id)?:
            return try await executor.first(
                "SELECT user_id FROM temporary_access_passes WHERE id = \(id) AND revoked_at IS NULL",
                column: "user_id", as: String.self) == userID
        default:
            return false
        }
    }
}
