import Foundation
import HTTPTypes

/// The console's push credentials and deliveries: which credentials the tenant has and which it
/// sends with; setting an APNs token key (the `.p8` file, uploaded or pasted), an APNs certificate
/// (the `.p12` file and its password) or an FCM service account (its JSON key file, uploaded or
/// pasted); removing one; the notifications sent lately, failed ones first to the eye; and one
/// request's deliveries, device by device. Each action is the administration API call of the
/// same name.
struct ConsolePush: Sendable {
    let flow: ConsoleFlow

    typealias Visit = ConsoleFlow.Visit

    /// The statuses the recent list can be narrowed to.
    static let statuses = ["queued", "sending", "sent", "failed", "cancelled"]

    func page(_ session: ConsoleSession, _ visit: Visit, query: FormParameters? = nil, form: ConsolePushForm = ConsolePushForm(),
              notice: String? = nil, status: HTTPResponse.Status = .ok) async throws -> PageAnswer {
        let answer = try await flow.admin(.get, flow.tenantPath(visit) + "/push-credentials", session: session, visit)
        let items = (answer.json?["items"] as? [[String: Any]] ?? []).map { ConsolePushRow($0) }
        let shown = query?["status"].flatMap { Self.statuses.contains($0) ? $0 : nil }
        var path = flow.tenantPath(visit) + "/push-deliveries?limit=25"
        if let shown { path += "&status=" + shown }
        if let cursor = query?["cursor"] { path += "&cursor=" + AuthorizationRedirect.encoded(cursor) }
        let recent = try await flow.admin(.get, path, session: session, visit)
        var failure: String?
        if answer.status != .ok || recent.status != .ok {
            let refused = answer.status != .ok ? answer : recent
            failure = ConsoleText.sentence(refused.errorDescription ?? "the push credentials could not be read")
        }
        let deliveries = (recent.json?["items"] as? [[String: Any]] ?? []).map(ConsoleNotificationRow.init)
        let older = (recent.json?["next_cursor"] as? String).map { cursor in
            (shown.map { "status=\($0)&" } ?? "") + "cursor=" + AuthorizationRedirect.encoded(cursor)
        }
        return .page(
            "console-push",
            ConsolePushPage(ConsoleChrome(visit, session, .push), items: items, form: form, deliveries: deliveries,
                            older: older, failedOnly: shown == "failed", notice: notice, error: failure),
            status: failure == nil ? status : ConsoleText.pageStatus(answer.status != .ok ? answer.status : recent.status))
    }

    func setAPNsToken(_ upload: ConsoleForm, _ session: ConsoleSession, _ visit: Visit) async throws -> PageAnswer {
        var typed = ConsolePushForm(upload.fields)
        guard let key = Self.text(of: upload, file: "private_key_file", or: typed.privateKey, into: &typed.privateKeyError) else {
            return try await page(session, visit, form: typed, status: .badRequest)
        }
        var body: [String: any Sendable] = ["key_id": typed.keyID, "team_id": typed.teamID, "topic": typed.topic, "private_key": key]
        if !typed.environment.isEmpty { body["environment"] = typed.environment }
        let answer = try await flow.admin(.put, flow.tenantPath(visit) + "/push-credentials/apns-token", json: body, session: session, visit)
        guard answer.status == .ok || answer.status == .created else {
            typed.refuse(answer, form: .apnsToken)
            return try await page(session, visit, form: typed, status: ConsoleText.pageStatus(answer.status))
        }
        return try await page(session, visit, notice: "The APNs token key is set.")
    }

