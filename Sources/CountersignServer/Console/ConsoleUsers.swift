import Foundation
import HTTPTypes

/// The console's users: list and search, create, show with devices and passkeys, disable or
/// enable, delete, invite (an enrollment ticket as a link and QR code), deregister a device,
/// remove a passkey. Each action is the administration API call of the same name
/// (`ConsoleFlow.admin`); a refusal is shown beside the field it names, or above the form, and
/// changes nothing.
struct ConsoleUsers: Sendable {
    let flow: ConsoleFlow

    typealias Visit = ConsoleFlow.Visit

    func home(_ session: ConsoleSession, _ visit: Visit) async throws -> PageAnswer {
        let page = try await flow.admin(.get, flow.tenantPath(visit) + "/users?limit=200", session: session, visit)
        let count = (page.json?["items"] as? [Any])?.count ?? 0
        let shown = page.json?["next_cursor"] is String ? "200+" : String(count)
        let statistics = try await flow.admin(.get, flow.tenantPath(visit) + "/statistics?hours=24", session: session, visit)
        return .page(
            "console-home",
            ConsoleHomePage(ConsoleChrome(visit, session, .dashboard), role: session.role, userCount: shown,
                            charts: ConsoleChart.charts(statistics.status == .ok ? statistics.json : nil)))
    }

    func list(query: FormParameters?, _ session: ConsoleSession, _ visit: Visit, form: ConsoleUserForm = ConsoleUserForm(),
              status: HTTPResponse.Status = .ok) async throws -> PageAnswer {
        let search = query?["q"]?.trimmingCharacters(in: .whitespaces) ?? ""
        var path = flow.tenantPath(visit) + "/users?limit=50"
        if !search.isEmpty { path += "&q=" + AuthorizationRedirect.encoded(search) }
        if let cursor = query?["cursor"] { path += "&cursor=" + AuthorizationRedirect.encoded(cursor) }
        let answer = try await flow.admin(.get, path, session: session, visit)
        let items = (answer.json?["items"] as? [[String: Any]] ?? []).map { ConsoleUserRow($0, now: flow.now()) }
        let next = (answer.json?["next_cursor"] as? String).map { cursor in
            (search.isEmpty ? "" : "q=\(AuthorizationRedirect.encoded(search))&") + "cursor=\(AuthorizationRedirect.encoded(cursor))"
        }
        return .page(
            "console-users",
            ConsoleUsersPage(ConsoleChrome(visit, session, .users), query: search, items: answer.status == .ok ? items : [],
                             next: next, form: form),
            status: status)
    }

    func create(_ form: FormParameters, _ session: ConsoleSession, _ visit: Visit) async throws -> PageAnswer {
        var typed = ConsoleUserForm(username: form["username"] ?? "", displayName: form["display_name"] ?? "")
        var json: [String: any Sendable] = ["username": typed.username]
        if !typed.displayName.isEmpty { json["display_name"] = typed.displayName }
        let answer = try await flow.admin(.post, flow.tenantPath(visit) + "/users", json: json, session: session, visit)
        guard answer.status == .created, let id = answer.json?["id"] as? String else {
            let message = answer.errorDescription ?? "the user could not be created"
            switch ConsoleText.field(of: message) {
            case "username": typed.usernameError = ConsoleText.sentence(message)
            case "display_name": typed.displayNameError = ConsoleText.sentence(message)
            default: typed.error = ConsoleText.sentence(message)
            }
            return try await list(query: nil, session, visit, form: typed, status: ConsoleText.pageStatus(answer.status))
        }
        return .redirect(to: "\(visit.base)/console/users/\(id)")
    }

