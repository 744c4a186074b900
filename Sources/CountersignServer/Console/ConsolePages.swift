import CountersignCore
import Foundation
import HTTPTypes

/// What `console-layout` reads, and every console page's forms and links: each page model
/// stores it once, as `chrome`, and the templates read `{{chrome.base}}`, `{{chrome.csrf}}`.
struct ConsoleChrome: Sendable {
    let tenantName: String
    let base: String
    /// Whether a session shows the page: the navigation, who is signed in and the sign-out.
    let signedIn: Bool
    let username: String
    let csrf: String
    /// The navigation, with the page's own section marked.
    let nav: [ConsoleNavItem]

    init(_ visit: ConsoleFlow.Visit, _ session: ConsoleSession, _ section: ConsoleSection) {
        tenantName = visit.tenant.displayName
        base = visit.base
        signedIn = true
        username = session.username
        csrf = session.csrf
        nav = ConsoleSection.allCases.filter { section in section.right.map { session.role.rights.contains($0) } ?? true }
            .map { ConsoleNavItem(section: $0, base: visit.base, current: $0 == section) }
    }

    /// A page shown without a session: the tenant's name and the way back in only.
    init(signedOutOf tenantName: String, base: String) {
        (self.tenantName, self.base, signedIn, username, csrf, nav) = (tenantName, base, false, "", "", [])
    }
}

/// A console page: its layout reads the chrome.
protocol ConsolePageModel: PageModel {
    var chrome: ConsoleChrome { get }
}

extension ConsolePageModel {
    var tenantName: String { chrome.tenantName }
}

/// The console's sections, in the order of its navigation.
enum ConsoleSection: String, CaseIterable, Sendable {
    case dashboard, users, groups, devices, passkeys, clients
    case radiusClients = "radius-clients"
    case directory, mail, push, policies, audit

    var title: String {
        switch self {
        case .dashboard: "Dashboard"
        case .users: "Users"
        case .groups: "Groups"
        case .devices: "Devices"
        case .passkeys: "Passkeys"
        case .clients: "Clients"
        case .radiusClients: "RADIUS clients"
        case .directory: "Directory"
        case .mail: "Mail"
        case .push: "Push"
        case .policies: "Policies"
        case .audit: "Audit log"
        }
    }

    /// The right a role needs to see the section in the navigation; nil for every role.
    var right: AdminRight? {
        switch self {
        case .directory: .directoryManage
        case .mail: .mailManage
        default: nil
        }
    }

    /// Below `/console`.
    var path: String { self == .dashboard ? "" : "/" + rawValue }
}

/// A link of the navigation.
struct ConsoleNavItem: Sendable {
    let title: String
    let href: String
    let current: Bool

    init(section: ConsoleSection, base: String, current: Bool) {
        title = section.title
        href = base + "/console" + section.path
        self.current = current
    }
}

/// `console-home`.
struct ConsoleHomePage: ConsolePageModel {
    let title = "Dashboard"
    let chrome: ConsoleChrome
    let roleName: String
    let userCount: String
    let charts: [ConsoleChart]

    init(_ chrome: ConsoleChrome, role: ConsoleRole, userCount: String, charts: [ConsoleChart]) {
        self.chrome = chrome
        roleName = role == .systemAdmin ? "system administrator" : "tenant administrator"
        (self.userCount, self.charts) = (userCount, charts)
    }
}

/// A user as the console's lists and pages show them.
struct ConsoleUserRow: Sendable {
    let id: String
    let username: String
    let displayName: String
    let status: String
    let active: Bool
    let createdAt: String
    /// Only while in force (the API keeps a past time).
    let suppressedUntil: String?, totpLockedUntil: String?, userCodeLockedUntil: String?
    let userCodeSet: Bool
    let email: String?
    /// The e-mail address as the page shows it: `—` for none.
    let emailText: String
    /// Who keeps the user: `local`, `scim` or `directory`.
    let source: String