    func setAPNsCertificate(_ upload: ConsoleForm, _ session: ConsoleSession, _ visit: Visit) async throws -> PageAnswer {
        var typed = ConsolePushForm(upload.fields)
        var refused = false
        if !(1...128).contains(typed.clientAppKey.utf8.count)
            || !typed.clientAppKey.unicodeScalars.allSatisfy({ $0.isASCII && (CharacterSet.alphanumerics.contains($0) || "._~:-".unicodeScalars.contains($0)) }) {
            typed.clientAppKeyError = "Enter 1 to 128 letters, digits and . _ ~ : -, the name the app's devices are known by."
            refused = true
        }
        let certificate = upload.files["certificate_file"]
        if certificate == nil {
            typed.certificateError = "Choose the .p12 file."
            refused = true
        }
        guard !refused, let certificate else { return try await page(session, visit, form: typed, status: .badRequest) }
        var body: [String: any Sendable] = [
            "certificate": certificate.data.base64EncodedString(), "password": upload.fields["password"] ?? "", "topic": typed.certificateTopic,
        ]
        if !typed.certificateEnvironment.isEmpty { body["environment"] = typed.certificateEnvironment }
        let answer = try await flow.admin(
            .put, flow.tenantPath(visit) + "/push-credentials/apns-certificates/" + AuthorizationRedirect.encoded(typed.clientAppKey),
            json: body, session: session, visit)
        guard answer.status == .ok || answer.status == .created else {
            typed.refuse(answer, form: .apnsCertificate)
            return try await page(session, visit, form: typed, status: ConsoleText.pageStatus(answer.status))
        }
        return try await page(session, visit, notice: "The APNs certificate for \(typed.clientAppKey) is set.")
    }

    func setFCM(_ upload: ConsoleForm, _ session: ConsoleSession, _ visit: Visit) async throws -> PageAnswer {
        var typed = ConsolePushForm(upload.fields)
        guard let account = Self.text(of: upload, file: "service_account_file", or: typed.serviceAccount,
                                      into: &typed.serviceAccountError) else {
            return try await page(session, visit, form: typed, status: .badRequest)
        }
        let answer = try await flow.admin(
            .put, flow.tenantPath(visit) + "/push-credentials/fcm", json: ["service_account": account], session: session, visit)
        guard answer.status == .ok || answer.status == .created else {
            typed.refuse(answer, form: .fcm)
            return try await page(session, visit, form: typed, status: ConsoleText.pageStatus(answer.status))
        }
        return try await page(session, visit, notice: "The FCM service account is set.")
    }

    /// Removes the credential at `path` below `…/push-credentials` (`apns-token`, `fcm`,
    /// `apns-certificates/<client app key>`).
    func remove(_ path: String, _ session: ConsoleSession, _ visit: Visit) async throws -> PageAnswer {
        let answer = try await flow.admin(.delete, flow.tenantPath(visit) + "/push-credentials/" + path, session: session, visit)
        guard answer.status == .noContent else {
            return try await page(session, visit,
                                  notice: ConsoleText.sentence(answer.errorDescription ?? "the credential could not be removed"),
                                  status: ConsoleText.pageStatus(answer.status))
        }
        return try await page(session, visit, notice: "The credential is removed.")
    }

    /// One request's deliveries: each device it was sealed to, with every notification sent to
    /// it, and the calls to the client's notification endpoint.
    func request(_ id: String, _ session: ConsoleSession, _ visit: Visit) async throws -> PageAnswer {
        let answer = try await flow.admin(
            .get, flow.tenantPath(visit) + "/approvals/" + AuthorizationRedirect.encoded(id) + "/deliveries", session: session, visit)
        guard answer.status == .ok, let report = answer.json else {
            throw ConsoleRefusal(status: ConsoleText.pageStatus(answer.status), heading: "Request not shown",
                                 message: ConsoleText.sentence(answer.errorDescription ?? "the request was not found"))
        }
        return .page("console-request", ConsoleRequestPage(ConsoleChrome(visit, session, .push), report: report))
    }

    /// A file's text, or what was pasted: the file wins. Nil, with the message in `error`, when
    /// neither was given or the file is not UTF-8 text.
    private static func text(of upload: ConsoleForm, file: String, or pasted: String, into error: inout String?) -> String? {
        if let chosen = upload.files[file] {
            guard let text = String(validating: chosen.data, as: UTF8.self) else {
                error = "\(chosen.filename.isEmpty ? "The file" : chosen.filename) is not a text file."
                return nil
            }
            return text
        }
        guard !pasted.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty else {
            error = "Choose the file, or paste its text."
            return nil
        }
        return pasted
    }
}

/// A push credential as the page lists it.
struct ConsolePushRow: Sendable {
    let kind: String, provider: String, detail: String, active: Bool, updatedAt: String
    /// Where its delete form posts, below `/console/push/`.
    let removal: String

