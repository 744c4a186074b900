import Foundation
import HTTPTypes

/// The console's policies: how the tenant's users approve (the authentication policy: acr
/// classes, PIN attempts and fallbacks, request limits, suppression after "I did not request
/// this", sessions), and its webhooks (the events webhook with its recent deliveries, and the
/// custom-factor verifier). Saving the policy is `PUT …/authentication-policy` with every field
/// of the form, the passkey settings sent back as they are; a webhook is set, given a new secret
/// (shown once) or removed with `PUT|DELETE …/webhooks/{purpose}`. The floors of groups
/// (`group_minimum_acr`) are lines of `GROUP: class`, groups by name (`ConsoleGroupNames`).
struct ConsolePolicies: Sendable {
    let flow: ConsoleFlow

    typealias Visit = ConsoleFlow.Visit

    func page(_ session: ConsoleSession, _ visit: Visit, policy typed: ConsolePolicyForm? = nil,
              webhook: ConsoleWebhookForm? = nil, secret: (purpose: String, value: String)? = nil,
              notice: String? = nil, error: String? = nil, status: HTTPResponse.Status = .ok) async throws -> PageAnswer {
        let base = flow.tenantPath(visit)
        let stored = try await flow.admin(.get, base + "/authentication-policy", session: session, visit)
        guard stored.status == .ok, let policy = stored.json else {
            throw ConsoleRefusal(status: ConsoleText.pageStatus(stored.status), heading: "Policies not shown",
                                 message: ConsoleText.sentence(stored.errorDescription ?? "the policy could not be read"))
        }
        let hooks = try await flow.admin(.get, base + "/webhooks", session: session, visit)
        var failure = error
        if hooks.status != .ok {
            failure = failure ?? ConsoleText.sentence(hooks.errorDescription ?? "the webhooks could not be read")
        }
        let set = Dictionary(
            (hooks.json?["items"] as? [[String: Any]] ?? []).compactMap { hook in
                (hook["purpose"] as? String).map { ($0, hook) }
            }) { first, _ in first }
        let deliveries = set["events"] == nil
            ? nil : try await flow.admin(.get, base + "/webhooks/events/deliveries?limit=20", session: session, visit)
        let floors = ConsolePolicyForm.floors(policy)
        let groups = try await ConsoleGroupNames.load(naming: floors.map(\.group), flow, session, visit)
        let webhooks = ConsoleWebhookForm.purposes.map { purpose, title, explanation in
            var form = webhook?.purpose == purpose ? webhook! : ConsoleWebhookForm(purpose: purpose, url: set[purpose]?["url"] as? String ?? "")
            form.title = title
            form.explanation = explanation
            form.isSet = set[purpose] != nil
            form.updatedAt = set[purpose].map { ConsoleTime.text($0["updated_at"] as? String) }
            if secret?.purpose == purpose { form.secret = secret?.value }
            return form
        }
        return .page(
            "console-policies",
            ConsolePoliciesPage(
                ConsoleChrome(visit, session, .policies), policy: typed ?? ConsolePolicyForm(policy, groups: groups),
                riskRules: ConsoleRiskRule.rules(of: policy), riskDryRun: policy["risk_mode"] as? String == "dry_run",
                webhooks: webhooks,
                deliveries: (deliveries?.json?["items"] as? [[String: Any]] ?? []).map(ConsoleWebhookDelivery.init),
                notice: notice, error: failure),
            status: status)
    }

