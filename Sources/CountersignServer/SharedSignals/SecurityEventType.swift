import CountersignCore
import Foundation

/// The Security Event Token types Countersign transmits (OpenID Shared Signals Framework 1.0,
/// CAEP 1.0, RISC 1.0), by their event-type URI.
enum SecurityEventType: String, Sendable, CaseIterable, Codable {
    /// CAEP §3.1: the user's sessions were ended by someone or something other than the user.
    case sessionRevoked = "https://schemas.openid.net/secevent/caep/event-type/session-revoked"
    /// CAEP §3.3: a phone, a PIN or a passkey of the user was added, changed or removed.
    case credentialChange = "https://schemas.openid.net/secevent/caep/event-type/credential-change"
    /// RISC §2.3: the user was disabled (by an admin, SCIM or the directory).
    case accountDisabled = "https://schemas.openid.net/secevent/risc/event-type/account-disabled"
    /// RISC §2.4: the user was enabled again.
    case accountEnabled = "https://schemas.openid.net/secevent/risc/event-type/account-enabled"
    /// RISC §2.7: the user said a sign-in request, a phone, a passkey or a recovery they did not
    /// make ("not me").
    case credentialCompromise = "https://schemas.openid.net/secevent/risc/event-type/credential-compromise"
    /// SSF §8.1.4.1: the answer to a receiver's verification request.
    case verification = "https://schemas.openid.net/secevent/ssf/event-type/verification"
    /// SSF §8.1.5: the transmitter changed a stream's status on its own.
    case streamUpdated = "https://schemas.openid.net/secevent/ssf/event-type/stream-updated"

    /// What a receiver may request (`events_supported`): the events about users. Verification
    /// and stream-updated events are sent whether requested or not (SSF §8.1.4.1, §8.1.5).
    static let supported: [SecurityEventType] = [
        .sessionRevoked, .credentialChange, .accountDisabled, .accountEnabled, .credentialCompromise,
    ]
}

/// One event about a user, before it is addressed to a stream: its type and the members of its
/// payload (`events[<type>]`).
struct SecurityEventBody: Sendable, Equatable {
    let type: SecurityEventType
    let payload: [String: JSONValue]
}

/// Which audit events become Security Event Tokens, and what they say. The audit log is where
/// every change is recorded, in the transaction that makes it, so reading the events from there
/// means none is missed and none is sent for a change that was rolled back.
///
/// ```swift
/// let bodies = SecurityEventMapping.bodies(for: event, subjectUserID: user.id, device: device)
/// ```
enum SecurityEventMapping {
    /// The audit actions that may produce an event; any other is passed by without a read.
    static let actions: Set<String> = [
        "session.ended", "user.updated", "user.deprovisioned", "user.factors_reset", "security_notice.reported",
        NotRequestedReport.event, "device.enrolled", "device.unenrolled", "device.deleted", "device.deregistered",
        "device.pin_changed", "device.factors_added", "passkey.registered", "passkey.removed",
    ]

    /// The user an event is about: named in its details, its target, or (for a device) the
    /// device's owner, which the caller reads.
    static func userID(of event: AuditEvent) -> String? {
        if let id = event.details["user_id"], !id.isEmpty { return id }
        if event.targetType == "user" { return event.targetID }
        return nil
    }

