import CountersignCore
import Foundation

public protocol DeviceRepository: Sendable {
    func insert(_ device: Device, on executor: any SQLExecutor) async throws
    /// Inserts a device with its TOTP seed, sealed under the master key, if it has one.
    func insert(_ device: Device, totpSeed: Data?, on executor: any SQLExecutor) async throws
    func find(id: String, on executor: any SQLExecutor) async throws -> Device?
    func list(userID: String, after cursor: String?, limit: Int, on executor: any SQLExecutor) async throws -> [Device]
    /// The ids of every device the user has had, deleted ones too.
    func ids(userID: String, on executor: any SQLExecutor) async throws -> [String]
    /// Marks every active device of the user deleted (its push channel forgotten); their ids.
    func deleteAll(userID: String, at date: Date, on executor: any SQLExecutor) async throws -> [String]
    /// The tenant's active devices after `cursor`, by id; only those whose push channel is in
    /// `push`'s state when it is given.
    func list(tenantID: String, push: DevicePushState?, after cursor: String?, limit: Int,
              on executor: any SQLExecutor) async throws -> [Device]
    /// The devices with these ids that exist, by id.
    func find(ids: [String], on executor: any SQLExecutor) async throws -> [String: Device]
    func rename(id: String, to name: String, at date: Date, on executor: any SQLExecutor) async throws
    func setPush(id: String, _ push: PushRegistration?, at date: Date, on executor: any SQLExecutor) async throws
    /// Marks an active (or pending) device deleted; false if it was neither.
    func markDeleted(id: String, at date: Date, on executor: any SQLExecutor) async throws -> Bool
    /// Makes a pending device (a handover's) active; false if it was not pending.
    func activate(id: String, at date: Date, on executor: any SQLExecutor) async throws -> Bool
    func touch(id: String, at date: Date, on executor: any SQLExecutor) async throws
    /// Marks the device's push token invalid, if it is still `token` and was registered before
    /// `registeredBefore` (APNs reports a 410 with the time it learnt the token was dead; a
    /// token registered after that is a new one). False if nothing changed.
    func invalidatePushToken(id: String, token: String, reason: String, registeredBefore: Date?, at date: Date,
                             on executor: any SQLExecutor) async throws -> Bool
    /// Counts a wrong PIN; at `limit` wrong PINs in a row the device is deleted with the reason
    /// `pin_attempts_exceeded`. Nil if the device was not active.
    func recordPINFailure(id: String, limit: Int, at date: Date, on executor: any SQLExecutor) async throws -> PINFailure?
    /// Clears the count of wrong PINs after a right one.
    func resetPINFailures(id: String, on executor: any SQLExecutor) async throws
    func setPINKey(id: String, _ key: ECPublicJWK, at date: Date, on executor: any SQLExecutor) async throws
    /// Keeps `certificate` as the device's newest certificate.
    func setCertificate(id: String, _ certificate: String, on executor: any SQLExecutor) async throws
    /// Sets the factor keys given where the device has none, dropping its certificate.
    func addFactorKeys(id: String, pin: ECPublicJWK?, biometric: ECPublicJWK?, at date: Date,
                       on executor: any SQLExecutor) async throws
    /// The sealed TOTP seed and last accepted step of each of the user's active devices that has one.
    func totpSeeds(userID: String, on executor: any SQLExecutor) async throws -> [(deviceID: String, sealed: Data, lastStep: Int64?)]
    /// Records `step` as used on the device, if no later or equal step was; false otherwise.
    func acceptTOTPStep(id: String, step: Int64, on executor: any SQLExecutor) async throws -> Bool
    /// Records a request nonce; false if the device has used it before (a replay).
    func recordNonce(deviceID: String, nonce: String, expiresAt: Date, on executor: any SQLExecutor) async throws -> Bool
    func purgeNonces(before date: Date, on executor: any SQLExecutor) async throws
}

public struct SQLDeviceRepository: DeviceRepository {
    public init() {}