    init(_ object: [String: Any], now: Date) {
        func future(_ key: String) -> String? {
            guard let text = object[key] as? String, let date = Timestamps.parse(text), date > now else { return nil }
            return ConsoleTime.text(date)
        }
        suppressedUntil = future("requests_suppressed_until")
        totpLockedUntil = future("totp_locked_until")
        userCodeLockedUntil = future("user_code_locked_until")
        userCodeSet = object["user_code_set"] as? Bool ?? false
        id = object["id"] as? String ?? ""
        username = object["username"] as? String ?? ""
        displayName = object["display_name"] as? String ?? "—"
        email = object["email"] as? String
        emailText = email ?? "—"
        source = object["source"] as? String ?? "local"
        status = object["status"] as? String ?? ""
        active = status == "active"
        createdAt = ConsoleTime.text(object["created_at"] as? String)
    }
}

/// The create-a-user form as typed, with the message beside each field that was refused.
struct ConsoleUserForm: Sendable {
    var username = ""
    var displayName = ""
    var usernameError: String?
    var displayNameError: String?
    var error: String?
}

/// `console-users`.
struct ConsoleUsersPage: ConsolePageModel {
    let title = "Users"
    let chrome: ConsoleChrome
    let query: String
    let items: [ConsoleUserRow]
    /// The query of the next page, when there is one.
    let next: String?
    // The create form, flat: Mustache does not reach into a nested value here.
    let formUsername: String, formDisplayName: String
    let usernameError: String?, displayNameError: String?, formError: String?

    init(_ chrome: ConsoleChrome, query: String, items: [ConsoleUserRow], next: String?, form: ConsoleUserForm) {
        self.chrome = chrome
        (self.query, self.items, self.next) = (query, items, next)
        (formUsername, formDisplayName) = (form.username, form.displayName)
        (usernameError, displayNameError, formError) = (form.usernameError, form.displayNameError, form.error)
    }
}

struct ConsoleDeviceRow: Sendable {
    let id: String, userID: String, name: String, platform: String, push: String, lastSeen: String, csrf: String
}

struct ConsolePasskeyRow: Sendable {
    let id: String, userID: String, name: String, createdAt: String, lastUsed: String, csrf: String
}

/// One of the user's remembered browsers on the user page.
struct ConsoleRememberedBrowserRow: Sendable {
    let id: String, userID: String, name: String, ipAddress: String, createdAt: String, lastUsed: String, expiresAt: String
}

/// An invitation just made: shown once, since it carries the ticket's secret.
struct ConsoleInvitation: Sendable {
    let invitationURL: String
    let enrollmentURI: String
    let qrPNG: String
    let expiresAt: String
}

/// `console-user`.
struct ConsoleUserPage: ConsolePageModel {
    let title: String
    let chrome: ConsoleChrome
    let user: ConsoleUserRow
    let devices: [ConsoleDeviceRow]
    let passkeys: [ConsolePasskeyRow]
    var invitation: ConsoleInvitation?
    /// The address the invitation just made was mailed to.
    var invitationMailed: String?
    var notice: String?
    var error: String?
    var confirmError: String?
    var resetConfirmError: String?
    var userCodeError: String?
    /// The groups the user is in, by name, each linked to its page.
    let groups: [ConsoleUserGroupLink]
    /// The e-mail form as typed when it was refused, and why.
    var emailTyped: String
    var emailError: String?
    /// The user's console role, if they have one.
    let consoleRole: ConsoleRoleFacts?
    /// The role form's choices, the one in force (or the one just refused) selected.
    private(set) var roleOptions: [ConsoleRoleOption]
    var roleError: String?
    /// Recovery codes and temporary access passes.
    var recovery = ConsoleRecoveryFacts()
    /// The browsers that sign the user in without the phone (`RememberedBrowser`).
    var rememberedBrowsers: [ConsoleRememberedBrowserRow] = []

    init(_ chrome: ConsoleChrome, user: ConsoleUserRow, devices: [ConsoleDeviceRow], passkeys: [ConsolePasskeyRow],
         groups: [ConsoleUserGroupLink], consoleRole: ConsoleRoleFacts?, defaultTenant: Bool) {
        self.chrome = chrome
        title = user.username
        (self.user, self.devices, self.passkeys, self.groups) = (user, devices, passkeys, groups)
        emailTyped = user.email ?? ""
        self.consoleRole = consoleRole
        roleOptions = ConsoleRoleOption.all(defaultTenant: defaultTenant, selected: consoleRole?.role ?? "")
        self.defaultTenant = defaultTenant
    }

    private let defaultTenant: Bool

