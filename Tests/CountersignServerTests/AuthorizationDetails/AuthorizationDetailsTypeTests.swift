import CountersignCore
import Foundation
import Testing
@testable import CountersignServer

/// The tenant's registry of authorization detail types, the clients registered for them, and
/// discovery: `/admin/v1/tenants/{tenant}/authorization-detail-types` on a real server.
@Suite("Authorization details: types, clients and discovery")
struct AuthorizationDetailsTypeTests {
    typealias Fixtures = AuthorizationDetailsFixtures

    @Test("a registry put is read back as sent, and an empty one removes every type")
    func registryRoundTrip() async throws {
        try await TestServer.routed { server in
            let empty = try await server.admin("GET", "/admin/v1/tenants/default/authorization-detail-types")
            #expect(empty.status == 200)
            #expect(try JSONValue(parsing: empty.data) == .object(["types": .object([:])]))
            try await server.registerDetailTypes()
            let read = try await server.admin("GET", "/admin/v1/tenants/default/authorization-detail-types")
            #expect(try JSONValue(parsing: read.data) == (try Fixtures.parsedRegistry.schema))
            try await server.registerDetailTypes(#"{"types": {}}"#)
            let cleared = try await server.admin("GET", "/admin/v1/tenants/default/authorization-detail-types")
            #expect(try JSONValue(parsing: cleared.data) == .object(["types": .object([:])]))
            #expect(try await server.auditActions().contains("tenant.authorization_detail_types_set"))
        }
    }

    static let badRegistries: [(name: String, body: String, description: String)] = [
        ("not JSON", "{", "field types is invalid: the body is not JSON"),
        ("no types member", "{}", "field types is required"),
        ("an unknown top-level member", #"{"types": {}, "version": 1}"#, "field version is invalid"),
        ("a type that is not an object", #"{"types": {"a": 1}}"#, "field types.a is invalid: must be an object"),
        ("a type name with a space", #"{"types": {"a b": {"fields": {}}}}"#, "field types.a b is invalid"),
        ("a type without fields", #"{"types": {"a": {}}}"#, "field types.a.fields is required"),
        ("a field without a kind", #"{"types": {"a": {"fields": {"x": {}}}}}"#, "field types.a.fields.x.kind is required"),
        ("an unknown kind", #"{"types": {"a": {"fields": {"x": {"kind": "money"}}}}}"#,
         "field types.a.fields.x.kind is invalid: must be one of"),
        ("a misspelt member", #"{"types": {"a": {"fields": {"x": {"kind": "string", "maxLength": 3}}}}}"#,
         "field types.a.fields.x.maxLength is invalid"),
        ("max_length of zero", #"{"types": {"a": {"fields": {"x": {"kind": "string", "max_length": 0}}}}}"#,
         "field types.a.fields.x.max_length is invalid"),
        ("required as a string", #"{"types": {"a": {"fields": {"x": {"kind": "boolean", "required": "yes"}}}}}"#,
         "field types.a.fields.x.required is invalid"),
        ("an object without fields", #"{"types": {"a": {"fields": {"x": {"kind": "object"}}}}}"#,
         "field types.a.fields.x.fields is required"),
        ("a field named type", #"{"types": {"a": {"fields": {"type": {"kind": "string"}}}}}"#,
         "field types.a.fields.type is invalid"),
        ("a common field of the wrong kind", #"{"types": {"a": {"fields": {"actions": {"kind": "string"}}}}}"#,
         "field types.a.fields.actions is invalid: actions is a common field of RFC 9396 and must be of kind string_array"),
    ]

    @Test("every mistake in a registry is a 400 naming the member, and changes nothing")
    func badRegistriesAreRefused() async throws {
        try await TestServer.routed { server in
            try await server.registerDetailTypes()
            for bad in Self.badRegistries {
                let answer = try await server.putDetailTypes(bad.body)
                #expect(answer.status == 400, "\(bad.name)")
                #expect(answer.errorDescription?.hasPrefix(bad.description) == true,
                        "\(bad.name): \(answer.errorDescription ?? "")")
            }
            let read = try await server.admin("GET", "/admin/v1/tenants/default/authorization-detail-types")
            #expect(try JSONValue(parsing: read.data) == (try Fixtures.parsedRegistry.schema))
        }
    }

    @Test("the registry takes authentication-policy:manage")
    func registryNeedsItsRight() async throws {
        try await TestServer.routed { server in
            let created = try await server.admin(
                "POST", "/admin/v1/tenants/default/admin-keys", json: ["name": "clients", "rights": ["clients:manage"]])
            let key = try #require(created["secret"] as? String)
            let denied = try await server.call("GET", "/admin/v1/tenants/default/authorization-detail-types", key: key)
            #expect(denied.status == 403)
            #expect(denied["missing_right"] as? String == "authentication-policy:manage")
        }
    }

    @Test("a client is registered only for types of the tenant's registry")
    func clientTypesMustBeRegistered() async throws {
        try await TestServer.routed { server in
            let early = try await server.admin("POST", "/admin/v1/tenants/default/clients", json: [
                "name": "Payments", "authorization_details_types": ["payment_initiation"],
            ])
            #expect(early.status == 400)
            #expect(early.errorDescription?.hasPrefix(
                "field authorization_details_types is invalid: payment_initiation is not a type of the tenant's registry") == true)
            try await server.registerDetailTypes()
            let client = try await server.detailsClient()
            let shown = try await server.admin("GET", "/admin/v1/tenants/default/clients/\(client.id)")
            #expect(shown["authorization_details_types"] as? [String] == ["payment_initiation"])
            let path = "/admin/v1/tenants/default/clients/\(client.id)"
            let unknown = try await server.admin("PATCH", path, json: ["authorization_details_types": ["crypto_transfer"]])
            #expect(unknown.status == 400)
            let twice = try await server.admin("PATCH", path, json: ["authorization_details_types": ["payment_initiation", "payment_initiation"]])
            #expect(twice.status == 400)
            let both = try await server.admin(
                "PATCH", path, json: ["authorization_details_types": ["payment_initiation", "account_information"]])
            #expect(both["authorization_details_types"] as? [String] == ["payment_initiation", "account_information"])
            let none = try await server.admin("PATCH", path, json: ["authorization_details_types": [String]()])
            #expect(none["authorization_details_types"] as? [String] == [])
        }
    }

    @Test("discovery lists the tenant's types, and nothing while it has none")
    func discoveryListsTypes() async throws {
        try await TestServer.routed { server in
            let before = try await server.call("GET", "/.well-known/openid-configuration")
            #expect(before["authorization_details_types_supported"] == nil)
            try await server.registerDetailTypes()
            let after = try await server.call("GET", "/.well-known/openid-configuration")
            #expect(after["authorization_details_types_supported"] as? [String] == ["account_information", "payment_initiation"])
        }
    }
}
