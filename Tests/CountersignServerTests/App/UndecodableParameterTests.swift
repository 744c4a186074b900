import CountersignCore
import Crypto
import Foundation
import Testing
@testable import CountersignServer

/// Parameters no rule could accept — a NUL, a bidirectional override, a space where an id has
/// none — get the answer their standard gives, as the documentation says: no token is found
/// (RFC 7009 §2.2, RFC 7662 §2.2), a binding message is `invalid_binding_message` (CIBA §13),
/// a device id is a malformed signature.
@Suite("Undecodable parameters")
struct UndecodableParameterTests {
    /// `token` values that can name no token: an override and a NUL, each alone and together.
    static let garbageTokens = ["%E2%80%AE%00", "%00", "%E2%80%AE", "abc%00def"]

    @Test("revoking a token that holds control characters answers 200 {} like any unknown token", arguments: garbageTokens)
    func revokingGarbageIsNoError(token: String) async throws {
        try await TestServer.routed { server in
            let client = try await server.createClient()
            let answer = try await server.rawForm("/revoke", [], basic: client, body: "token=\(token)")
            #expect(answer.status == 200, "\(answer.errorDescription ?? "")")
            #expect(String(decoding: answer.data, as: UTF8.self) == "{}")
        }
    }

    @Test("introspecting a token that holds control characters answers 200 {\"active\":false}", arguments: garbageTokens)
    func introspectingGarbageIsInactive(token: String) async throws {
        try await TestServer.routed { server in
            let client = try await server.createClient()
            let answer = try await server.rawForm("/introspect", [], basic: client, body: "token=\(token)")
            #expect(answer.status == 200, "\(answer.errorDescription ?? "")")
            #expect(String(decoding: answer.data, as: UTF8.self) == #"{"active":false}"#)
        }
    }

    @Test("a binding message holding a control character is invalid_binding_message", arguments: ["%00", "Pay%00now", "%E2%80%AE"])
    func controlCharacterInBindingMessage(message: String) async throws {
        try await TestServer.routed { server in
            let client = try await server.createClient()
            let answer = try await server.rawForm(
                "/bc-authorize", [], basic: client, body: "scope=openid&login_hint=alice&binding_message=\(message)")
            #expect(answer.status == 400)
            #expect(answer.error == "invalid_binding_message", "\(answer.errorDescription ?? "")")
        }
    }

    @Test("a NUL in any other form parameter is invalid_request naming the parameter")
    func nulElsewhereIsInvalidRequest() async throws {
        try await TestServer.routed { server in
            let client = try await server.createClient()
            let answer = try await server.rawForm("/bc-authorize", [], basic: client, body: "scope=openid&login_hint=al%00ice")
            #expect(answer.status == 400)
            #expect(answer.error == "invalid_request")
            #expect(answer.errorDescription == "parameter login_hint must not contain a NUL character")
        }
    }

    /// A device-signed request's JWS whose header names `kid`, signed as the SDK signs.
    static func deviceJWS(kid: String) throws -> String {
        let claims = JSONValue.object([
            "htm": .string("GET"), "htu": .string("https://auth.example.com/device/v1/self"),
            "iat": .integer(Int64(Date().timeIntervalSince1970)), "jti": .string(DeviceRequestSignature.randomNonce()),
            "body_sha256": .string(DeviceRequestSignature.digest(of: Data())),
        ])
        return try CompactJWS.sign(
            header: ["typ": .string(DeviceRequestSignature.type), "kid": .string(kid)], payload: claims.canonicalData,
            signer: P256.Signing.PrivateKey()).serialized
    }

    @Test("a device kid is printable ASCII without spaces, ! to ~, as protocol.md says",
          arguments: ["dev_ 01", " dev_01", "dev_01\u{7F}", "dév_01", "dev_\u{202E}01", "dev_\t01"])
    func deviceKeyIDOutsideVisibleASCIIIsMalformed(kid: String) throws {
        let jws = try Self.deviceJWS(kid: kid)
        #expect(throws: DeviceRequestError.malformed("kid (the device id) must be printable ASCII without spaces (! to ~)")) {
            try DeviceRequestSignature.parse(jws)
        }
    }

    @Test("a device kid of any visible ASCII characters parses")
    func visibleASCIIKeyIDParses() throws {
        let kid = "dev_!\"#$%&'()*+,-./09:;<=>?@AZ[\\]^_`az{|}~"
        #expect(try DeviceRequestSignature.parse(try Self.deviceJWS(kid: kid)).deviceID == kid)
    }
}