    /// Selects `role` in the form: what was chosen when the change was refused.
    mutating func choose(_ role: String) {
        roleOptions = ConsoleRoleOption.all(defaultTenant: defaultTenant, selected: role)
    }
}

/// A group the user page lists: its name, linked to its page.
struct ConsoleUserGroupLink: Sendable {
    let id: String, name: String
}

/// A user's console role as the user page states it.
struct ConsoleRoleFacts: Sendable {
    /// `tenant-admin` or `system-admin`.
    let role: String
    let name: String
    let grantedAt: String

    init?(_ object: [String: Any]?) {
        guard let role = object?["role"] as? String else { return nil }
        self.role = role
        name = ConsoleRoleOption.name(of: role)
        grantedAt = ConsoleTime.text(object?["granted_at"] as? String)
    }
}

/// A choice of the user page's role form: no role, or one of `ConsoleRole`. A system
/// administrator is a user of the default tenant only, so other tenants do not offer it.
struct ConsoleRoleOption: Sendable {
    let value: String, label: String, selected: Bool

    static func all(defaultTenant: Bool, selected: String) -> [ConsoleRoleOption] {
        ([""] + ConsoleRole.allCases.filter { defaultTenant || $0 != .systemAdmin }.map(\.rawValue))
            .map { ConsoleRoleOption(value: $0, label: $0.isEmpty ? "No console access" : name(of: $0).capitalizedFirst,
                                     selected: $0 == selected) }
    }

    static func name(of role: String) -> String {
        switch ConsoleRole(rawValue: role) {
        case .tenantAdmin: "tenant administrator"
        case .systemAdmin: "system administrator"
        case nil: role
        }
    }
}

extension String {
    fileprivate var capitalizedFirst: String { prefix(1).uppercased() + dropFirst() }
}

/// `console-message`: why the console cannot be shown, before or without a session.
struct ConsoleMessagePage: ConsolePageModel {
    let title: String
    let chrome: ConsoleChrome
    let heading: String
    let message: String

    init(tenantName: String, base: String, heading: String, message: String) {
        (chrome, self.heading, self.message) = (ConsoleChrome(signedOutOf: tenantName, base: base), heading, message)
        title = heading
    }
}

/// `console-signed-out`.
struct ConsoleSignedOutPage: ConsolePageModel {
    let title = "Signed out"
    let chrome: ConsoleChrome

    init(tenantName: String, base: String) {
        chrome = ConsoleChrome(signedOutOf: tenantName, base: base)
    }
}

/// Times on console pages: `yyyy-MM-dd HH:mm` in UTC, from the API's RFC 3339.
enum ConsoleTime {
    static func text(_ rfc3339: String?) -> String {
        guard let rfc3339, let date = Timestamps.parse(rfc3339) else { return "—" }
        return text(date)
    }

    static func text(_ date: Date) -> String {
        // "2026-11-25T10:00:00Z" → "2026-11-25 10:00 UTC"
        String(Timestamps.format(date).prefix(16)).replacingOccurrences(of: "T", with: " ") + " UTC"
    }
}

struct ConsoleAuditField: Sendable {
    let name: String, label: String, value: String
}

/// One event of the console's audit log: who acted and on what by name, linked to the
/// console's page of the record where it has one, the raw reference kept as the link's title.
struct ConsoleAuditRow: Sendable {
    /// A record an event names, as the log shows it.
    struct Party: Sendable {
        /// The name, or the raw reference when the record has no name (or no longer exists).
        let label: String
        /// What it is (`user`, `phone`, `client`, `admin key`), shown beside a name.
        let kind: String?
        /// The raw reference (`device:dev_…`), for the title.
        let reference: String
        /// Below `/console/`.
        let page: String?

        init(kind: String, id: String, name: String?, userID: String?, reference: String) {
            self.reference = reference
            let encoded = AuthorizationRedirect.encoded(id)
            switch kind {
            case "user": (self.kind, page) = ("user", "users/" + encoded)
            case "client": (self.kind, page) = ("client", "clients/" + encoded)
            case "radius_client": (self.kind, page) = ("RADIUS client", "radius-clients/" + encoded)
            case "group": (self.kind, page) = ("group", "groups/" + encoded)
            case "directory": (self.kind, page) = ("directory", "directory")
            case "device":
                self.kind = "device"
                page = userID.map { "users/" + AuthorizationRedirect.encoded($0) + "#device-" + encoded }
            case "admin_key": (self.kind, page) = ("admin key", nil)
            case "approval" where !id.isEmpty: (self.kind, page) = ("request", "requests/" + encoded)
            default: (self.kind, page) = (kind.isEmpty ? nil : kind.replacingOccurrences(of: "_", with: " "), nil)
            }
            label = name ?? (id.isEmpty ? reference : id)
        }
    }

