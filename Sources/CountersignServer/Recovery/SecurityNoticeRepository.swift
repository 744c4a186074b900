import CountersignCore
import Foundation

/// What a user's devices are told about their account (docs/recovery.md): a device or a passkey
/// was added, or a recovery code or temporary access pass was used. Each device lists the
/// notices made since it enrolled, except those about itself, and may answer "not me" for a
/// week (`SecurityNoticeService`).
struct SecurityNotice: Sendable, Equatable {
    enum Kind: String, Sendable {
        case deviceAdded = "device_added"
        case passkeyAdded = "passkey_added"
        case recoveryCodeUsed = "recovery_code_used"
        case accessPassUsed = "access_pass_used"
    }

    let id: String
    let kind: Kind
    /// The device, passkey, code or pass the notice is about.
    let subjectID: String
    let subjectName: String?
    let ipAddress: String?
    let createdAt: Date
    let expiresAt: Date
    var reportedAt: Date?
    var reportedBy: String?
    let tenantID: String
    let userID: String

    /// The notice as the device protocol carries it.
    var item: SecurityNoticeList.Item {
        SecurityNoticeList.Item(
            id: id, kind: kind.rawValue, subjectID: subjectID, subjectName: subjectName, ipAddress: ipAddress,
            createdAt: createdAt, expiresAt: expiresAt, reportedAt: reportedAt)
    }
}

/// `security_notices`, written by the transactions that add a device or passkey or use a code or
/// pass, whichever feature runs them.
struct SQLSecurityNoticeRepository: Sendable {
    /// How long a device may answer "not me".
    static let lifetime: TimeInterval = 7 * 86_400

    /// Where a recorded notice is announced to the devices' live streams; nil for a repository
    /// that only reads.
    let live: LiveNotices?

    init(live: LiveNotices?) {
        self.live = live
    }

    /// Records a notice and, in the same transaction, queues its push to each of the user's
    /// other active devices that has a working push registration (`PushOutboxEntry.notice`), and
    /// its mail to the user's address when the tenant sends mail (`TenantMail`): the
    /// outbox sends it within its poll interval. Once the transaction commits, the notice goes
    /// down the live stream of each of those devices that holds one open, push or not
    /// (`LiveNotices`); any device also finds it in `GET /device/v1/notices`. `quiet` names a
    /// device not to tell (the one that approved what the notice tells of). Returns the notice's
    /// id.
    @discardableResult
    func record(_ kind: SecurityNotice.Kind, tenantID: String, userID: String, subjectID: String, subjectName: String?,
                ipAddress: String?, quiet: String? = nil, at date: Date, on executor: any SQLExecutor) async throws
        -> String {
        let id = Identifier.make("ntc", at: date)
        let expires = date.addingTimeInterval(Self.lifetime)
        try await executor.run(
            """
            INSERT INTO security_notices (id, tenant_id, user_id, kind, subject_id, subject_name, ip_address, created_at,
                expires_at)
            VALUES (\(id), \(tenantID), \(userID), \(kind.rawValue), \(subjectID),
                \(subjectName), \(ipAddress), \(date), \(expires))
            """)
        let devices = try await SQLDeviceRepository().list(
            userID: userID, after: nil, limit: ApprovalService.maximumDevicesPerUser, on: executor)
        let told = devices.filter { $0.id != subjectID && $0.id != quiet }
        let pushes = told.compactMap { device -> PushOutboxEntry? in
            guard device.pushTokenValid, let push = device.push else { return nil }
            return .notice(id, tenantID: tenantID, deviceID: device.id, provider: push.provider, expiresAt: expires, at: date)
        }
        try await SQLPushOutboxRepository().enqueue(pushes, on: executor)
        let notice = SecurityNotice(
            id: id, kind: kind, subjectID: subjectID, subjectName: subjectName, ipAddress: ipAddress, createdAt: date,
            expiresAt: expires, reportedAt: nil, reportedBy: nil, tenantID: tenantID, userID: userID)
        try await live?.announce(notice.item, to: told.map(\.id), on: executor)
        // And by mail, when the tenant sends mail and the user has an address: the person may
        // have lost the phone the push goes to.
        var values = ["time": MailText.time(date)]
        values["name"] = subjectName
        values["ip"] = ipAddress
        try await TenantMail.queue(Self.mailKind(kind), toUser: userID, tenantID: tenantID, values: values, at: date,
                                   on: executor)
        return id
    }