    func savePolicy(_ form: FormParameters, _ session: ConsoleSession, _ visit: Visit) async throws -> PageAnswer {
        var typed = ConsolePolicyForm(form)
        guard let body = typed.body() else {
            return try await page(session, visit, policy: typed, status: .badRequest)
        }
        let path = flow.tenantPath(visit) + "/authentication-policy"
        // The API replaces the whole policy: what this form does not show (the passkey settings,
        // the authenticator alternatives, disabled factors, post-quantum sealing, …) is sent back
        // as stored, and what it shows is as typed (a member left empty takes its default).
        let stored = try await flow.admin(.get, path, session: session, visit)
        guard stored.status == .ok, var json = stored.json else {
            typed.refuse(stored.errorDescription ?? "the stored policy could not be read, so nothing was saved")
            return try await page(session, visit, policy: typed, status: ConsoleText.pageStatus(stored.status))
        }
        for name in typed.fieldNames { json[name] = nil }
        json.merge(body) { _, typed in typed }
        // The group floors as the form has them when they were changed there; else as stored,
        // less those of groups deleted since: they applied to nobody, and the API refuses an id
        // of no group as it would a name.
        let floors = ConsolePolicyForm.floors(json)
        let groups = try await ConsoleGroupNames.load(naming: floors.map(\.group), flow, session, visit)
        let shown = ConsolePolicyForm.floorLines(json, groups: groups)
        if !typed.showsGroupFloors { typed.groupFloors = shown }
        if typed.showsGroupFloors && ConsolePolicyForm.groupLines(typed.groupFloors) != ConsolePolicyForm.groupLines(shown) {
            guard let typedFloors = typed.floorsBody(leavingOut: groups.deleted) else {
                return try await page(session, visit, policy: typed, status: .badRequest)
            }
            json["group_minimum_acr"] = typedFloors
        } else {
            json["group_minimum_acr"] = floors.filter { !groups.deleted.contains($0.group) }.map(\.json)
        }
        let answer = try await flow.admin(
            .put, path, body: try JSONSerialization.data(withJSONObject: json, options: [.sortedKeys]), session: session, visit)
        guard answer.status == .ok else {
            typed.refuse(answer.errorDescription ?? "the policy could not be saved")
            return try await page(session, visit, policy: typed, status: ConsoleText.pageStatus(answer.status))
        }
        return try await page(session, visit, notice: "The policy is saved.")
    }

    func setWebhook(_ purpose: String, _ form: FormParameters, rotate: Bool, _ session: ConsoleSession,
                    _ visit: Visit) async throws -> PageAnswer {
        guard ConsoleWebhookForm.purposes.contains(where: { $0.0 == purpose }) else {
            throw ConsoleRefusal(status: .notFound, heading: "No such webhook",
                                 message: "A webhook is for events or for the custom verifier.")
        }
        var typed = ConsoleWebhookForm(purpose: purpose, url: form["url"]?.trimmingCharacters(in: .whitespaces) ?? "")
        var json: [String: any Sendable] = ["url": typed.url]
        if rotate { json["rotate_secret"] = true }
        let answer = try await flow.admin(
            .put, flow.tenantPath(visit) + "/webhooks/" + purpose, json: json, session: session, visit)
        guard answer.status == .ok || answer.status == .created else {
            typed.urlError = ConsoleText.sentence(answer.errorDescription ?? "the webhook could not be set")
            return try await page(session, visit, webhook: typed, status: ConsoleText.pageStatus(answer.status))
        }
        let secret = (answer.json?["secret"] as? String).map { (purpose, $0) }
        let notice = answer.status == .created ? "The webhook is set." : rotate ? "The webhook has a new secret." : "The webhook is saved."
        return try await page(session, visit, secret: secret, notice: notice)
    }

    func removeWebhook(_ purpose: String, _ session: ConsoleSession, _ visit: Visit) async throws -> PageAnswer {
        guard ConsoleWebhookForm.purposes.contains(where: { $0.0 == purpose }) else {
            throw ConsoleRefusal(status: .notFound, heading: "No such webhook",
                                 message: "A webhook is for events or for the custom verifier.")
        }
        let answer = try await flow.admin(.delete, flow.tenantPath(visit) + "/webhooks/" + purpose, session: session, visit)
        guard answer.status == .noContent else {
            return try await page(session, visit,
                                  error: ConsoleText.sentence(answer.errorDescription ?? "the webhook could not be removed"),
                                  status: ConsoleText.pageStatus(answer.status))
        }
        return try await page(session, visit, notice: "The webhook is removed.")
    }
}

/// The authentication policy's form as stored or as typed, with the message beside the field
/// the API refused. Fields are lists the template walks: selects, numbers, switches.
struct ConsolePolicyForm: Sendable {
    struct Option: Sendable { let value: String, label: String, selected: Bool }
    struct Select: Sendable {
        let name: String, label: String, hint: String
        var value: String {
            didSet { options = ConsolePolicyForm.classes.map { Option(value: $0.0, label: $0.1, selected: $0.0 == value) } }
        }
        var selectError: String?
        /// Stored, for the template: the classes with the value selected.
        private(set) var options: [Option]

