import CountersignCore
import Foundation
import Testing
@testable import CountersignServer

/// The Shared Signals transmitter driven in memory: its metadata, the stream management API
/// (SSF 1.0 §8.1) with each error it names, which changes become which SETs, and poll delivery
/// (RFC 8936).
@Suite("Shared Signals: metadata, streams, status, verification, events and poll delivery")
struct SharedSignalsStreamTests {
    static let caep = "https://schemas.openid.net/secevent/caep/event-type/"
    static let risc = "https://schemas.openid.net/secevent/risc/event-type/"
    static let ssf = "https://schemas.openid.net/secevent/ssf/event-type/"
    static let allEvents = [
        caep + "session-revoked", caep + "credential-change", risc + "account-disabled", risc + "account-enabled",
        risc + "credential-compromise",
    ]

    /// A tenant key holding `ssf` alone, as a receiver is given.
    static func receiverKey(_ server: TestServer, tenant: String = "default", name: String = "SIEM") async throws -> String {
        let created = try await server.admin(
            "POST", "/admin/v1/tenants/\(tenant)/admin-keys", json: ["name": name, "rights": ["ssf"]])
        #expect(created.status == 201, "\(created.errorDescription ?? "")")
        return try #require(created["secret"] as? String)
    }

    static func ssfCall(_ server: TestServer, _ method: String, _ path: String, key: String?,
                        json: [String: any Sendable]? = nil, tenantBase: String = "") async throws -> TestServer.Answer {
        try await server.call(method, tenantBase + "/ssf" + path, key: key, json: json)
    }

    /// Creates a poll stream for every event; returns its configuration.
    static func pollStream(_ server: TestServer, key: String, format: String = "iss_sub",
                           events: [String] = allEvents) async throws -> [String: any Sendable] {
        let created = try await ssfCall(
            server, "POST", "/streams", key: key, json: ["events_requested": events, "format": format, "aud": "siem.example.com"])
        #expect(created.status == 201, "\(created.errorDescription ?? "")")
        return try #require(created.json)
    }

    /// One poll, acknowledging `ack`: the SETs handed out, decoded (the signatures are the
    /// independent receiver's to check, in `SharedSignalsDeliveryTests`).
    static func poll(_ server: TestServer, key: String, stream: String, ack: [String] = [], maxEvents: Int? = nil)
        async throws -> (sets: [(jti: String, header: [String: any Sendable], claims: [String: any Sendable])], more: Bool) {
        var body: [String: any Sendable] = ["returnImmediately": true, "ack": ack]
        if let maxEvents { body["maxEvents"] = maxEvents }
        let answer = try await ssfCall(server, "POST", "/poll/\(stream)", key: key, json: body)
        #expect(answer.status == 200, "poll: \(answer.errorDescription ?? "")")
        let sets = try #require(answer["sets"] as? [String: any Sendable])
        var decoded: [(jti: String, header: [String: any Sendable], claims: [String: any Sendable])] = []
        for (jti, token) in sets {
            let parts = try #require(token as? String).split(separator: ".")
            #expect(parts.count == 3)
            func object(_ part: Substring) throws -> [String: any Sendable] {
                let data = try #require(Data(base64URLEncoded: String(part)))
                return try #require(try JSONSerialization.jsonObject(with: data) as? [String: any Sendable])
            }
            decoded.append((jti, try object(parts[0]), try object(parts[1])))
        }
        decoded.sort { (($0.claims["iat"] as? Int) ?? 0, $0.jti) < (($1.claims["iat"] as? Int) ?? 0, $1.jti) }
        return (decoded, answer["moreAvailable"] as? Bool ?? false)
    }

    static func event(_ claims: [String: any Sendable]) -> (type: String, payload: [String: any Sendable])? {
        guard let events = claims["events"] as? [String: any Sendable], events.count == 1, let (type, payload) = events.first,
              let members = payload as? [String: any Sendable] else { return nil }
        return (type, members)
    }

