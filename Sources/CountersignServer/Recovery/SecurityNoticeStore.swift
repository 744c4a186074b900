import CountersignCore
import Foundation

/// "Not me" on a notice (docs/recovery.md §7), answered by one of the user's other devices:
/// what the notice is about is undone, and the account is closed to whoever did it.
///
/// - a device added: deregistered; a passkey added: removed;
/// - a recovery code used: every code of the user revoked; a pass used: the pass revoked;
/// - and always: the user's browser sessions end, new requests are refused for the tenant's
///   "not requested" pause (as a device's "I did not request this" does), the report is audited
///   (`security_notice.reported`) and sent to the tenant's event receiver (`user.not_me`).
///
/// All of it in one transaction, once per notice.
struct SecurityNoticeService: Sendable {
    let database: any Database
    let devices: any DeviceRepository
    let users: any UserRepository
    let passkeys: SQLPasskeyStore
    let audit: AuditLog
    let events: TenantEvents
    let now: @Sendable () -> Date
    var notices = SQLSecurityNoticeRepository(live: nil)
    var sessions = SQLBrowserSessionRepository()
    /// Deletes notices 30 days past their week, at most hourly, when a device lists its own.
    let housekeeping = PeriodicSchedule(every: 3600)

    /// How long a notice is kept after it can no longer be answered (it answers 410 until then).
    static let retention: TimeInterval = 30 * 86_400

    static let reportedEvent = "user.not_me"

    /// The device's notices: made since it enrolled, not about itself, not expired.
    func notices(for device: Device) async throws -> [SecurityNotice] {
        let date = now()
        if housekeeping.isDue(at: date) {
            try await notices.purge(expiredBefore: date.addingTimeInterval(-Self.retention), on: database)
        }
        return try await notices.notices(userID: device.userID, since: device.createdAt, notAbout: device.id, at: date,
                                         on: database)
    }

    func reportNotMe(_ id: String, by device: Device, tenant: Tenant) async throws -> NotMeAnswer {
        let date = now()
        guard let notice = try await notices.find(id: id, on: database), notice.userID == device.userID,
              notice.tenantID == device.tenantID, notice.subjectID != device.id, notice.createdAt >= device.createdAt else {
            throw SecurityNoticeError.unknownNotice
        }
        guard notice.reportedAt == nil else { throw SecurityNoticeError.alreadyReported }
        guard date < notice.expiresAt else { throw SecurityNoticeError.expired }
        let passkey = notice.kind == .passkeyAdded ? try await passkeys.passkey(id: notice.subjectID, tenantID: tenant.id) : nil
        let policy = tenant.policy
        return try await database.transaction { executor in
            guard try await notices.markReported(id: notice.id, by: device.id, at: date, on: executor) else {
                throw SecurityNoticeError.alreadyReported
            }
            let actor = "device:\(device.id)"
            var removed: String?
            switch notice.kind {
            case .deviceAdded:
                if try await devices.markDeleted(id: notice.subjectID, at: date, on: executor) {
                    removed = "device"
                    try await audit.record(
                        "device.deleted", actor: actor, tenantID: notice.tenantID, target: ("device", notice.subjectID),
                        details: ["user_id": notice.userID, "reason": "reported by another device as not added by the user"],
                        at: date, on: executor)
                }
            case .passkeyAdded:
                if let passkey, try await passkeys.delete(
                    passkey, actor: actor, reason: "reported by a device as not added by the user", at: date, on: executor) {
                    removed = "passkey"
                }
            case .recoveryCodeUsed:
                if !(try await executor.run(
                    "DELETE FROM recovery_codes WHERE user_id = \(notice.userID) RETURNING id").isEmpty) {
                    removed = "recovery_codes"
                }
            case .accessPassUsed:
                if !(try await executor.run(
                    """
                    UPDATE temporary_access_passes SET revoked_at = \(date)
                    WHERE id = \(notice.subjectID) AND revoked_at IS NULL RETURNING id
                    """).isEmpty) {
                    removed = "access_pass"
                }
            }
            let ended = try await sessions.revokeAll(tenantID: notice.tenantID, userID: notice.userID, at: date, on: executor)
            var until: Date?
            if policy.notRequestedSuppressionSeconds > 0 {
                until = date.addingTimeInterval(TimeInterval(policy.notRequestedSuppressionSeconds))
                try await users.suppressRequests(userID: notice.userID, until: until!, on: executor)
            }
            var details = ["notice_id": notice.id, "kind": notice.kind.rawValue, "subject_id": notice.subjectID,
                           "sessions_ended": String(ended)]
            if let removed { details["removed"] = removed }
            if let until { details["requests_suppressed_until"] = Timestamps.format(until) }
            try await audit.record(
                "security_notice.reported", actor: actor, tenantID: notice.tenantID, target: ("user", notice.userID),
                details: details, at: date, on: executor)
            var data: [String: JSONValue] = [
                "notice_id": .string(notice.id), "kind": .string(notice.kind.rawValue), "user_id": .string(notice.userID),
                "subject_id": .string(notice.subjectID), "device_id": .string(device.id),
                "reported_at": .string(Timestamps.format(date)),
            ]
            if let removed { data["removed"] = .string(removed) }
            if let until { data["requests_suppressed_until"] = .string(Timestamps.format(until)) }
            try await events.enqueue(
                event: Self.reportedEvent, payload: JSONValue.object(data), tenantID: notice.tenantID, at: date, on: executor)
            return NotMeAnswer(
                id: notice.id, reportedAt: date, removed: removed, sessionsEnded: ended, requestsSuppressedUntil: until)
        }
    }
}

/// Why a device's "not me" was refused.
enum SecurityNoticeError: Error, Sendable, Equatable, APIFailure {
    case unknownNotice, alreadyReported, expired

    var apiError: APIError {
        switch self {
        case .unknownNotice:
            APIError(.notFound, .unknownNotice, "no such notice was shown to this device")
        case .alreadyReported:
            APIError(.conflict, .alreadyReported, "the notice was already reported")
        case .expired:
            APIError(.gone, .noticeExpired, "the notice can no longer be answered")
        }
    }
}
