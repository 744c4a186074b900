import Foundation
import Hummingbird

/// The console's push credentials: which the tenant has and which it sends with, setting an APNs
/// token key (the `.p8` file's text) or an FCM service account (its JSON key file), and removing
/// one. APNs certificates (`.p12`) are set with the API or `countersign admin push` and shown
/// here. Each action is the administration API call of the same name.
struct ConsolePush: Sendable {
    let flow: ConsoleFlow

    typealias Visit = ConsoleFlow.Visit

    func page(_ session: ConsoleSession, _ visit: Visit, form: ConsolePushForm = ConsolePushForm(), notice: String? = nil,
              status: HTTPResponse.Status = .ok) async throws -> Response {
        let answer = try await flow.admin(.get, flow.tenantPath(visit) + "/push-credentials", session: session, visit)
        let items = (answer.json?["items"] as? [[String: Any]] ?? []).map { ConsolePushRow($0) }
        return flow.pages.response(
            "console-push",
            ConsolePushPage(ConsoleChrome(visit, session, .push), items: items, form: form, notice: notice), status: status)
    }

    func setAPNsToken(_ form: FormParameters, _ session: ConsoleSession, _ visit: Visit) async throws -> Response {
        var typed = ConsolePushForm(form)
        var body: [String: any Sendable] = [
            "key_id": typed.keyID, "team_id": typed.teamID, "topic": typed.topic, "private_key": typed.privateKey,
        ]
        if !typed.environment.isEmpty { body["environment"] = typed.environment }
        let answer = try await flow.admin(.put, flow.tenantPath(visit) + "/push-credentials/apns-token", json: body, session: session, visit)
        guard answer.status == .ok || answer.status == .created else {
            typed.refuse(answer, apns: true)
            return try await page(session, visit, form: typed, status: ConsoleText.pageStatus(answer.status))
        }
        return try await page(session, visit, notice: "The APNs token key is set.")
    }

    func setFCM(_ form: FormParameters, _ session: ConsoleSession, _ visit: Visit) async throws -> Response {
        var typed = ConsolePushForm(form)
        let answer = try await flow.admin(
            .put, flow.tenantPath(visit) + "/push-credentials/fcm", json: ["service_account": typed.serviceAccount], session: session, visit)
        guard answer.status == .ok || answer.status == .created else {
            typed.refuse(answer, apns: false)
            return try await page(session, visit, form: typed, status: ConsoleText.pageStatus(answer.status))
        }
        return try await page(session, visit, notice: "The FCM service account is set.")
    }

    /// Removes the credential at `path` below `…/push-credentials` (`apns-token`, `fcm`,
    /// `apns-certificates/<client app key>`).
    func remove(_ path: String, _ session: ConsoleSession, _ visit: Visit) async throws -> Response {
        let answer = try await flow.admin(.delete, flow.tenantPath(visit) + "/push-credentials/" + path, session: session, visit)
        guard answer.status == .noContent else {
            return try await page(session, visit,
                                  notice: ConsoleText.sentence(answer.errorDescription ?? "the credential could not be removed"),
                                  status: ConsoleText.pageStatus(answer.status))
        }
        return try await page(session, visit, notice: "The credential is removed.")
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
            if let value = summary[key] as? String { parts.append("\(label) \(value)") }
        }
        detail = parts.joined(separator: " · ")
        if kind == "apns-certificate", let app = credential["client_app_key"] as? String {
            removal = "apns-certificates/" + AuthorizationRedirect.encoded(app)
        } else {
            removal = kind == "apns-token" ? "apns-token" : "fcm"
        }
    }
}

/// The two forms as typed, with the message beside the field the API refused.
struct ConsolePushForm: Sendable {
    var keyID = "", teamID = "", topic = "", environment = "production", privateKey = "", serviceAccount = ""
    var keyIDError: String?, teamIDError: String?, topicError: String?, privateKeyError: String?, apnsError: String?
    var serviceAccountError: String?

    init() {}

    init(_ form: FormParameters) {
        keyID = form["key_id"] ?? ""
        teamID = form["team_id"] ?? ""
        topic = form["topic"] ?? ""
        environment = form["environment"] ?? "production"
        privateKey = form["private_key"] ?? ""
        serviceAccount = form["service_account"] ?? ""
    }

    mutating func refuse(_ answer: InProcessRouter.Answer, apns: Bool) {
        let message = answer.errorDescription ?? "the credential could not be set"
        let sentence = ConsoleText.sentence(message)
        guard apns else { serviceAccountError = sentence; return }
        switch ConsoleText.field(of: message) {
        case "key_id": keyIDError = sentence
        case "team_id": teamIDError = sentence
        case "topic": topicError = sentence
        case "private_key": privateKeyError = sentence
        default: apnsError = sentence
        }
    }
}

/// `console-push`.
struct ConsolePushPage: PageModel {
    let title = "Push credentials"
    let tenantName: String, base: String, username: String, csrf: String
    let signedIn = true
    let nav: [ConsoleNavItem]
    let items: [ConsolePushRow]
    let form: ConsolePushForm
    let sandbox: Bool
    let notice: String?

    init(_ chrome: ConsoleChrome, items: [ConsolePushRow], form: ConsolePushForm, notice: String?) {
        (tenantName, base, username, csrf) = (chrome.tenantName, chrome.base, chrome.username, chrome.csrf)
        nav = chrome.nav
        (self.items, self.form, self.notice) = (items, form, notice)
        sandbox = form.environment == "sandbox"
    }
}