    /// The condition that the user in `userColumn` (a column of the statement's own table) has
    /// an active device, for a statement of another table: interpolated as `\(condition)`.
    static func userHasActiveDevice(_ userColumn: String) -> SQLStatement {
        "EXISTS (SELECT 1 FROM devices WHERE devices.user_id = \(raw: userColumn) AND devices.status = 'active')"
    }

    /// The owner of the device `id`, as a value for a statement of another table.
    static func owner(of id: String) -> SQLStatement {
        "(SELECT devices.user_id FROM devices WHERE devices.id = \(id))"
    }

    private typealias Row = DeviceRow

    public func insert(_ device: Device, on executor: any SQLExecutor) async throws {
        try await insert(device, totpSeed: nil, on: executor)
    }

    public func insert(_ device: Device, totpSeed: Data?, on executor: any SQLExecutor) async throws {
        try await executor.run(
            """
            INSERT INTO devices (id, tenant_id, user_id, name, platform, signing_key_jwk, signing_key_thumbprint,
                encryption_key_jwk, push_provider, push_token, push_token_valid, status, created_at, updated_at,
                push_token_updated_at, pin_key_jwk, biometric_key_jwk, totp_seed_sealed, xwing_key, certificate)
            VALUES (\(device.id), \(device.tenantID), \(device.userID), \(device.name), \(device.platform),
                \(try JSONValue(encoding: device.signingKey).canonicalString), \(device.signingKey.thumbprint),
                \(try JSONValue(encoding: device.encryptionKey).canonicalString), \(device.push?.provider),
                \(device.push?.token), \(device.pushTokenValid), \(device.status), \(device.createdAt),
                \(device.updatedAt), \(device.push == nil ? nil : device.pushTokenUpdatedAt ?? device.createdAt),
                \(try device.pinKey.map { try JSONValue(encoding: $0).canonicalString }),
                \(try device.biometricKey.map { try JSONValue(encoding: $0).canonicalString }), \(totpSeed),
                \(device.xwingKey), \(device.certificate))
            """)
    }

    public func recordPINFailure(id: String, limit: Int, at date: Date, on executor: any SQLExecutor) async throws
        -> PINFailure? {
        guard let failures = try await executor.first(
            """
            UPDATE devices SET pin_failures = pin_failures + 1
            WHERE id = \(id) AND status = 'active' RETURNING pin_failures
            """, column: "pin_failures", as: Int.self) else { return nil }
        guard failures >= limit else { return .wrong(attemptsRemaining: limit - failures) }
        try await executor.run(
            """
            UPDATE devices SET status = 'deleted', deleted_at = \(date), updated_at = \(date), push_token = NULL,
                push_provider = NULL, deregistered_reason = \(DeregistrationNotice.Reason.pinAttemptsExceeded)
            WHERE id = \(id) AND status = 'active'
            """)
        try await SQLRememberedBrowserRepository().deleteUnanchored(ofDevice: id, on: executor)
        return .limitReached
    }

    public func resetPINFailures(id: String, on executor: any SQLExecutor) async throws {
        try await executor.run("UPDATE devices SET pin_failures = 0 WHERE id = \(id) AND pin_failures <> 0")
    }

    public func setPINKey(id: String, _ key: ECPublicJWK, at date: Date, on executor: any SQLExecutor) async throws {
        try await executor.run(
            """
            UPDATE devices SET pin_key_jwk = \(try JSONValue(encoding: key).canonicalString), pin_failures = 0,
                updated_at = \(date), certificate = NULL
            WHERE id = \(id)
            """)
    }

    public func addFactorKeys(id: String, pin: ECPublicJWK?, biometric: ECPublicJWK?, at date: Date,
                              on executor: any SQLExecutor) async throws {
        try await executor.run(
            """
            UPDATE devices SET pin_key_jwk = COALESCE(pin_key_jwk, \(try pin.map { try JSONValue(encoding: $0).canonicalString })),
                biometric_key_jwk = COALESCE(biometric_key_jwk, \(try biometric.map { try JSONValue(encoding: $0).canonicalString })),
                updated_at = \(date), certificate = NULL
            WHERE id = \(id)
            """)
    }