        init(name: String, label: String, hint: String) {
            (self.name, self.label, self.hint) = (name, label, hint)
            value = ""
            options = ConsolePolicyForm.classes.map { Option(value: $0.0, label: $0.1, selected: $0.0.isEmpty) }
        }
    }
    struct Number: Sendable {
        let name: String, label: String, hint: String
        var value: String
        var numberError: String?
    }
    struct Switch: Sendable {
        let name: String, label: String
        var on: Bool
    }

    static let classes = [
        ("", "None"), ("urn:countersign:acr:confirm", "Confirm"), ("urn:countersign:acr:number-match", "Number match"),
        ("urn:countersign:acr:pin", "PIN"), ("urn:countersign:acr:biometric", "Biometric"), ("urn:countersign:acr:custom", "Custom factor"),
    ]

    var selects = [
        Select(name: "default_acr", label: "Default class",
               hint: "What a request without acr_values asks for; none: a confirmation."),
        Select(name: "minimum_acr", label: "Minimum class", hint: "No request is approved with less; none: no floor."),
    ]
    var numbers = [
        Number(name: "pin_attempt_limit", label: "Wrong PINs before the device is removed", hint: "1 to 10; default 3.", value: ""),
        Number(name: "user_requests_per_minute", label: "Requests per user per minute",
               hint: "0 for no limit, up to 1000; default 5.", value: ""),
        Number(name: "client_requests_per_minute", label: "Requests per client per minute",
               hint: "0 for no limit, up to 1,000,000; default 600.", value: ""),
        Number(name: "not_requested_suppression_seconds", label: "Pause after “I did not request this” (seconds)",
               hint: "0 to 86400; default 900.", value: ""),
        Number(name: "session_idle_seconds", label: "Sign-in session idle time (seconds)",
               hint: "60 to 86400, at most the maximum age; default 1800.", value: ""),
        Number(name: "session_max_age_seconds", label: "Sign-in session maximum age (seconds)",
               hint: "300 to 2592000; default 43200.", value: ""),
        Number(name: "client_assertion_max_lifetime_seconds", label: "Longest client assertion (private_key_jwt, seconds)",
               hint: "60 to 86400; default 300.", value: ""),
        Number(name: "remembered_browser_days", label: "Remember a browser for (days)",
               hint: "0 (never) to 90, unless a client says; default 0. A remembered browser skips the push for what its phone approval answers.",
               value: ""),
    ]
    var switches = [
        Switch(name: "biometric_pin_fallback", label: "A PIN may stand in for a biometric check", on: true),
        Switch(name: "custom_pin_fallback", label: "A PIN may stand in for the custom factor", on: true),
        Switch(name: "number_match_choices", label: "Number match offers choices on the phone", on: true),
        Switch(name: "totp", label: "One-time codes (TOTP) are accepted", on: true),
        Switch(name: "push_delivery_allowed", label: "Clients may use CIBA push delivery", on: true),
    ]
    /// `GROUP: class` lines, the class without `urn:countersign:acr:`.
    var groupFloors = ""
    var groupFloorsError: String?
    /// Whether the form posted had the group floors' field (`group_minimum_acr_shown`): one
    /// that did not leaves them as they are.
    var showsGroupFloors = true
    var error: String?

    /// One group's floor as the API answers it.
    struct Floor: Sendable {
        let group: String, minimumAcr: String
        var json: [String: any Sendable] { ["group": group, "minimum_acr": minimumAcr] }
    }

    static func floors(_ policy: [String: Any]) -> [Floor] {
        (policy["group_minimum_acr"] as? [[String: Any]] ?? []).map {
            Floor(group: $0["group"] as? String ?? "", minimumAcr: $0["minimum_acr"] as? String ?? "")
        }
    }

    /// The classes a floor line names, as `AuthenticationClass` spells them after its prefix.
    static let floorClasses = AuthenticationClass.all.map { String($0.urn.dropFirst(AuthenticationClass.prefix.count)) }