    private static func mailKind(_ kind: SecurityNotice.Kind) -> MailKind {
        switch kind {
        case .deviceAdded: .deviceAdded
        case .passkeyAdded: .passkeyAdded
        case .recoveryCodeUsed: .recoveryCodeUsed
        case .accessPassUsed: .accessPassUsed
        }
    }

    private struct Row: Decodable {
        static let columns = "id, tenant_id, user_id, kind, subject_id, subject_name, ip_address, created_at, expires_at, reported_at, reported_by"

        var id: String
        var tenantID: String
        var userID: String
        var kind: String
        var subjectID: String
        var subjectName: String?
        var ipAddress: String?
        var createdAt: Date
        var expiresAt: Date
        var reportedAt: Date?
        var reportedBy: String?

        enum CodingKeys: String, CodingKey {
            case id, kind
            case tenantID = "tenant_id"
            case userID = "user_id"
            case subjectID = "subject_id"
            case subjectName = "subject_name"
            case ipAddress = "ip_address"
            case createdAt = "created_at"
            case expiresAt = "expires_at"
            case reportedAt = "reported_at"
            case reportedBy = "reported_by"
        }

        var notice: SecurityNotice? {
            SecurityNotice.Kind(rawValue: kind).map {
                SecurityNotice(id: id, kind: $0, subjectID: subjectID, subjectName: subjectName, ipAddress: ipAddress,
                               createdAt: createdAt, expiresAt: expiresAt, reportedAt: reportedAt, reportedBy: reportedBy,
                               tenantID: tenantID, userID: userID)
            }
        }
    }

    /// The user's notices made since `since` and not expired at `date`, newest first, but those
    /// about `device` itself.
    func notices(userID: String, since: Date, notAbout device: String, at date: Date, on executor: any SQLExecutor)
        async throws -> [SecurityNotice] {
        try await executor.all(
            """
            SELECT \(raw: Row.columns) FROM security_notices
            WHERE user_id = \(userID) AND created_at >= \(since) AND expires_at > \(date) AND subject_id <> \(device)
            ORDER BY created_at DESC, id DESC LIMIT 100
            """, as: Row.self).compactMap(\.notice)
    }

    /// The notices with these ids that still exist, by id (for the push dispatcher).
    func find(ids: [String], on executor: any SQLExecutor) async throws -> [String: SecurityNotice] {
        guard !ids.isEmpty else { return [:] }
        let notices = try await executor.run(chunking: ids) { part in
            "SELECT \(raw: Row.columns) FROM security_notices WHERE id IN (\(list: part))"
        }.compactMap { try $0.decode(Row.self).notice }
        return Dictionary(notices.map { ($0.id, $0) }) { first, _ in first }
    }

    /// Deletes the notices that could no longer be answered before `date` (and their pushes).
    func purge(expiredBefore date: Date, on executor: any SQLExecutor) async throws {
        try await executor.run("DELETE FROM security_notices WHERE expires_at < \(date)")
    }

    func find(id: String, on executor: any SQLExecutor) async throws -> SecurityNotice? {
        try await executor.first("SELECT \(raw: Row.columns) FROM security_notices WHERE id = \(id)", as: Row.self)?.notice
    }

    /// Marks the notice reported by `deviceID`, once; false when it was reported already.
    func markReported(id: String, by deviceID: String, at date: Date, on executor: any SQLExecutor) async throws -> Bool {
        !(try await executor.run(
            """
            UPDATE security_notices SET reported_at = \(date), reported_by = \(deviceID)
            WHERE id = \(id) AND reported_at IS NULL RETURNING id
            """).isEmpty)
    }
}