    struct Detail: Sendable { let name: String, value: String }

    /// When, as `2026-11-25` and `10:00 UTC`: each kept on one line, the time below the date
    /// where the column is narrow.
    let date: String, time: String
    let action: String
    let actor: Party, target: Party
    let details: [Detail]

    init(_ event: [String: Any]) {
        let when = ConsoleTime.text(event["occurred_at"] as? String).split(separator: " ", maxSplits: 1).map(String.init)
        (date, time) = (when.first ?? "—", when.count > 1 ? when[1] : "")
        action = event["action"] as? String ?? ""
        let actor = event["actor"] as? String ?? ""
        let (actorKind, actorID): (String, String) = if let colon = actor.firstIndex(of: ":") {
            (actor[..<colon] == "admin-key" ? "admin_key" : String(actor[..<colon]), String(actor[actor.index(after: colon)...]))
        } else {
            ("", "")
        }
        self.actor = actorID.isEmpty
            ? Party(kind: "", id: "", name: nil, userID: nil, reference: actor)
            : Party(kind: actorKind, id: actorID, name: event["actor_name"] as? String,
                    userID: event["actor_user_id"] as? String, reference: actor)
        let (kind, id) = (event["target_type"] as? String ?? "", event["target_id"] as? String ?? "")
        target = Party(kind: kind, id: id, name: event["target_name"] as? String, userID: event["target_user_id"] as? String,
                       reference: "\(kind):\(id)")
        details = (event["details"] as? [String: Any] ?? [:]).sorted { $0.key < $1.key }
            .map { Detail(name: $0.key, value: "\($0.value)") }
    }
}

/// `console-audit`.
struct ConsoleAuditPage: ConsolePageModel {
    let title = "Audit log"
    let chrome: ConsoleChrome
    let filters: [ConsoleAuditField]
    let since: String, until: String
    let error: String?
    let events: [ConsoleAuditRow]
    let next: String?
    /// The filter as a query, for the export links.
    let exportQuery: String

    init(_ chrome: ConsoleChrome, filters: [ConsoleAuditField], since: String, until: String, error: String?,
         events: [ConsoleAuditRow], next: String?, exportQuery: String) {
        self.chrome = chrome
        (self.filters, self.since, self.until, self.error) = (filters, since, until, error)
        (self.events, self.next, self.exportQuery) = (events, next, exportQuery)
    }
}

/// `console-clients`.
struct ConsoleClientsPage: ConsolePageModel {
    let title = "Clients"
    let chrome: ConsoleChrome
    let items: [ConsoleClientRow]
    let form: ConsoleClientFields

    init(_ chrome: ConsoleChrome, items: [ConsoleClientRow], form: ConsoleClientForm, groups: ConsoleGroupNames) {
        self.chrome = chrome
        self.items = items
        self.form = ConsoleClientFields(form, groups: groups)
    }
}

/// `console-client`: one client, its edit form, and a secret just made (shown once).
struct ConsoleClientPage: ConsolePageModel {
    let title: String
    let chrome: ConsoleChrome
    let client: ConsoleClientRow
    let access: ConsoleClientAccess
    let form: ConsoleClientFields
    let secret: String?
    let notice: String?

    init(_ chrome: ConsoleChrome, client: ConsoleClientRow, access: ConsoleClientAccess, form: ConsoleClientForm,
         groups: ConsoleGroupNames, secret: String?, notice: String?) {
        self.chrome = chrome
        title = client.name
        (self.client, self.access, self.secret, self.notice) = (client, access, secret, notice)
        self.form = ConsoleClientFields(form, groups: groups)
    }
}

/// Who may sign in to a client, as its page states it: groups by name, "(deleted group)" for
/// one deleted since.
struct ConsoleClientAccess: Sendable {
    let directoryPassword: String
    let allowedGroups: String