    public func setCertificate(id: String, _ certificate: String, on executor: any SQLExecutor) async throws {
        try await executor.run("UPDATE devices SET certificate = \(certificate) WHERE id = \(id)")
    }

    /// A device's TOTP seed as `totpSeeds` reads it.
    private struct TOTPSeedRow: Decodable {
        var id: String
        var sealed: Data
        var lastStep: Int64?

        enum CodingKeys: String, CodingKey {
            case id, sealed = "totp_seed_sealed", lastStep = "totp_last_step"
        }
    }

    public func totpSeeds(userID: String, on executor: any SQLExecutor) async throws
        -> [(deviceID: String, sealed: Data, lastStep: Int64?)] {
        try await executor.all(
            """
            SELECT id, totp_seed_sealed, totp_last_step FROM devices
            WHERE user_id = \(userID) AND status = 'active' AND totp_seed_sealed IS NOT NULL ORDER BY id
            """, as: TOTPSeedRow.self
        ).map { ($0.id, $0.sealed, $0.lastStep) }
    }

    public func acceptTOTPStep(id: String, step: Int64, on executor: any SQLExecutor) async throws -> Bool {
        !(try await executor.run(
            """
            UPDATE devices SET totp_last_step = \(step)
            WHERE id = \(id) AND status = 'active' AND (totp_last_step IS NULL OR totp_last_step < \(step)) RETURNING id
            """)).isEmpty
    }

    public func find(id: String, on executor: any SQLExecutor) async throws -> Device? {
        try await executor.first("SELECT \(raw: Row.columns) FROM devices WHERE id = \(id)", as: Row.self)?.device()
    }

    public func find(ids: [String], on executor: any SQLExecutor) async throws -> [String: Device] {
        let devices = try await executor.run(chunking: ids) { part in
            "SELECT \(raw: Row.columns) FROM devices WHERE id IN (\(list: part))"
        }.map { try $0.decode(Row.self).device() }
        return Dictionary(devices.map { ($0.id, $0) }) { first, _ in first }
    }

    public func list(userID: String, after cursor: String?, limit: Int, on executor: any SQLExecutor) async throws
        -> [Device] {
        try await executor.all(
            """
            SELECT \(raw: Row.columns) FROM devices
            WHERE user_id = \(userID) AND status = 'active' AND id > \(cursor ?? "") ORDER BY id LIMIT \(limit)
            """, as: Row.self
        ).map { try $0.device() }
    }

    public func list(tenantID: String, push: DevicePushState?, after cursor: String?, limit: Int,
                     on executor: any SQLExecutor) async throws -> [Device] {
        let condition = switch push {
        case nil: ""
        case .valid?: " AND push_provider IS NOT NULL AND push_token_valid = 1"
        case .invalid?: " AND push_provider IS NOT NULL AND push_token_valid = 0"
        case .none?: " AND push_provider IS NULL"
        }
        return try await executor.all(
            """
            SELECT \(raw: Row.columns) FROM devices
            WHERE tenant_id = \(tenantID) AND status = 'active' AND id > \(cursor ?? "")\(raw: condition) ORDER BY id LIMIT \(limit)
            """, as: Row.self
        ).map { try $0.device() }
    }

    public func rename(id: String, to name: String, at date: Date, on executor: any SQLExecutor) async throws {
        try await executor.run("UPDATE devices SET name = \(name), updated_at = \(date) WHERE id = \(id)")
    }

    public func setPush(id: String, _ push: PushRegistration?, at date: Date,
                        on executor: any SQLExecutor) async throws {
        try await executor.run(
            """
            UPDATE devices SET push_provider = \(push?.provider), push_token = \(push?.token), push_token_valid = 1,
                push_token_error = NULL, push_token_updated_at = \(push == nil ? nil : date), updated_at = \(date)
            WHERE id = \(id)
            """)
    }