    /// The policy as the API answers it, its groups named by `groups`.
    init(_ policy: [String: Any], groups: ConsoleGroupNames) {
        for index in selects.indices { selects[index].value = policy[selects[index].name] as? String ?? "" }
        for index in numbers.indices {
            numbers[index].value = (policy[numbers[index].name] as? NSNumber).map { String($0.int64Value) } ?? ""
        }
        for index in switches.indices { switches[index].on = policy[switches[index].name] as? Bool ?? true }
        groupFloors = Self.floorLines(policy, groups: groups)
    }

    /// The policy's group floors as the form shows them.
    static func floorLines(_ policy: [String: Any], groups: ConsoleGroupNames) -> String {
        floors(policy).map { floor in
            let urn = floor.minimumAcr
            let name = urn.hasPrefix(AuthenticationClass.prefix) ? String(urn.dropFirst(AuthenticationClass.prefix.count)) : urn
            return ConsoleGroupLine(group: groups.reference(to: floor.group), rest: name).text
        }.joined(separator: "\n")
    }

    /// The policy as typed: a switch left out is off.
    init(_ form: FormParameters) {
        for index in selects.indices { selects[index].value = form[selects[index].name] ?? "" }
        for index in numbers.indices { numbers[index].value = form[numbers[index].name]?.trimmingCharacters(in: .whitespaces) ?? "" }
        for index in switches.indices { switches[index].on = form[switches[index].name] == "on" }
        groupFloors = form["group_minimum_acr"] ?? ""
        showsGroupFloors = form["group_minimum_acr_shown"] == "yes"
    }

    /// A textarea's lines, each read as `GROUP: rest` (nil where it cannot be).
    static func groupLines(_ text: String) -> [ConsoleGroupLine?] {
        ConsoleClientForm.lines(text).map { ConsoleGroupLine($0) }
    }

    /// `group_minimum_acr` as typed, each class as its URN, groups as named (the API resolves
    /// them, and refuses a name of no group or a class it does not know beside the field), less
    /// the lines of the groups `deleted` since (shown by id); nil, with the field marked, for a
    /// line that is not `GROUP: class`.
    mutating func floorsBody(leavingOut deleted: Set<String>) -> [[String: any Sendable]]? {
        var floors: [[String: any Sendable]] = []
        for line in Self.groupLines(groupFloors) {
            guard let line else {
                groupFloorsError = "Write each line as GROUP: class, for example staff: pin."
                return nil
            }
            guard !deleted.contains(line.group) else { continue }
            floors.append(Floor(group: line.group, minimumAcr: AuthenticationClass.prefix + line.rest).json)
        }
        return floors
    }

    /// The body of `PUT …/authentication-policy`; nil, with the fields marked, when a number is
    /// not a whole number. An empty number or class takes its default.
    /// The policy members this form shows.
    var fieldNames: [String] { selects.map(\.name) + numbers.map(\.name) + switches.map(\.name) }

    mutating func body() -> [String: Any]? {
        var body: [String: Any] = [:]
        for select in selects where !select.value.isEmpty { body[select.name] = select.value }
        var typedWell = true
        for index in numbers.indices where !numbers[index].value.isEmpty {
            let text = numbers[index].value
            guard text.utf8.allSatisfy({ (0x30...0x39).contains($0) }), text.count <= 12, let number = Int64(text) else {
                numbers[index].numberError = "Enter a whole number, or leave it empty for the default."
                typedWell = false
                continue
            }
            body[numbers[index].name] = number
        }
        for flag in switches { body[flag.name] = flag.on }
        return typedWell ? body : nil
    }

    /// Puts the API's refusal beside the field it names, or above the form.
    mutating func refuse(_ message: String) {
        let sentence = ConsoleText.sentence(message)
        let field = ConsoleText.field(of: message)
        if let index = numbers.firstIndex(where: { $0.name == field }) {
            numbers[index].numberError = sentence
        } else if let index = selects.firstIndex(where: { $0.name == field }) {
            selects[index].selectError = sentence
        } else if field == "group_minimum_acr" {
            groupFloorsError = sentence
        } else {
            error = sentence
        }
    }
}

/// One webhook's form: where it is sent, whether it is set, and its secret just made (shown once).
struct ConsoleWebhookForm: Sendable {
    static let purposes = [
        ("events", "Events", "Countersign posts every approval, denial and “I did not request this” here, signed with the secret."),
        ("custom-verifier", "Custom factor verifier", "Countersign asks this URL to check a custom factor's proof before accepting an approval."),
    ]