    /// The events `event` reports about the user whose id is `userID`; `device` is the device
    /// it names, if any (for its name).
    static func bodies(for event: AuditEvent, userID: String, device: Device?) -> [SecurityEventBody] {
        let timestamp = JSONValue.integer(Int64(event.occurredAt.timeIntervalSince1970.rounded(.down)))
        let initiator = initiatingEntity(event.actor, userID: userID)
        func body(_ type: SecurityEventType, _ reason: String, _ members: [String: JSONValue] = [:],
                  initiator: String? = initiator) -> SecurityEventBody {
            var payload = members
            payload["event_timestamp"] = timestamp
            payload["reason_admin"] = .object(["en": .string(reason)])
            if let initiator { payload["initiating_entity"] = .string(initiator) }
            return SecurityEventBody(type: type, payload: payload)
        }
        func credential(_ type: String, _ change: String, _ reason: String, name: String? = nil,
                        aaguid: String? = nil) -> SecurityEventBody {
            var members: [String: JSONValue] = ["credential_type": .string(type), "change_type": .string(change)]
            if let name, !name.isEmpty { members["friendly_name"] = .string(name) }
            if let aaguid, !aaguid.isEmpty { members["fido2_aaguid"] = .string(aaguid) }
            return body(.credentialChange, reason, members)
        }

        var bodies: [SecurityEventBody] = []
        let details = event.details
        switch event.action {
        case "user.updated":
            switch (details["previous_status"], details["status"]) {
            case ("active", "disabled"):
                bodies.append(body(.accountDisabled, details["reason"].map { "the user was disabled: \($0)" }
                    ?? "the user was disabled"))
            case ("disabled", "active"):
                bodies.append(SecurityEventBody(type: .accountEnabled, payload: [:]))
            default:
                break
            }
        case "user.deprovisioned":
            bodies.append(body(.accountDisabled, "the user was deprovisioned by the SCIM client"))
        case "security_notice.reported":
            let (type, what) = switch details["kind"] {
            case "passkey_added": ("fido2-platform", "a passkey")
            case "recovery_code_used": ("recovery-code", "a recovery code")
            case "access_pass_used": ("temporary-access-pass", "a temporary access pass")
            default: ("app", "a phone")
            }
            bodies.append(body(
                .credentialCompromise, "the user reported \(what) added or used that they did not add or use",
                ["credential_type": .string(type)], initiator: "user"))
        case NotRequestedReport.event:
            bodies.append(body(
                .credentialCompromise,
                "the user reported a sign-in request they did not make: whoever started it holds the credential the relying party asked for first",
                ["credential_type": .string("password")], initiator: "user"))
        case "device.enrolled":
            bodies.append(credential("app", "create", "a phone was enrolled", name: device?.name))
        case "device.unenrolled":
            bodies.append(credential("app", "delete", "the phone was removed by its user", name: device?.name))
        case "device.deleted":
            bodies.append(credential(
                "app", "delete", details["reason"].map { "the phone was removed: \($0)" } ?? "the phone was removed",
                name: device?.name))
        case "device.deregistered":
            bodies.append(credential(
                "app", "revoke", "the phone was deregistered after too many wrong PINs", name: device?.name))
        case "device.pin_changed":
            bodies.append(credential("pin", "update", "the phone's PIN was changed", name: device?.name))
        case "device.factors_added":
            if (details["factors"] ?? "").split(separator: " ").contains("pin") {
                bodies.append(credential("pin", "create", "a PIN was set on the phone", name: device?.name))
            }
        case "passkey.registered":
            let platform = details["backup_eligible"] == "true"
                || (details["transports"] ?? "").split(separator: " ").contains("internal")
            bodies.append(credential(
                platform ? "fido2-platform" : "fido2-roaming", "create", "a passkey was registered",
                name: details["name"], aaguid: details["aaguid"]))
        case "passkey.removed":
            bodies.append(credential(
                "fido2-platform", "delete",
                details["reason"].map { "the passkey was removed: \($0)" } ?? "the passkey was removed", name: details["name"]))
        default:
            break
        }

        // Sessions ended beside another change (a user disabled, deprovisioned, reset, or a
        // "not me"), or one ended by the server: the user did not end them.
        let ended = Int(details["sessions_ended"] ?? details["sessions"] ?? "") ?? 0
        if ended > 0 {
            bodies.append(body(.sessionRevoked, sessionReason(event.action)))
        } else if event.action == "session.ended", event.actor != "user:\(userID)" {
            bodies.append(body(
                .sessionRevoked, details["reason"].map { "the session was ended: \($0)" } ?? "the session was ended",
                initiator: "system"))
        }
        return bodies
    }

    private static func sessionReason(_ action: String) -> String {
        switch action {
        case "user.updated": "the user was disabled"
        case "user.deprovisioned": "the user was deprovisioned by the SCIM client"
        case "user.factors_reset": "an administrator reset the user's factors"
        case "security_notice.reported": "the user reported a change they did not make"
        default: "the user's sessions were ended"
        }
    }

    /// CAEP's `initiating_entity`: the user (or their own phone), an admin (a key, or another
    /// console user), or the system (the directory sync, a SCIM client, the server).
    static func initiatingEntity(_ actor: String, userID: String) -> String? {
        if actor == "user:\(userID)" || actor.hasPrefix("device:") { return "user" }
        if actor.hasPrefix("admin-key:") || actor.hasPrefix("user:") { return "admin" }
        return "system"
    }
}