    func show(userID: String, _ session: ConsoleSession, _ visit: Visit, _ adjust: (inout ConsoleUserPage) -> Void = { _ in },
              status: HTTPResponse.Status = .ok) async throws -> PageAnswer {
        let userPath = flow.tenantPath(visit) + "/users/" + AuthorizationRedirect.encoded(userID)
        let found = try await flow.admin(.get, userPath, session: session, visit)
        guard found.status == .ok, let object = found.json else {
            throw ConsoleRefusal(status: ConsoleText.pageStatus(found.status), heading: "User not shown",
                                 message: ConsoleText.sentence(found.errorDescription ?? "the user was not found"))
        }
        let devices = try await flow.admin(.get, userPath + "/devices?limit=200", session: session, visit)
        let passkeys = try await flow.admin(.get, userPath + "/passkeys", session: session, visit)
        let role = try await flow.admin(.get, userPath + "/console-role", session: session, visit)
        let groups = try await flow.admin(.get, userPath + "/groups", session: session, visit)
        let user = ConsoleUserRow(object, now: flow.now())
        var page = ConsoleUserPage(
            ConsoleChrome(visit, session, .users), user: user,
            devices: (devices.json?["items"] as? [[String: Any]] ?? []).map { device in
                ConsoleDeviceRow(
                    id: device["id"] as? String ?? "", userID: user.id, name: device["name"] as? String ?? "",
                    platform: device["platform"] as? String ?? "—",
                    push: ConsoleText.pushState(device["push"] as? [String: Any]),
                    lastSeen: ConsoleTime.text(device["last_seen_at"] as? String), csrf: session.csrf)
            },
            passkeys: (passkeys.json?["items"] as? [[String: Any]] ?? []).map { passkey in
                ConsolePasskeyRow(
                    id: passkey["id"] as? String ?? "", userID: user.id, name: passkey["name"] as? String ?? "",
                    createdAt: ConsoleTime.text(passkey["created_at"] as? String),
                    lastUsed: ConsoleTime.text(passkey["last_used_at"] as? String), csrf: session.csrf)
            },
            groups: (groups.json?["items"] as? [[String: Any]] ?? []).map { group in
                ConsoleUserGroupLink(id: group["id"] as? String ?? "", name: group["name"] as? String ?? "")
            },
            consoleRole: role.status == .ok ? ConsoleRoleFacts(role.json) : nil, defaultTenant: visit.tenant.isDefault)
        let browsers = try await flow.admin(.get, userPath + "/remembered-browsers", session: session, visit)
        page.rememberedBrowsers = (browsers.json?["items"] as? [[String: Any]] ?? []).map { browser in
            ConsoleRememberedBrowserRow(
                id: browser["id"] as? String ?? "", userID: user.id,
                name: (browser["user_agent"] as? String).flatMap(BrowserName.describe) ?? "A browser",
                ipAddress: browser["ip_address"] as? String ?? "—", createdAt: ConsoleTime.text(browser["created_at"] as? String),
                lastUsed: ConsoleTime.text(browser["last_used_at"] as? String),
                expiresAt: ConsoleTime.text(browser["expires_at"] as? String))
        }
        let codes = try await flow.admin(.get, userPath + "/recovery-codes", session: session, visit)
        if let codes = codes.json, codes["exists"] as? Bool == true {
            page.recovery.codesSummary = "\(codes["remaining"] as? Int ?? 0) of \(codes["total"] as? Int ?? 0) unused, made "
                + ConsoleTime.text(codes["created_at"] as? String)
        }
        let passes = try await flow.admin(.get, userPath + "/temporary-access-passes", session: session, visit)
        page.recovery.passes = (passes.json?["items"] as? [[String: Any]] ?? []).map { pass in
            let state = pass["state"] as? String ?? ""
            let networks = (pass["allowed_networks"] as? [String] ?? []).joined(separator: ", ")
            return ConsolePassRow(
                id: pass["id"] as? String ?? "", userID: user.id,
                kind: pass["one_time"] as? Bool == false ? "Reusable" : "One-time", networks: networks.isEmpty ? nil : networks,
                state: state, startsAt: ConsoleTime.text(pass["starts_at"] as? String),
                expiresAt: ConsoleTime.text(pass["expires_at"] as? String), uses: pass["uses"] as? Int ?? 0,
                revocable: state == "active" || state == "scheduled", csrf: session.csrf)
        }
        adjust(&page)
        return .page("console-user", page, status: status)
    }

    func setStatus(userID: String, _ form: FormParameters, _ session: ConsoleSession, _ visit: Visit) async throws -> PageAnswer {
        let wanted = form["status"] ?? ""
        let answer = try await flow.admin(
            .patch, flow.tenantPath(visit) + "/users/" + AuthorizationRedirect.encoded(userID), json: ["status": wanted],
            session: session, visit)
        return try await show(userID: userID, session, visit, { page in
            if answer.status == .ok {
                page.notice = wanted == "active" ? "The user is enabled." : "The user is disabled: their requests are refused."
            } else {
                page.error = ConsoleText.sentence(answer.errorDescription ?? "the status could not be changed")
            }
        }, status: answer.status == .ok ? .ok : ConsoleText.pageStatus(answer.status))
    }