    init(_ credential: [String: Any]) {
        kind = credential["kind"] as? String ?? ""
        provider = credential["provider"] as? String ?? ""
        active = credential["active"] as? Bool ?? false
        updatedAt = ConsoleTime.text(credential["updated_at"] as? String)
        let summary = credential["summary"] as? [String: Any] ?? [:]
        var parts: [String] = []
        if let topic = credential["topic"] as? String { parts.append("topic \(topic)") }
        if let environment = credential["environment"] as? String { parts.append(environment) }
        for (key, label) in [("key_id", "key"), ("team_id", "team"), ("project_id", "project"), ("client_email", "account"),
                             ("certificate_subject", "certificate"), ("certificate_not_after", "expires")] {
            guard let value = summary[key] as? String else { continue }
            parts.append("\(label) \(key == "certificate_not_after" ? ConsoleTime.text(value) : value)")
        }
        detail = parts.joined(separator: " · ")
        if kind == "apns-certificate", let app = credential["client_app_key"] as? String {
            removal = "apns-certificates/" + AuthorizationRedirect.encoded(app)
        } else {
            removal = kind == "apns-token" ? "apns-token" : "fcm"
        }
    }
}

/// The three forms as typed, with the message beside the field the API refused. The files and
/// the certificate's password are never sent back.
struct ConsolePushForm: Sendable {
    enum Kind { case apnsToken, apnsCertificate, fcm }

    var keyID = "", teamID = "", topic = "", environment = "production", privateKey = "", serviceAccount = ""
    var clientAppKey = "", certificateTopic = "", certificateEnvironment = "production"
    var keyIDError: String?, teamIDError: String?, topicError: String?, privateKeyError: String?, apnsError: String?
    var clientAppKeyError: String?, certificateTopicError: String?, certificateError: String?, certificateFormError: String?
    var serviceAccountError: String?

    init() {}

    init(_ form: FormParameters) {
        keyID = form["key_id"] ?? ""
        teamID = form["team_id"] ?? ""
        topic = form["topic"] ?? ""
        environment = form["environment"] ?? "production"
        privateKey = form["private_key"] ?? ""
        serviceAccount = form["service_account"] ?? ""
        clientAppKey = form["client_app_key"] ?? ""
        certificateTopic = form["certificate_topic"] ?? ""
        certificateEnvironment = form["certificate_environment"] ?? "production"
    }

    mutating func refuse(_ answer: InProcessRouter.Answer, form: Kind) {
        let message = answer.errorDescription ?? "the credential could not be set"
        let sentence = ConsoleText.sentence(message)
        let field = ConsoleText.field(of: message)
        switch form {
        case .fcm:
            serviceAccountError = sentence
        case .apnsCertificate:
            switch field {
            case "topic": certificateTopicError = sentence
            case "client_app_key": clientAppKeyError = sentence
            case "certificate", "password": certificateError = sentence
            default: certificateFormError = sentence
            }
        case .apnsToken:
            switch field {
            case "key_id": keyIDError = sentence
            case "team_id": teamIDError = sentence
            case "topic": topicError = sentence
            case "private_key": privateKeyError = sentence
            default: apnsError = sentence
            }
        }
    }
}

/// A push notification in the recent list.
struct ConsoleNotificationRow: Sendable {
    let requestID: String, deviceID: String, kind: String, provider: String, status: String, attempts: String
    let lastError: String?, createdAt: String
    let failed: Bool
    /// A security notice's push names its notice, not a request.
    let noticeID: String
    let isNotice: Bool

    init(_ notification: [String: Any]) {
        requestID = notification["request_id"] as? String ?? ""
        noticeID = notification["notice_id"] as? String ?? ""
        isNotice = notification["kind"] as? String == "notice"
        deviceID = notification["device_id"] as? String ?? ""
        kind = notification["kind"] as? String ?? ""
        provider = (notification["provider"] as? String ?? "").uppercased()
        status = notification["status"] as? String ?? ""
        attempts = (notification["attempts"] as? NSNumber).map { String($0.intValue) } ?? "0"
        lastError = notification["last_error"] as? String
        createdAt = ConsoleTime.text(notification["created_at"] as? String)
        failed = status == "failed"
    }
}

