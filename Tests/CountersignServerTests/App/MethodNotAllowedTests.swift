import Foundation
import Testing
@testable import CountersignServer

/// RFC 9110 §15.5.6: a method the path does not take is 405 with the methods it does take in
/// `Allow`; a path no route has stays 404.
@Suite("Methods a path does not take")
struct MethodNotAllowedTests {
    @Test("A method the path does not take is 405 with Allow", arguments: [
        ("GET", "/token", "POST"),
        ("PUT", "/t/default/device/v1/self", "DELETE, GET, PATCH"),
        ("TRACE", "/admin/v1/tenants/default/users/usr_1", "DELETE, GET, PATCH"),
        ("DELETE", "/openapi.json", "GET"),
    ])
    func methodNotTakenIs405(method: String, path: String, allow: String) async throws {
        try await TestServer.routed { server in
            let answer = try await server.call(method, path, key: server.adminKey)
            #expect(answer.status == 405)
            #expect(answer.header("Allow") == allow)
            #expect(answer.error == "method_not_allowed")
        }
    }

    @Test("Below a SCIM base the 405 and the 404 are SCIM error documents; a literal segment wins over a parameter")
    func scimPaths() async throws {
        try await TestServer.routed { server in
            // `/Users/.search` is its own route, not `/Users/{id}`: only POST is allowed.
            let search = try await server.call("GET", "/scim/v2/Users/.search", key: server.adminKey)
            #expect(search.status == 405 && search.header("Allow") == "POST")
            #expect(search["schemas"] as? [String] == ["urn:ietf:params:scim:api:messages:2.0:Error"])
            #expect(search["status"] as? String == "405")
            let schemas = try await server.call("DELETE", "/t/default/scim/v2/Schemas")
            #expect(schemas.status == 405 && schemas.header("Allow") == "GET")
            let nothing = try await server.call("GET", "/scim/v2/Nothing")
            #expect(nothing.status == 404 && nothing["status"] as? String == "404")
            #expect(nothing.header("Content-Type") == "application/scim+json")
        }
    }

    @Test func aPathNoRouteHasIs404() async throws {
        try await TestServer.routed { server in
            let answer = try await server.call("GET", "/device/v1/nothing-here")
            #expect(answer.status == 404 && answer.header("Allow") == nil)
        }
    }
}