    func delete(userID: String, _ form: FormParameters, _ session: ConsoleSession, _ visit: Visit) async throws -> PageAnswer {
        guard form["confirm"] == "yes" else {
            return try await show(userID: userID, session, visit, { page in
                page.confirmError = "Tick the box to confirm: deleting a user cannot be undone."
            }, status: .badRequest)
        }
        let answer = try await flow.admin(
            .delete, flow.tenantPath(visit) + "/users/" + AuthorizationRedirect.encoded(userID), session: session, visit)
        guard answer.status == .noContent else {
            return try await show(userID: userID, session, visit, { page in
                page.error = ConsoleText.sentence(answer.errorDescription ?? "the user could not be deleted")
            }, status: ConsoleText.pageStatus(answer.status))
        }
        return .redirect(to: "\(visit.base)/console/users")
    }

    /// Every device deregistered and every passkey removed, so the person enrolls again.
    func resetFactors(userID: String, _ form: FormParameters, _ session: ConsoleSession, _ visit: Visit) async throws -> PageAnswer {
        guard form["confirm"] == "yes" else {
            return try await show(userID: userID, session, visit, { page in
                page.resetConfirmError = "Tick the box to confirm: the user's devices and passkeys stop working at once."
            }, status: .badRequest)
        }
        let answer = try await flow.admin(
            .post, userPath(visit, userID) + "/factor-reset", session: session, visit)
        return try await show(userID: userID, session, visit, { page in
            guard answer.status == .ok, let removed = answer.json else {
                page.error = ConsoleText.sentence(answer.errorDescription ?? "the factors could not be reset")
                return
            }
            let devices = (removed["devices_removed"] as? NSNumber)?.intValue ?? 0
            let passkeys = (removed["passkeys_removed"] as? NSNumber)?.intValue ?? 0
            page.notice = "Factors reset: \(Self.count(devices, "device")) deregistered and \(Self.count(passkeys, "passkey")) removed. "
                + "Create an invitation to enroll again."
        }, status: answer.status == .ok ? .ok : ConsoleText.pageStatus(answer.status))
    }

    func liftSuppression(userID: String, _ session: ConsoleSession, _ visit: Visit) async throws -> PageAnswer {
        let answer = try await flow.admin(.delete, userPath(visit, userID) + "/request-suppression", session: session, visit)
        return try await show(userID: userID, session, visit, { page in
            if answer.status == .noContent { page.notice = "Requests reach the user again." }
            else { page.error = ConsoleText.sentence(answer.errorDescription ?? "the pause could not be lifted") }
        }, status: answer.status == .noContent ? .ok : ConsoleText.pageStatus(answer.status))
    }

    /// Sets the user's code as typed, or removes it (`remove=yes`).
    func setUserCode(userID: String, _ form: FormParameters, _ session: ConsoleSession, _ visit: Visit) async throws -> PageAnswer {
        let removing = form["remove"] == "yes"
        let code = removing ? "" : form["user_code"] ?? ""
        guard removing || !code.isEmpty else {
            return try await show(userID: userID, session, visit, { page in
                page.userCodeError = "Enter a code, or remove the one set."
            }, status: .badRequest)
        }
        let answer = try await flow.admin(.patch, userPath(visit, userID), json: ["user_code": code], session: session, visit)
        return try await show(userID: userID, session, visit, { page in
            guard answer.status == .ok else {
                let message = answer.errorDescription ?? "the code could not be set"
                if ConsoleText.field(of: message) == "user_code" { page.userCodeError = ConsoleText.sentence(message) }
                else { page.error = ConsoleText.sentence(message) }
                return
            }
            page.notice = removing ? "The user code is removed." : "The user code is set."
        }, status: answer.status == .ok ? .ok : ConsoleText.pageStatus(answer.status))
    }

