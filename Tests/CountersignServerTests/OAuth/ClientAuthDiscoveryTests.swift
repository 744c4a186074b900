import Foundation
import Testing
@testable import CountersignServer

/// What the provider metadata says about client authentication, signed requests and user codes.
@Suite("Discovery of client authentication and signed requests")
struct ClientAuthDiscoveryTests {
    @Test("discovery lists private_key_jwt, the signing algorithms, the request parameter and user codes")
    func discoveryListsMethodsAndAlgorithms() async throws {
        try await TestServer.routed { server in
            let metadata = try await server.call("GET", "/.well-known/openid-configuration")
            #expect(metadata.status == 200)
            #expect(metadata["token_endpoint_auth_methods_supported"] as? [String]
                    == ["client_secret_basic", "client_secret_post", "private_key_jwt", "none"])
            #expect(metadata["token_endpoint_auth_signing_alg_values_supported"] as? [String] == ["ES256", "RS256"])
            #expect(metadata["backchannel_authentication_request_signing_alg_values_supported"] as? [String] == ["ES256", "RS256"])
            // Signed requests are CIBA's (bc-authorize), not the authorization endpoint's.
            #expect(metadata["request_parameter_supported"] as? Bool == false)
            #expect(metadata["backchannel_user_code_parameter_supported"] as? Bool == true)
            // A public client may revoke its tokens (RFC 7009 §2.1), not introspect them.
            #expect(metadata["revocation_endpoint_auth_methods_supported"] as? [String]
                    == ["client_secret_basic", "client_secret_post", "private_key_jwt", "none"])
            #expect(metadata["introspection_endpoint_auth_methods_supported"] as? [String]
                    == ["client_secret_basic", "client_secret_post", "private_key_jwt"])
            for endpoint in ["revocation", "introspection"] {
                #expect(metadata["\(endpoint)_endpoint_auth_signing_alg_values_supported"] as? [String] == ["ES256", "RS256"],
                        "\(endpoint)")
            }
        }
    }
}