    @Test("the transmitter's metadata: at the root for the default tenant, with the issuer's path after it for another")
    func metadata() async throws {
        try await TestServer.routed { server in
            let root = try await server.call("GET", "/.well-known/ssf-configuration")
            #expect(root.status == 200)
            let document = try #require(root.json)
            #expect(document["spec_version"] as? String == "1_0")
            #expect(document["issuer"] as? String == server.base)
            #expect(document["jwks_uri"] as? String == server.base + "/jwks")
            #expect(document["configuration_endpoint"] as? String == server.base + "/ssf/streams")
            #expect(document["status_endpoint"] as? String == server.base + "/ssf/status")
            #expect(document["verification_endpoint"] as? String == server.base + "/ssf/verify")
            #expect(document["delivery_methods_supported"] as? [String] == ["urn:ietf:rfc:8935", "urn:ietf:rfc:8936"])
            #expect(document["default_subjects"] as? String == "ALL")
            #expect(document["add_subject_endpoint"] == nil, "subjects are not added or removed one by one")

            #expect(try await server.admin("POST", "/admin/v1/tenants", json: ["slug": "acme", "display_name": "Acme"]).status == 201)
            let acme = try await server.call("GET", "/.well-known/ssf-configuration/t/acme")
            #expect(acme.status == 200)
            #expect(acme["issuer"] as? String == server.base + "/t/acme")
            #expect(acme["configuration_endpoint"] as? String == server.base + "/t/acme/ssf/streams")
            #expect(try await server.call("GET", "/.well-known/ssf-configuration/t/nobody").status == 404)
            #expect(try await server.call("GET", "/.well-known/ssf-configuration/t/default").status == 404,
                    "the default tenant's issuer has no path")
        }
    }

    @Test("a stream is created (poll without delivery), read alone and in a list, updated, replaced and deleted")
    func streamLifecycle() async throws {
        try await TestServer.routed { server in
            let key = try await Self.receiverKey(server)
            let created = try await Self.ssfCall(
                server, "POST", "/streams", key: key,
                json: ["events_requested": [Self.caep + "credential-change", "urn:example:unknown"], "description": "SIEM"])
            #expect(created.status == 201)
            let stream = try #require(created["stream_id"] as? String)
            #expect(created["iss"] as? String == server.base)
            #expect(created["aud"] is String, "one audience is a string")
            #expect(created["events_requested"] as? [String] == [Self.caep + "credential-change", "urn:example:unknown"])
            #expect(created["events_delivered"] as? [String] == [Self.caep + "credential-change"],
                    "an event type the transmitter does not know is not delivered")
            #expect(created["events_supported"] as? [String] == Self.allEvents)
            #expect(created["format"] as? String == "iss_sub")
            #expect(created["min_verification_interval"] as? Int == 10)
            let delivery = try #require(created["delivery"] as? [String: any Sendable])
            #expect(delivery["method"] as? String == "urn:ietf:rfc:8936")
            #expect(delivery["endpoint_url"] as? String == server.base + "/ssf/poll/" + stream)

            let list = try await Self.ssfCall(server, "GET", "/streams", key: key)
            let items = try #require(try JSONSerialization.jsonObject(with: list.data) as? [[String: any Sendable]])
            #expect(items.map { $0["stream_id"] as? String } == [stream], "without stream_id: an array")
            #expect(try await Self.ssfCall(server, "GET", "/streams?stream_id=\(stream)", key: key)["description"] as? String == "SIEM")

            let patched = try await Self.ssfCall(
                server, "PATCH", "/streams", key: key,
                json: ["stream_id": stream, "events_requested": Self.allEvents, "iss": server.base, "format": "opaque"])
            #expect(patched.status == 200)
            #expect(patched["events_delivered"] as? [String] == Self.allEvents)
            #expect(patched["description"] as? String == "SIEM", "PATCH leaves what it does not name")
            #expect(patched["format"] as? String == "opaque")

            let replaced = try await Self.ssfCall(
                server, "PUT", "/streams", key: key,
                json: ["stream_id": stream, "delivery": ["method": "urn:ietf:rfc:8935", "endpoint_url": "https://siem.example.com/events",
                                                         "authorization_header": "Bearer receiver-secret"]])
            #expect(replaced.status == 200)
            #expect(replaced["description"] == nil && replaced["events_requested"] as? [String] == [],
                    "PUT sets what it leaves out to nothing")
            let pushed = try #require(replaced["delivery"] as? [String: any Sendable])
            #expect(pushed["endpoint_url"] as? String == "https://siem.example.com/events")
            #expect(pushed["authorization_header"] == nil, "the receiver's secret is never answered back")

            #expect(try await Self.ssfCall(server, "DELETE", "/streams?stream_id=\(stream)", key: key).status == 204)
            #expect(try await Self.ssfCall(server, "GET", "/streams?stream_id=\(stream)", key: key).status == 404)
            let empty = try await Self.ssfCall(server, "GET", "/streams", key: key)
            #expect(String(decoding: empty.data, as: UTF8.self) == "[]")
        }
    }

    @Test("each mistake is named, and a receiver reaches only its own streams")
    func refusals() async throws {
        try await TestServer.routed { server in
            let key = try await Self.receiverKey(server)
            let other = try await Self.receiverKey(server, name: "other receiver")
            let stream = try #require(try await Self.pollStream(server, key: key)["stream_id"] as? String)
            func create(_ body: [String: any Sendable]) async throws -> String? {
                let answer = try await Self.ssfCall(server, "POST", "/streams", key: key, json: body)
                #expect(answer.status == 400, "\(body)")
                return answer.errorDescription
            }
            #expect(try await create(["delivery": ["method": "urn:example:carrier-pigeon"]])?.contains("delivery.method") == true)
            #expect(try await create(["delivery": ["method": "urn:ietf:rfc:8935"]]) == "field delivery.endpoint_url is required")
            #expect(try await create(["delivery": ["method": "urn:ietf:rfc:8935", "endpoint_url": "http://siem.example.com/events"]])?
                .contains("must use https") == true)
            #expect(try await create(["delivery": ["method": "urn:ietf:rfc:8935", "endpoint_url": "http://127.0.0.1:9000/events"]])?
                .contains("only for a server whose own public URL is http") == true, "this server is reached over https")
            #expect(try await create(["stream_id": "mine"])?.contains("stream_id") == true)
            #expect(try await create(["events_delivered": [String]()])?.contains("events_delivered") == true)
            #expect(try await create(["events_requested": "all"])?.contains("events_requested") == true)
            #expect(try await create(["format": "phone_number"])?.contains("iss_sub, email or opaque") == true)
            #expect(try await create(["delivery": ["method": "urn:ietf:rfc:8936", "endpoint_url": "https://elsewhere.example.com/"]])?
                .contains("delivery.endpoint_url") == true)

            let changedAudience = try await Self.ssfCall(
                server, "PATCH", "/streams", key: key, json: ["stream_id": stream, "aud": "someone-else"])
            #expect(changedAudience.status == 400 && changedAudience.errorDescription?.contains("aud") == true)
            #expect(try await Self.ssfCall(server, "PATCH", "/streams", key: key, json: ["events_requested": [String]()]).status == 400,
                    "PATCH names its stream")
            #expect(try await Self.ssfCall(server, "DELETE", "/streams", key: key).status == 400)

            for (method, path) in [("GET", "/streams?stream_id=\(stream)"), ("DELETE", "/streams?stream_id=\(stream)"),
                                   ("GET", "/status?stream_id=\(stream)")] {
                #expect(try await Self.ssfCall(server, method, path, key: other).status == 404, "\(method) \(path)")
            }
            #expect(try await Self.ssfCall(server, "POST", "/poll/\(stream)", key: other, json: [:]).status == 404)
            #expect(try await Self.ssfCall(server, "GET", "/streams", key: nil).status == 401)
            let system = try await Self.ssfCall(server, "GET", "/streams", key: server.adminKey)
            #expect(system.status == 403 && system.errorDescription == "a system key is no receiver: use a key of the tenant holding ssf")
            let scim = try await server.admin(
                "POST", "/admin/v1/tenants/default/admin-keys", json: ["name": "provisioning", "rights": ["scim"]])
            let scimKey = try #require(scim["secret"] as? String)
            #expect(try await Self.ssfCall(server, "GET", "/streams", key: scimKey).status == 403)

            for _ in 1..<10 { _ = try await Self.pollStream(server, key: key) }
            let eleventh = try await Self.ssfCall(server, "POST", "/streams", key: key, json: [:])
            #expect(eleventh.status == 409, "ten streams per receiver")
        }
    }

    @Test("changes become SETs: a phone enrolled, a user disabled and enabled, a request reported as not made",
          arguments: ["iss_sub", "email", "opaque"])
    func changesBecomeSecurityEvents(format: String) async throws {
        try await TestServer.routed { server in
            let key = try await Self.receiverKey(server)
            let stream = try #require(try await Self.pollStream(server, key: key, format: format)["stream_id"] as? String)
            let client = try await server.createClient()
            let ada = try await server.createUser("ada")
            #expect(try await server.admin("PATCH", "/admin/v1/tenants/default/users/\(ada)", json: ["email": "ada@example.com"]).status == 200)
            let device = try await server.enrollFactorDevice(for: ada)
            _ = try await server.startApproval(client, user: "ada")
            _ = try await device.answer(.deny, factors: ["confirm"], reason: .notRequested)
            #expect(try await server.admin("PATCH", "/admin/v1/tenants/default/users/\(ada)", json: ["status": "disabled"]).status == 200)
            #expect(try await server.admin("PATCH", "/admin/v1/tenants/default/users/\(ada)", json: ["status": "active"]).status == 200)
            #expect(try await server.admin("PATCH", "/admin/v1/tenants/default/users/\(ada)", json: ["display_name": "Ada"]).status == 200)

            let (sets, more) = try await Self.poll(server, key: key, stream: stream)
            #expect(!more)
            let types = sets.compactMap { Self.event($0.claims)?.type }
            #expect(types == [Self.caep + "credential-change", Self.risc + "credential-compromise", Self.risc + "account-disabled",
                              Self.risc + "account-enabled"], "\(types)")
            for set in sets {
                #expect(set.header["typ"] as? String == "secevent+jwt")
                #expect(set.header["alg"] as? String == "RS256")
                #expect(set.header["kid"] is String)
                #expect(set.claims["iss"] as? String == server.base)
                #expect(set.claims["aud"] as? String == "siem.example.com")
                #expect(set.claims["jti"] as? String == set.jti)
                #expect(set.claims["iat"] is Int && set.claims["txn"] is String)
                #expect(set.claims["sub"] == nil && set.claims["exp"] == nil)
                let subject = try #require(set.claims["sub_id"] as? [String: any Sendable])
                switch format {
                case "email": #expect(subject as NSDictionary == ["format": "email", "email": "ada@example.com"] as NSDictionary)
                case "opaque": #expect(subject as NSDictionary == ["format": "opaque", "id": ada] as NSDictionary)
                default: #expect(subject as NSDictionary == ["format": "iss_sub", "iss": server.base, "sub": ada] as NSDictionary)
                }
            }
            let enrolled = try #require(Self.event(sets[0].claims)?.payload)
            #expect(enrolled["credential_type"] as? String == "app" && enrolled["change_type"] as? String == "create")
            #expect(enrolled["initiating_entity"] as? String == "user")
            #expect((enrolled["reason_admin"] as? [String: String])?["en"] == "a phone was enrolled")
            #expect(enrolled["event_timestamp"] as? Int == Int(server.clock.now.timeIntervalSince1970))
            let compromise = try #require(Self.event(sets[1].claims)?.payload)
            #expect(compromise["credential_type"] as? String == "password")
            #expect(compromise["initiating_entity"] as? String == "user")
            let disabled = try #require(Self.event(sets[2].claims)?.payload)
            #expect(disabled["initiating_entity"] as? String == "admin")
            #expect(Self.event(sets[3].claims)?.payload.isEmpty == true, "account-enabled has no members")

            #expect(try await Self.poll(server, key: key, stream: stream, ack: sets.map(\.jti)).sets.isEmpty)
        }
    }

    @Test("a user without an address is left out of an email stream, and a stream gets only what it asked for")
    func streamsGetWhatTheyAskedFor() async throws {
        try await TestServer.routed { server in
            let key = try await Self.receiverKey(server)
            let email = try #require(try await Self.pollStream(server, key: key, format: "email")["stream_id"] as? String)
            let disabling = try #require(try await Self.pollStream(
                server, key: key, events: [Self.risc + "account-disabled"])["stream_id"] as? String)
            let bob = try await server.createUser("bob")
            _ = try await server.enrollFactorDevice(for: bob)
            #expect(try await server.admin("PATCH", "/admin/v1/tenants/default/users/\(bob)", json: ["status": "disabled"]).status == 200)
            #expect(try await Self.poll(server, key: key, stream: email).sets.isEmpty)
            let only = try await Self.poll(server, key: key, stream: disabling).sets
            #expect(only.compactMap { Self.event($0.claims)?.type } == [Self.risc + "account-disabled"])
        }
    }

    @Test("a session the server ends, and sessions ended with a disabled user, are revoked sessions")
    func sessionsRevoked() {
        let date = Date(timeIntervalSince1970: 1_800_000_000)
        let disabled = AuditEvent(
            id: "evt_1", tenantID: "ten_1", actor: "admin-key:key_1", action: "user.updated", targetType: "user",
            targetID: "usr_1", details: ["status": "disabled", "previous_status": "active", "sessions_ended": "2"],
            occurredAt: date)
        let bodies = SecurityEventMapping.bodies(for: disabled, userID: "usr_1", device: nil)
        #expect(bodies.map(\.type) == [.accountDisabled, .sessionRevoked])
        #expect(bodies[1].payload["reason_admin"] == .object(["en": .string("the user was disabled")]))
        #expect(bodies[1].payload["initiating_entity"] == .string("admin"))

        let signedOut = AuditEvent(
            id: "evt_2", tenantID: "ten_1", actor: "user:usr_1", action: "session.ended", targetType: "session",
            targetID: "ses_1", details: ["user_id": "usr_1"], occurredAt: date)
        #expect(SecurityEventMapping.bodies(for: signedOut, userID: "usr_1", device: nil).isEmpty,
                "a user signing out is no revocation")
        let expired = AuditEvent(
            id: "evt_3", tenantID: "ten_1", actor: "system", action: "session.ended", targetType: "session",
            targetID: "ses_1", details: ["user_id": "usr_1", "reason": "signed in elsewhere"], occurredAt: date)
        let ended = SecurityEventMapping.bodies(for: expired, userID: "usr_1", device: nil)
        #expect(ended.map(\.type) == [.sessionRevoked])
        #expect(ended.first?.payload["initiating_entity"] == .string("system"))

        let unchanged = AuditEvent(
            id: "evt_4", tenantID: "ten_1", actor: "admin-key:key_1", action: "user.updated", targetType: "user",
            targetID: "usr_1", details: ["status": "active"], occurredAt: date)
        #expect(SecurityEventMapping.bodies(for: unchanged, userID: "usr_1", device: nil).isEmpty)

        let passkey = AuditEvent(
            id: "evt_5", tenantID: "ten_1", actor: "user:usr_1", action: "passkey.registered", targetType: "passkey",
            targetID: "pk_1",
            details: ["user_id": "usr_1", "name": "YubiKey", "aaguid": "ee882879-721c-4913-9775-3dfcce97072a",
                      "backup_eligible": "false", "transports": "usb nfc"], occurredAt: date)
        let registered = try? #require(SecurityEventMapping.bodies(for: passkey, userID: "usr_1", device: nil).first)
        #expect(registered?.payload["credential_type"] == .string("fido2-roaming"))
        #expect(registered?.payload["fido2_aaguid"] == .string("ee882879-721c-4913-9775-3dfcce97072a"))
        #expect(registered?.payload["friendly_name"] == .string("YubiKey"))
    }

    @Test("paused streams hold their events and deliver them once enabled; disabled streams drop them")
    func status() async throws {
        try await TestServer.routed { server in
            let key = try await Self.receiverKey(server)
            let stream = try #require(try await Self.pollStream(server, key: key)["stream_id"] as? String)
            let read = try await Self.ssfCall(server, "GET", "/status?stream_id=\(stream)", key: key)
            #expect(read.status == 200 && read["status"] as? String == "enabled" && read["stream_id"] as? String == stream)

            let paused = try await Self.ssfCall(
                server, "POST", "/status", key: key, json: ["stream_id": stream, "status": "paused", "reason": "maintenance"])
            #expect(paused.status == 200 && paused["status"] as? String == "paused" && paused["reason"] as? String == "maintenance")
            _ = try await server.enrollFactorDevice(for: try await server.createUser("ada"))
            #expect(try await Self.poll(server, key: key, stream: stream).sets.isEmpty, "a paused stream sends nothing")
            #expect(try await Self.ssfCall(server, "POST", "/status", key: key, json: ["stream_id": stream, "status": "enabled"]).status == 200)
            #expect(try await Self.poll(server, key: key, stream: stream).sets.count == 1, "what was held comes")

            #expect(try await Self.ssfCall(server, "POST", "/status", key: key, json: ["stream_id": stream, "status": "disabled"]).status == 200)
            _ = try await server.enrollFactorDevice(for: try await server.createUser("bob"))
            #expect(try await Self.ssfCall(server, "POST", "/status", key: key, json: ["stream_id": stream, "status": "enabled"]).status == 200)
            #expect(try await Self.poll(server, key: key, stream: stream).sets.isEmpty, "a disabled stream keeps nothing")

            let bad = try await Self.ssfCall(server, "POST", "/status", key: key, json: ["stream_id": stream, "status": "asleep"])
            #expect(bad.status == 400 && bad.errorDescription?.contains("enabled, paused or disabled") == true)
            #expect(try await Self.ssfCall(server, "GET", "/status", key: key).status == 400)
        }
    }

    @Test("verification echoes the state on the stream's own subject, at most once per interval")
    func verification() async throws {
        try await TestServer.routed { server in
            let key = try await Self.receiverKey(server)
            let stream = try #require(try await Self.pollStream(server, key: key)["stream_id"] as? String)
            let asked = try await Self.ssfCall(server, "POST", "/verify", key: key, json: ["stream_id": stream, "state": "VGhpcyBpcyBh"])
            #expect(asked.status == 204 && asked.data.isEmpty)
            let again = try await Self.ssfCall(server, "POST", "/verify", key: key, json: ["stream_id": stream])
            #expect(again.status == 429 && again.header("Retry-After") == "10")
            server.clock.advance(by: 10)
            #expect(try await Self.ssfCall(server, "POST", "/verify", key: key, json: ["stream_id": stream]).status == 204)

            let sets = try await Self.poll(server, key: key, stream: stream).sets
            #expect(sets.count == 2)
            #expect(sets.allSatisfy { Self.event($0.claims)?.type == Self.ssf + "verification" })
            #expect(sets.allSatisfy { ($0.claims["sub_id"] as? [String: any Sendable]) as NSDictionary?
                == ["format": "opaque", "id": stream] as NSDictionary })
            let states = sets.map { Self.event($0.claims)?.payload["state"] as? String }
            #expect(states.contains("VGhpcyBpcyBh") && states.contains(nil))
            #expect(try await Self.ssfCall(server, "POST", "/verify", key: key, json: ["stream_id": "ssf_nothing"]).status == 404)
            #expect(try await Self.ssfCall(server, "POST", "/verify", key: key, json: ["state": "x"]).status == 400)
        }
    }

    @Test("poll: at most maxEvents with moreAvailable, acknowledged ones never again, unacknowledged ones after the delay, errors recorded")
    func pollDelivery() async throws {
        try await TestServer.routed { server in
            let key = try await Self.receiverKey(server)
            let stream = try #require(try await Self.pollStream(server, key: key)["stream_id"] as? String)
            for name in ["ada", "bob", "cy"] { _ = try await server.enrollFactorDevice(for: try await server.createUser(name)) }
            let first = try await Self.poll(server, key: key, stream: stream, maxEvents: 2)
            #expect(first.sets.count == 2 && first.more)
            let second = try await Self.poll(server, key: key, stream: stream, ack: [first.sets[0].jti])
            #expect(second.sets.count == 1 && !second.more, "the one not yet handed out")
            #expect(try await Self.poll(server, key: key, stream: stream).sets.isEmpty, "handed out, not yet due again")

            server.clock.advance(by: 61)
            let redelivered = try await Self.poll(server, key: key, stream: stream)
            #expect(Set(redelivered.sets.map(\.jti)) == [first.sets[1].jti, second.sets[0].jti],
                    "the unacknowledged ones come again, the acknowledged one does not")
            let answered = try await Self.ssfCall(
                server, "POST", "/poll/\(stream)", key: key,
                json: ["ack": [first.sets[1].jti], "setErrs": [second.sets[0].jti: ["err": "invalid_key", "description": "unknown kid"]],
                       "maxEvents": 0, "returnImmediately": true])
            #expect(answered.status == 200 && (answered["sets"] as? [String: any Sendable])?.isEmpty == true)
            server.clock.advance(by: 61)
            #expect(try await Self.poll(server, key: key, stream: stream).sets.isEmpty)

            for body in [["maxEvents": -1], ["returnImmediately": "yes"], ["ack": "all"], ["setErrs": ["x": "bad"]]] as [[String: any Sendable]] {
                #expect(try await Self.ssfCall(server, "POST", "/poll/\(stream)", key: key, json: body).status == 400, "\(body)")
            }
            let push = try await Self.ssfCall(
                server, "POST", "/streams", key: key,
                json: ["delivery": ["method": "urn:ietf:rfc:8935", "endpoint_url": "https://siem.example.com/events"]])
            let pushID = try #require(push["stream_id"] as? String)
            #expect(try await Self.ssfCall(server, "POST", "/poll/\(pushID)", key: key, json: [:]).status == 400)
        }
    }

    @Test("a stream changed between push and poll takes its SETs not yet delivered along, a poll's unacknowledged ones included")
    func deliveryMethodChanges() async throws {
        try await TestServer.routed { server in
            let key = try await Self.receiverKey(server)
            let stream = try #require(try await Self.pollStream(server, key: key)["stream_id"] as? String)
            _ = try await server.enrollFactorDevice(for: try await server.createUser("ada"))
            let handed = try await Self.poll(server, key: key, stream: stream).sets
            #expect(handed.count == 1, "handed out, not acknowledged")
            func statuses() async throws -> [String] {
                let answer = try await server.admin("GET", "/admin/v1/tenants/default/ssf-streams/\(stream)/events")
                return (answer["items"] as? [[String: any Sendable]] ?? []).compactMap { $0["status"] as? String }
            }
            #expect(try await statuses() == ["delivered"])
            let pushed = try await Self.ssfCall(
                server, "PATCH", "/streams", key: key,
                json: ["stream_id": stream, "delivery": ["method": "urn:ietf:rfc:8935", "endpoint_url": "https://siem.example.com/events"]])
            #expect(pushed.status == 200)
            #expect(try await statuses() == ["queued"], "due by push at once")
            #expect(try await Self.ssfCall(server, "PATCH", "/streams", key: key,
                                           json: ["stream_id": stream, "delivery": ["method": "urn:ietf:rfc:8936"]]).status == 200)
            #expect(try await statuses() == ["waiting"])
            #expect(try await Self.poll(server, key: key, stream: stream).sets.map(\.jti) == handed.map(\.jti))
        }
    }

    @Test("a long poll answers as soon as a SET is recorded")
    func longPoll() async throws {
        try await TestServer.routed { server in
            let key = try await Self.receiverKey(server)
            let stream = try #require(try await Self.pollStream(server, key: key)["stream_id"] as? String)
            let started = ContinuousClock.now
            async let answer = Self.ssfCall(server, "POST", "/poll/\(stream)", key: key, json: [:])
            try await Task.sleep(for: .milliseconds(300))
            _ = try await server.enrollFactorDevice(for: try await server.createUser("ada"))
            let polled = try await answer
            #expect(polled.status == 200)
            #expect((polled["sets"] as? [String: any Sendable])?.count == 1)
            #expect(ContinuousClock.now - started < .seconds(20), "it did not wait for the timeout")
        }
    }
}