    /// Sets the user's e-mail address as typed; an empty one removes it.
    func setEmail(userID: String, _ form: FormParameters, _ session: ConsoleSession, _ visit: Visit) async throws -> PageAnswer {
        let email = (form["email"] ?? "").trimmingCharacters(in: .whitespaces)
        let answer = try await flow.admin(.patch, userPath(visit, userID), json: ["email": email], session: session, visit)
        return try await show(userID: userID, session, visit, { page in
            guard answer.status == .ok else {
                let message = answer.errorDescription ?? "the e-mail address could not be set"
                page.emailTyped = email
                if ConsoleText.field(of: message) == "email" { page.emailError = ConsoleText.sentence(message) }
                else { page.error = ConsoleText.sentence(message) }
                return
            }
            page.notice = email.isEmpty ? "The e-mail address is removed." : "The e-mail address is set."
        }, status: answer.status == .ok ? .ok : ConsoleText.pageStatus(answer.status))
    }

    /// Grants the chosen console role (`PUT …/console-role`), or takes the user's away (`DELETE`)
    /// for "No console access". The session's key must hold the role's rights to grant it; a
    /// refusal is shown beside the field, the choice kept.
    func setConsoleRole(userID: String, _ form: FormParameters, _ session: ConsoleSession, _ visit: Visit) async throws -> PageAnswer {
        let role = form["role"] ?? ""
        let path = userPath(visit, userID) + "/console-role"
        let answer = role.isEmpty
            ? try await flow.admin(.delete, path, session: session, visit)
            : try await flow.admin(.put, path, json: ["role": role], session: session, visit)
        // Taking away a role the user does not have changes nothing, and is no failure.
        let done = answer.status == .ok || answer.status == .noContent || (role.isEmpty && answer.status == .notFound)
        return try await show(userID: userID, session, visit, { page in
            guard done else {
                page.choose(role)
                page.roleError = ConsoleText.sentence(answer.errorDescription ?? "the role could not be changed")
                return
            }
            page.notice = role.isEmpty
                ? "\(page.user.username) has no console access."
                : "\(page.user.username) is now a \(ConsoleRoleOption.name(of: role)) of the console."
        }, status: done ? .ok : ConsoleText.pageStatus(answer.status))
    }

    // MARK: - Recovery

    func revokeRecoveryCodes(userID: String, _ session: ConsoleSession, _ visit: Visit) async throws -> PageAnswer {
        let answer = try await flow.admin(.delete, userPath(visit, userID) + "/recovery-codes", session: session, visit)
        return try await show(userID: userID, session, visit, { page in
            if answer.status == .noContent { page.notice = "The recovery codes are revoked: none of them signs in any more." }
            else { page.error = ConsoleText.sentence(answer.errorDescription ?? "the recovery codes could not be revoked") }
        }, status: answer.status == .noContent ? .ok : ConsoleText.pageStatus(answer.status))
    }

    /// Issues a pass as the form asks, and shows its code this once.
    func issueAccessPass(userID: String, _ form: FormParameters, _ session: ConsoleSession, _ visit: Visit) async throws -> PageAnswer {
        let typed = form["allowed_networks"] ?? ""
        let networks = typed.split(whereSeparator: { $0 == "\n" || $0 == "\r" || $0 == "," })
            .map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
        var json: [String: any Sendable] = ["one_time": form["reusable"] != "yes", "allowed_networks": networks]
        if let lifetime = form["lifetime_seconds"] { json["lifetime_seconds"] = Int(lifetime) ?? -1 }
        let answer = try await flow.admin(.post, userPath(visit, userID) + "/temporary-access-passes", json: json,
                                          session: session, visit)
        return try await show(userID: userID, session, visit, { page in
            guard answer.status == .created, let issued = answer.json, let pass = issued["pass"] as? [String: Any] else {
                let message = answer.errorDescription ?? "no pass could be issued"
                page.recovery.networksTyped = typed
                if ConsoleText.field(of: message) == "allowed_networks" { page.recovery.networksError = ConsoleText.sentence(message) }
                else { page.error = ConsoleText.sentence(message) }
                return
            }
            page.recovery.issued = ConsoleIssuedPass(
                code: issued["code"] as? String ?? "", uses: pass["one_time"] as? Bool == false ? "any number of times" : "once",
                startsAt: ConsoleTime.text(pass["starts_at"] as? String), expiresAt: ConsoleTime.text(pass["expires_at"] as? String),
                recoverURL: visit.issuer.identifier + "/account/recover")
        }, status: answer.status == .created ? .ok : ConsoleText.pageStatus(answer.status))
    }