    init(_ stored: ConsoleClientForm, groups: ConsoleGroupNames) {
        directoryPassword = stored.directoryPassword
            ? "Asked before the push, checked in the tenant's directory" : "Not asked"
        allowedGroups = groups.admitted(stored.allowedGroups)
    }
}

/// The client form as the template reads it: each select's options with the chosen one marked,
/// the tenant's groups as boxes.
struct ConsoleClientFields: Sendable {
    struct Option: Sendable { let value: String, selected: Bool }
    let name: String, notificationEndpoint: String, redirectURIs: String, postLogoutRedirectURIs: String
    let detailTypes: String, jwks: String
    let directoryPassword: Bool
    let deliveryModes: [Option], methods: [Option]
    let groupChoices: [ConsoleGroupChoice]
    /// The tenant has more groups than the boxes list.
    let moreGroups: Bool
    let nameError: String?, deliveryError: String?, endpointError: String?, methodError: String?
    let redirectError: String?, logoutError: String?, detailTypesError: String?, jwksError: String?, error: String?
    let directoryPasswordError: String?, allowedGroupsError: String?

    init(_ form: ConsoleClientForm, groups: ConsoleGroupNames) {
        (name, notificationEndpoint, redirectURIs) = (form.name, form.notificationEndpoint, form.redirectURIs)
        (postLogoutRedirectURIs, detailTypes, jwks) = (form.postLogoutRedirectURIs, form.detailTypes, form.jwks)
        deliveryModes = ["poll", "ping", "push"].map { Option(value: $0, selected: $0 == form.deliveryMode) }
        methods = ["client_secret_basic", "client_secret_post", "private_key_jwt", "none"]
            .map { Option(value: $0, selected: $0 == form.authenticationMethod) }
        (nameError, deliveryError, endpointError, methodError) = (form.nameError, form.deliveryError, form.endpointError, form.methodError)
        (redirectError, logoutError, detailTypesError) = (form.redirectError, form.logoutError, form.detailTypesError)
        (jwksError, error) = (form.jwksError, form.error)
        directoryPassword = form.directoryPassword
        groupChoices = groups.choices(form.allowedGroups)
        moreGroups = groups.truncated
        (directoryPasswordError, allowedGroupsError) = (form.directoryPasswordError, form.allowedGroupsError)
    }
}

/// How console pages put the API's answers into words.
enum ConsoleText {
    /// The field an API refusal names ("field username is invalid: …").
    static func field(of message: String) -> String? {
        guard message.hasPrefix("field ") else { return nil }
        return message.dropFirst(6).split(separator: " ", maxSplits: 1).first.map(String.init)
    }

    /// An API message as a sentence for a page.
    static func sentence(_ message: String) -> String {
        guard let first = message.first else { return message }
        let text = first.uppercased() + message.dropFirst()
        return text.hasSuffix(".") ? text : text + "."
    }

    /// A refused API call answers the page with its status, so a script or a test can tell
    /// success from failure; a server fault or outage stays one.
    static func pageStatus(_ status: HTTPResponse.Status) -> HTTPResponse.Status {
        status.code >= 400 ? status : .badRequest
    }

    static func pushState(_ push: [String: Any]?) -> String {
        guard let push, let platform = push["provider"] as? String else { return "none" }
        return (push["valid"] as? Bool ?? true) ? platform : "\(platform) (invalid)"
    }
}

/// The recovery panel of a user's page: whether they have recovery codes, their temporary
/// access passes, the pass just issued (shown this once), and the issue form as typed.
struct ConsoleRecoveryFacts: Sendable {
    /// "7 of 10 unused, made …", or nil without codes.
    var codesSummary: String?
    var passes: [ConsolePassRow] = []
    var issued: ConsoleIssuedPass?
    var networksTyped = ""
    var networksError: String?
}

/// One temporary access pass in the console.
struct ConsolePassRow: Sendable {
    let id: String
    let userID: String
    let kind: String
    let networks: String?
    let state: String
    let startsAt: String
    let expiresAt: String
    let uses: Int
    let revocable: Bool
    let csrf: String
}

/// A pass just issued: its code, shown once.
struct ConsoleIssuedPass: Sendable {
    let code: String
    let uses: String
    let startsAt: String
    let expiresAt: String
    let recoverURL: String
}
