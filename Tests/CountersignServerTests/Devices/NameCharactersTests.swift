import CountersignCore
import Foundation
import Testing
@testable import CountersignServer

/// A name shown in a list (a client, a tenant, an admin key, a user's username and display
/// name, a device, a passkey) cannot hold a character that reorders or hides what follows it,
/// so that no entry of a list can pass for another: each is refused with a field error, and
/// nothing changes.
@Suite("Names shown in lists")
struct NameCharactersTests {
    /// Bidirectional embeddings, overrides and isolates, invisible marks, separators and controls.
    static let refused: [Unicode.Scalar] = [
        "\u{202A}", "\u{202B}", "\u{202C}", "\u{202D}", "\u{202E}", "\u{2066}", "\u{2067}", "\u{2068}", "\u{2069}",
        "\u{200E}", "\u{200F}", "\u{061C}", "\u{200B}", "\u{2060}", "\u{FEFF}", "\u{00AD}", "\u{E0041}", "\u{2028}",
        "\u{2029}", "\u{0007}", "\u{001B}", "\u{0085}",
    ]

    /// A name that reads as something else once the scalar is inside it.
    static func spoof(_ scalar: Unicode.Scalar) -> String { "Ivy" + String(scalar) + "enohp s'" }

    @Test("the admin API refuses a client, tenant, admin key or user name holding it, naming the field",
          arguments: refused.map { String(format: "U+%04X", $0.value) })
    func adminAPIRefuses(code: String) async throws {
        let scalar = try #require(UInt32(code.dropFirst(2), radix: 16).flatMap(Unicode.Scalar.init))
        let name = Self.spoof(scalar)
        try await TestServer.routed { server in
            let client = try await server.createClient(name: "Portal")
            let userID = try await server.createUser("ivy")
            let refusals: [(method: String, path: String, json: [String: any Sendable], message: String)] = [
                ("POST", "/admin/v1/tenants/default/clients", ["name": name], Self.nameMessage("name")),
                ("PATCH", "/admin/v1/tenants/default/clients/\(client.id)", ["name": name], Self.nameMessage("name")),
                ("POST", "/admin/v1/tenants", ["slug": "acme", "display_name": name], Self.nameMessage("display_name")),
                ("PATCH", "/admin/v1/tenants/default", ["display_name": name], Self.nameMessage("display_name")),
                ("POST", "/admin/v1/admin-keys", ["name": name, "rights": ["users:read"]], Self.nameMessage("name")),
                ("POST", "/admin/v1/tenants/default/users", ["username": "ivy2", "display_name": name],
                 Self.nameMessage("display_name")),
                ("PATCH", "/admin/v1/tenants/default/users/\(userID)", ["display_name": name], Self.nameMessage("display_name")),
                ("POST", "/admin/v1/tenants/default/users", ["username": "ivy" + String(scalar)],
                 "field username is invalid: 1 to 128 characters without white space, control or format characters"),
            ]
            for refusal in refusals {
                let answer = try await server.admin(refusal.method, refusal.path, json: refusal.json)
                #expect(answer.status == 400, "\(refusal.method) \(refusal.path)")
                #expect(answer.error == "invalid_request")
                #expect(answer.errorDescription == refusal.message, "\(refusal.method) \(refusal.path)")
            }
            // Nothing changed.
            let clients = try await server.admin("GET", "/admin/v1/tenants/default/clients")
            #expect((clients["items"] as? [[String: any Sendable]])?.map { $0["name"] as? String } == ["Portal"])
            let users = try await server.admin("GET", "/admin/v1/tenants/default/users")
            #expect((users["items"] as? [[String: any Sendable]])?.map { $0["username"] as? String } == ["ivy"])
            #expect((users["items"] as? [[String: any Sendable]])?.first?["display_name"] == nil)
            let tenants = try await server.admin("GET", "/admin/v1/tenants")
            #expect((tenants["items"] as? [Any])?.count == 1)
        }
    }

    static func nameMessage(_ field: String) -> String {
        "field \(field) is invalid: 1 to 100 characters without control or format characters (such as bidirectional overrides)"
    }

    @Test("a device cannot rename itself to a name holding it; its name stays",
          arguments: ["\u{202E}", "\u{2067}", "\u{200B}", "\u{FEFF}"] as [Unicode.Scalar])
    func deviceRenameRefuses(scalar: Unicode.Scalar) async throws {
        try await TestServer.routed { server in
            let user = try await server.enrolledUser("ivy")
            let body = try JSONSerialization.data(withJSONObject: ["name": Self.spoof(scalar)])
            let answer = try await user.device.call("PATCH", "/device/v1/self", body: body)
            #expect(answer.status == 400)
            #expect(answer.errorDescription
                == "name must be 1 to 64 characters without control or format characters (such as bidirectional overrides)")
            #expect(try await user.kit.deviceStatus(user.enrollment.id).name == "ivy's phone")
        }
    }

    @Test("device and passkey names: DeviceName refuses it, and the account page says why beside the field",
          arguments: refused.map { String(format: "U+%04X", $0.value) })
    func deviceNameRefuses(code: String) throws {
        let scalar = try #require(UInt32(code.dropFirst(2), radix: 16).flatMap(Unicode.Scalar.init))
        let typed = Self.spoof(scalar)
        #expect(DeviceName.validate(typed) == nil)
        let message = RenameRefusal(deviceID: "dev_1", typed: typed).message
        if scalar.properties.generalCategory == .format {
            #expect(message == "A name cannot contain invisible formatting characters, such as those that turn text right to left.")
        } else {
            #expect(message == "A name cannot contain control characters such as tabs or line breaks.")
        }
    }

    @Test("the console shows the refusal beside the field the name was typed in, and makes nothing")
    func consoleShowsItBesideTheField() async throws {
        try await ConsoleTests.signedIn { bench in
            let user = try await bench.post("/console/users", [("username", "carol"), ("display_name", "Carol\u{202E}")])
            #expect(user.status == 400)
            #expect(user.text.contains(#"id="display-name-error""#) && user.text.contains("without control or format characters"),
                    "\(user.text.suffix(3000))")
            let client = try await bench.post("/console/clients", [
                ("name", "Bank\u{2067}"), ("token_delivery_mode", "poll"), ("token_endpoint_auth_method", "client_secret_basic"),
            ])
            #expect(client.status == 400)
            #expect(client.text.contains(#"id="name-error""#) && client.text.contains("without control or format characters"),
                    "\(client.text.suffix(3000))")
            let users = try await bench.server.admin("GET", "/admin/v1/tenants/default/users")
            #expect((users["items"] as? [[String: any Sendable]])?.map { $0["username"] as? String } == ["root"])
            let clients = try await bench.server.admin("GET", "/admin/v1/tenants/default/clients")
            #expect((clients["items"] as? [[String: any Sendable]] ?? []).allSatisfy { $0["name"] as? String != "Bank\u{2067}" })
        }
    }

    @Test("names in any script pass, with the joiners Persian, Hindi and emoji sequences need",
          arguments: ["گوشی\u{200C}ام", "क्\u{200D}ष", "👩\u{200D}💻 laptop", "Überweisung", "Ivy's phone", "支付"])
    func joinersAndScriptsPass(name: String) async throws {
        #expect(DeviceName.validate(name) == name)
        #expect(try AdminFields.name(name) == name)
        #expect(!NameCharacters.refuses(name))
    }
}