/// `console-push`.
struct ConsolePushPage: ConsolePageModel {
    let title = "Push credentials"
    let chrome: ConsoleChrome
    let items: [ConsolePushRow]
    let form: ConsolePushForm
    let sandbox: Bool, certificateSandbox: Bool
    let deliveries: [ConsoleNotificationRow]
    let hasDeliveries: Bool
    /// The query of the next, older page of notifications, when there is one.
    let older: String?
    let failedOnly: Bool
    let notice: String?, error: String?

    init(_ chrome: ConsoleChrome, items: [ConsolePushRow], form: ConsolePushForm, deliveries: [ConsoleNotificationRow],
         older: String?, failedOnly: Bool, notice: String?, error: String?) {
        self.chrome = chrome
        (self.items, self.form, self.deliveries, self.failedOnly, self.notice) = (items, form, deliveries, failedOnly, notice)
        (self.older, self.error) = (older, error)
        hasDeliveries = !deliveries.isEmpty
        sandbox = form.environment == "sandbox"
        certificateSandbox = form.certificateEnvironment == "sandbox"
    }
}

/// `console-request`: one request's deliveries.
struct ConsoleRequestPage: ConsolePageModel {
    struct Notification: Sendable {
        let kind: String, provider: String, status: String, attempts: String, lastError: String?, createdAt: String, sentAt: String
        let failed: Bool
    }
    struct Device: Sendable {
        let id: String, name: String, push: String, lastSeen: String
        let notifications: [Notification]
        let hasNotifications: Bool
    }
    struct ClientCall: Sendable {
        let kind: String, status: String, attempts: String, lastError: String?, createdAt: String
        let failed: Bool
    }

    let title: String
    let chrome: ConsoleChrome
    let requestID: String, status: String, createdAt: String, expiresAt: String, decidedBy: String?
    let userID: String, clientID: String
    let devices: [Device]
    let clientCalls: [ClientCall]
    let hasClientCalls: Bool
    /// The risk rules that fired for the request, each as "rule: reason".
    let risk: [String]
    let hasRisk: Bool

    init(_ chrome: ConsoleChrome, report: [String: Any]) {
        self.chrome = chrome
        requestID = report["request_id"] as? String ?? ""
        title = "Request " + requestID
        let state = report["status"] as? String ?? ""
        status = state == "pending" && report["expired"] as? Bool == true ? "expired" : state
        expiresAt = ConsoleTime.text(report["expires_at"] as? String)
        createdAt = ConsoleTime.text(report["created_at"] as? String)
        userID = report["user_id"] as? String ?? ""
        clientID = report["client_id"] as? String ?? ""
        decidedBy = report["decided_by_device"] as? String
        risk = (report["risk"] as? [[String: Any]] ?? []).map { "\($0["rule"] as? String ?? ""): \($0["reason"] as? String ?? "")" }
        hasRisk = !risk.isEmpty
        func count(_ value: Any?) -> String { (value as? NSNumber).map { String($0.intValue) } ?? "0" }
        devices = (report["devices"] as? [[String: Any]] ?? []).map { device in
            let notifications = device["notifications"] as? [[String: Any]] ?? []
            let name = device["name"] as? String ?? "(removed)"
            return Device(
                id: device["device_id"] as? String ?? "",
                name: device["status"] as? String == "deleted" ? name + " (deregistered)" : name,
                push: ConsoleText.pushState(device["push"] as? [String: Any]),
                lastSeen: ConsoleTime.text(device["last_seen_at"] as? String),
                notifications: notifications.map { note in
                    let status = note["status"] as? String ?? ""
                    return Notification(
                        kind: note["kind"] as? String ?? "", provider: (note["provider"] as? String ?? "").uppercased(),
                        status: status, attempts: count(note["attempts"]), lastError: note["last_error"] as? String,
                        createdAt: ConsoleTime.text(note["created_at"] as? String), sentAt: ConsoleTime.text(note["sent_at"] as? String),
                        failed: status == "failed")
                },
                hasNotifications: !notifications.isEmpty)
        }
        clientCalls = (report["client_notifications"] as? [[String: Any]] ?? []).map { call in
            let status = call["status"] as? String ?? ""
            return ClientCall(
                kind: call["kind"] as? String ?? "", status: status, attempts: count(call["attempts"]),
                lastError: call["last_error"] as? String ?? call["error"] as? String,
                createdAt: ConsoleTime.text(call["created_at"] as? String), failed: status == "failed")
        }
        hasClientCalls = !clientCalls.isEmpty
    }
}
