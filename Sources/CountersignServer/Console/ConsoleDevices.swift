import Foundation
import HTTPTypes

/// The console's devices: every active device of the tenant, filtered by the state of its push
/// channel, with its user, factors and when it was last seen; and deregistering one. The list is
/// `GET …/devices` of the administration API, deregistering `DELETE …/devices/{id}`.
struct ConsoleDevices: Sendable {
    let flow: ConsoleFlow

    typealias Visit = ConsoleFlow.Visit

    func list(query: FormParameters, _ session: ConsoleSession, _ visit: Visit) async throws -> PageAnswer {
        // An unknown filter is shown as "all" rather than refused: the select offers only these.
        try await list(push: query["push"].flatMap(DevicePushState.init(rawValue:)), cursor: query["cursor"], session, visit)
    }

    private func list(push: DevicePushState?, cursor: String? = nil, _ session: ConsoleSession, _ visit: Visit,
                      notice: String? = nil, error: String? = nil, status: HTTPResponse.Status = .ok) async throws -> PageAnswer {
        var path = flow.tenantPath(visit) + "/devices?limit=50"
        if let push { path += "&push=" + push.rawValue }
        if let cursor { path += "&cursor=" + AuthorizationRedirect.encoded(cursor) }
        let answer = try await flow.admin(.get, path, session: session, visit)
        var failure = error
        if answer.status != .ok {
            failure = failure ?? ConsoleText.sentence(answer.errorDescription ?? "the devices could not be listed")
        }
        let items = (answer.json?["items"] as? [[String: Any]] ?? []).map { ConsoleTenantDeviceRow($0, csrf: session.csrf) }
        let next = (answer.json?["next_cursor"] as? String).map { cursor in
            (push.map { "push=\($0.rawValue)&" } ?? "") + "cursor=\(AuthorizationRedirect.encoded(cursor))"
        }
        return .page(
            "console-devices",
            ConsoleDevicesPage(ConsoleChrome(visit, session, .devices), push: push, items: items, next: next, notice: notice,
                               error: failure),
            status: answer.status == .ok ? status : ConsoleText.pageStatus(answer.status))
    }

    func remove(deviceID: String, _ form: FormParameters, _ session: ConsoleSession, _ visit: Visit) async throws -> PageAnswer {
        let answer = try await flow.admin(
            .delete, flow.tenantPath(visit) + "/devices/" + AuthorizationRedirect.encoded(deviceID), session: session, visit)
        // Back to the list as it was filtered.
        let push = form["push"].flatMap(DevicePushState.init(rawValue:))
        guard answer.status == .noContent else {
            return try await list(
                push: push, session, visit,
                error: ConsoleText.sentence(answer.errorDescription ?? "the device could not be deregistered"),
                status: ConsoleText.pageStatus(answer.status))
        }
        return try await list(push: push, session, visit, notice: "The device is deregistered.")
    }
}

/// A device as the tenant-wide list shows it.
struct ConsoleTenantDeviceRow: Sendable {
    let id: String, userID: String, userName: String, name: String, platform: String
    let push: String, pushProblem: String?, factors: String, lastSeen: String, enrolled: String, csrf: String

    init(_ device: [String: Any], csrf: String) {
        id = device["id"] as? String ?? ""
        userID = device["user_id"] as? String ?? ""
        userName = device["username"] as? String ?? userID
        name = device["name"] as? String ?? ""
        platform = device["platform"] as? String ?? "—"
        let channel = device["push"] as? [String: Any]
        if let channel, let provider = channel["provider"] as? String {
            let suffix = (channel["token_suffix"] as? String).map { " …\($0)" } ?? ""
            push = provider.uppercased() + suffix
            pushProblem = (channel["valid"] as? Bool ?? true)
                ? nil : "refused" + ((channel["error"] as? String).map { ": \($0)" } ?? "")
        } else {
            (push, pushProblem) = ("not registered", nil)
        }
        let held = device["factors"] as? [String: Any] ?? [:]
        let names = [("pin", "PIN"), ("biometric", "biometric"), ("totp", "TOTP")]
            .filter { held[$0.0] as? Bool == true }.map(\.1)
        factors = names.isEmpty ? "device key" : (["device key"] + names).joined(separator: ", ")
        lastSeen = ConsoleTime.text(device["last_seen_at"] as? String)
        enrolled = ConsoleTime.text(device["created_at"] as? String)
        self.csrf = csrf
    }
}

/// `console-devices`.
struct ConsoleDevicesPage: ConsolePageModel {
    struct Filter: Sendable { let value: String, label: String, selected: Bool }

    let title = "Devices"
    let chrome: ConsoleChrome
    let filters: [Filter]
    /// The filter in force, posted back by each deregister form.
    let pushFilter: String
    let filtered: Bool
    let items: [ConsoleTenantDeviceRow]
    let next: String?
    let notice: String?, error: String?

    init(_ chrome: ConsoleChrome, push: DevicePushState?, items: [ConsoleTenantDeviceRow], next: String?, notice: String?,
         error: String?) {
        self.chrome = chrome
        filters = [("", "All devices"), ("valid", "Push working"), ("invalid", "Push refused"), ("none", "No push")]
            .map { Filter(value: $0.0, label: $0.1, selected: $0.0 == (push?.rawValue ?? "")) }
        pushFilter = push?.rawValue ?? ""
        filtered = push != nil
        (self.items, self.next, self.notice, self.error) = (items, next, notice, error)
    }
}