    func revokeAccessPass(userID: String, passID: String, _ session: ConsoleSession, _ visit: Visit) async throws -> PageAnswer {
        let answer = try await flow.admin(
            .delete, userPath(visit, userID) + "/temporary-access-passes/" + AuthorizationRedirect.encoded(passID),
            session: session, visit)
        return try await show(userID: userID, session, visit, { page in
            if answer.status == .noContent { page.notice = "The temporary access pass is revoked." }
            else { page.error = ConsoleText.sentence(answer.errorDescription ?? "the pass could not be revoked") }
        }, status: answer.status == .noContent ? .ok : ConsoleText.pageStatus(answer.status))
    }

    private func userPath(_ visit: Visit, _ userID: String) -> String {
        flow.tenantPath(visit) + "/users/" + AuthorizationRedirect.encoded(userID)
    }

    private static func count(_ number: Int, _ noun: String) -> String { "\(number) \(noun)\(number == 1 ? "" : "s")" }

    /// An invitation, shown as a link and a QR code; with `send_email`, mailed to the user too
    /// (`POST …/enrollment-tickets` with `send_email`).
    func invite(userID: String, _ form: FormParameters, _ session: ConsoleSession, _ visit: Visit) async throws -> PageAnswer {
        let mailing = form["send_email"] == "yes"
        let answer = try await flow.admin(
            .post, flow.tenantPath(visit) + "/users/" + AuthorizationRedirect.encoded(userID) + "/enrollment-tickets",
            json: mailing ? ["send_email": true] : nil, session: session, visit)
        return try await show(userID: userID, session, visit, { page in
            guard answer.status == .created, let issued = answer.json else {
                page.error = ConsoleText.sentence(answer.errorDescription ?? "no invitation could be made")
                return
            }
            if issued["mail_id"] is String { page.invitationMailed = page.user.email }
            page.invitation = ConsoleInvitation(
                invitationURL: issued["invitation_url"] as? String ?? "", enrollmentURI: issued["enrollment_uri"] as? String ?? "",
                qrPNG: issued["qr_png_base64"] as? String ?? "",
                expiresAt: ConsoleTime.text((issued["ticket"] as? [String: Any])?["expires_at"] as? String))
        }, status: answer.status == .created ? .ok : ConsoleText.pageStatus(answer.status))
    }

    func removeDevice(userID: String, deviceID: String, _ session: ConsoleSession, _ visit: Visit) async throws -> PageAnswer {
        let answer = try await flow.admin(
            .delete, flow.tenantPath(visit) + "/devices/" + AuthorizationRedirect.encoded(deviceID), session: session, visit)
        return try await show(userID: userID, session, visit, { page in
            if answer.status == .noContent { page.notice = "The device is deregistered." }
            else { page.error = ConsoleText.sentence(answer.errorDescription ?? "the device could not be deregistered") }
        }, status: answer.status == .noContent ? .ok : ConsoleText.pageStatus(answer.status))
    }

    func forgetBrowser(userID: String, browserID: String, _ session: ConsoleSession, _ visit: Visit) async throws -> PageAnswer {
        let answer = try await flow.admin(
            .delete, flow.tenantPath(visit) + "/users/" + AuthorizationRedirect.encoded(userID) + "/remembered-browsers/"
                + AuthorizationRedirect.encoded(browserID), session: session, visit)
        return try await show(userID: userID, session, visit, { page in
            if answer.status == .noContent { page.notice = "The browser is forgotten: its next sign-in asks the phone." }
            else { page.error = ConsoleText.sentence(answer.errorDescription ?? "the browser could not be forgotten") }
        }, status: answer.status == .noContent ? .ok : ConsoleText.pageStatus(answer.status))
    }

    func removePasskey(userID: String, passkeyID: String, _ session: ConsoleSession, _ visit: Visit) async throws -> PageAnswer {
        let answer = try await flow.admin(
            .delete, flow.tenantPath(visit) + "/users/" + AuthorizationRedirect.encoded(userID) + "/passkeys/"
                + AuthorizationRedirect.encoded(passkeyID), session: session, visit)
        return try await show(userID: userID, session, visit, { page in
            if answer.status == .noContent { page.notice = "The passkey is removed." }
            else { page.error = ConsoleText.sentence(answer.errorDescription ?? "the passkey could not be removed") }
        }, status: answer.status == .noContent ? .ok : ConsoleText.pageStatus(answer.status))
    }
}

extension InProcessRouter.Answer {
    var json: [String: Any]? { try? JSONSerialization.jsonObject(with: body) as? [String: Any] }
}