    public func markDeleted(id: String, at date: Date, on executor: any SQLExecutor) async throws -> Bool {
        let deleted = !(try await executor.run(
            """
            UPDATE devices SET status = 'deleted', deleted_at = \(date), updated_at = \(date), push_token = NULL,
                push_provider = NULL
            WHERE id = \(id) AND status IN ('active', 'pending') RETURNING id
            """)).isEmpty
        if deleted { try await SQLRememberedBrowserRepository().deleteUnanchored(ofDevice: id, on: executor) }
        return deleted
    }

    public func activate(id: String, at date: Date, on executor: any SQLExecutor) async throws -> Bool {
        !(try await executor.run(
            "UPDATE devices SET status = 'active', updated_at = \(date) WHERE id = \(id) AND status = 'pending' RETURNING id"
        )).isEmpty
    }

    public func touch(id: String, at date: Date, on executor: any SQLExecutor) async throws {
        try await executor.run("UPDATE devices SET last_seen_at = \(date) WHERE id = \(id)")
    }

    public func invalidatePushToken(id: String, token: String, reason: String, registeredBefore: Date?, at date: Date,
                                    on executor: any SQLExecutor) async throws -> Bool {
        // A token registered at or after `registeredBefore` is newer than the one refused and stays.
        let statement: SQLStatement = if let registeredBefore {
            """
            UPDATE devices SET push_token_valid = 0, push_token_error = \(reason), updated_at = \(date)
            WHERE id = \(id) AND push_token = \(token) AND push_token_valid = 1
                AND (push_token_updated_at IS NULL OR push_token_updated_at < \(registeredBefore))
            RETURNING id
            """
        } else {
            """
            UPDATE devices SET push_token_valid = 0, push_token_error = \(reason), updated_at = \(date)
            WHERE id = \(id) AND push_token = \(token) AND push_token_valid = 1
            RETURNING id
            """
        }
        return !(try await executor.run(statement)).isEmpty
    }

    public func recordNonce(deviceID: String, nonce: String, expiresAt: Date, on executor: any SQLExecutor) async throws
        -> Bool {
        do {
            try await executor.run(
                """
                INSERT INTO device_request_nonces (device_id, nonce, expires_at)
                VALUES (\(deviceID), \(nonce), \(expiresAt))
                """)
            return true
        } catch StorageError.uniqueViolation {
            return false
        }
    }

    public func purgeNonces(before date: Date, on executor: any SQLExecutor) async throws {
        try await executor.run("DELETE FROM device_request_nonces WHERE expires_at < \(date)")
    }

    public func deleteAll(userID: String, at date: Date, on executor: any SQLExecutor) async throws -> [String] {
        let ids = try await executor.run(
            """
            UPDATE devices SET status = 'deleted', deleted_at = \(date), updated_at = \(date), push_token = NULL,
                push_provider = NULL
            WHERE user_id = \(userID) AND status IN ('active', 'pending') RETURNING id
            """).map { try $0.decode(column: "id", as: String.self) }
        try await SQLRememberedBrowserRepository().deleteAll(userID: userID, on: executor)
        return ids
    }

    public func ids(userID: String, on executor: any SQLExecutor) async throws -> [String] {
        try await executor.run("SELECT id FROM devices WHERE user_id = \(userID)").map { try $0.decode(column: "id", as: String.self) }
    }

    /// The names and users of the devices with these ids, within the tenant (any tenant's for nil).
    func names(ids: [String], tenantID: String?, on executor: any SQLExecutor) async throws
        -> [String: (name: String, userID: String)] {
        let tenant = tenantID ?? ""
        var names: [String: (name: String, userID: String)] = [:]
        for row in try await executor.run(chunking: ids, { part in
            "SELECT id, name, user_id FROM devices WHERE id IN (\(list: part)) AND (\(tenant) = '' OR tenant_id = \(tenant))"
        }) {
            names[try row.decode(column: "id", as: String.self)] =
                (try row.decode(column: "name", as: String.self), try row.decode(column: "user_id", as: String.self))
        }
        return names
    }
}