    let purpose: String
    var url: String
    var urlError: String?
    var title = "", explanation = ""
    var isSet = false
    var updatedAt: String?
    var secret: String?

    init(purpose: String, url: String) {
        (self.purpose, self.url) = (purpose, url)
    }
}

/// A recent event sent to the events webhook.
struct ConsoleWebhookDelivery: Sendable {
    let id: String, event: String, status: String, attempts: String, lastError: String?, createdAt: String
    let failed: Bool

    init(_ delivery: [String: Any]) {
        id = delivery["id"] as? String ?? ""
        event = delivery["event"] as? String ?? ""
        status = delivery["status"] as? String ?? ""
        attempts = (delivery["attempts"] as? NSNumber).map { String($0.intValue) } ?? "0"
        lastError = delivery["last_error"] as? String
        createdAt = ConsoleTime.text(delivery["created_at"] as? String)
        failed = status == "failed"
    }
}

/// `console-policies`.
struct ConsolePoliciesPage: ConsolePageModel {
    let title = "Policies"
    let chrome: ConsoleChrome
    let selects: [ConsolePolicyForm.Select], numbers: [ConsolePolicyForm.Number], switches: [ConsolePolicyForm.Switch]
    let groupFloors: String, groupFloorsError: String?
    /// The classes a floor line may name, for the hint.
    let floorClasses = ConsolePolicyForm.floorClasses.joined(separator: ", ")
    let policyError: String?
    let webhooks: [ConsoleWebhookForm]
    let deliveries: [ConsoleWebhookDelivery]
    let notice: String?, error: String?
    /// The tenant's risk rules, in order, as words; shown, not edited here.
    let riskRules: [ConsoleRiskRule]
    let hasRiskRules: Bool
    let riskDryRun: Bool

    init(_ chrome: ConsoleChrome, policy: ConsolePolicyForm, riskRules: [ConsoleRiskRule], riskDryRun: Bool,
         webhooks: [ConsoleWebhookForm], deliveries: [ConsoleWebhookDelivery], notice: String?, error: String?) {
        self.chrome = chrome
        (self.riskRules, self.hasRiskRules, self.riskDryRun) = (riskRules, !riskRules.isEmpty, riskDryRun)
        (selects, numbers, switches, policyError) = (policy.selects, policy.numbers, policy.switches, policy.error)
        (groupFloors, groupFloorsError) = (policy.groupFloors, policy.groupFloorsError)
        (self.webhooks, self.deliveries, self.notice, self.error) = (webhooks, deliveries, notice, error)
    }
}

/// One risk rule as the console's Policies page lists it (docs/risk.md): its name, when it
/// fires and what it does, in words.
struct ConsoleRiskRule: Sendable {
    let name: String
    let condition: String
    let action: String

    static func rules(of policy: [String: Any]) -> [ConsoleRiskRule] {
        (policy["risk_rules"] as? [[String: Any]] ?? []).map(ConsoleRiskRule.init)
    }

    init(_ rule: [String: Any]) {
        name = rule["name"] as? String ?? ""
        func number(_ key: String) -> String { (rule[key] as? Int).map(String.init) ?? "?" }
        func list(_ key: String) -> String { (rule[key] as? [String] ?? []).joined(separator: ", ") }
        condition = switch rule["signal"] as? String {
        case "new_network": "a network the user approved no request from in \(number("days")) days"
        case "new_user_agent": "a browser the user approved no request from in \(number("days")) days"
        case "idle_device": "no phone of the user heard from in \(number("days")) days"
        case "recent_denials": "\(number("count")) or more denied requests in the last hour"
        case "request_burst": "\(number("count")) or more requests in \(number("minutes")) minutes"
        case "client": "a request from \(list("clients"))"
        case "acr": "a request asking for \(list("acr"))"
        case "time_of_day":
            "outside \(rule["from"] as? String ?? "?")–\(rule["to"] as? String ?? "?") \(rule["zone"] as? String ?? "")"
        case let other: other ?? "?"
        }
        action = switch rule["action"] as? String {
        case "number_match": "requires number matching"
        case "biometric": "requires a biometric check"
        case "deny": "refuses the request"
        case "notify": "records it"
        case "passkey": "asks for a passkey"
        case let other: other ?? "?"
        }
    }
}
