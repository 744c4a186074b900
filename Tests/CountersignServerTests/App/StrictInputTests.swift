import CountersignCore
import Crypto
import Foundation
import Testing
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
@testable import CountersignServer

/// Input that an API should refuse precisely and alike on both engines: numbers that are not
/// the integers a field takes, a parameter given twice, NUL characters, and timestamps no
/// device could have written. None of it changes anything, and none of it is a 500.
/// The NUL case runs on both engines (PostgreSQL's text refuses a NUL that would reach it); the
/// others drive the router in memory, and a NUL in a raw header needs a socket.
@Suite("Strict input")
struct StrictInputTests {
    @Test("a whole number written as 3.0, 1e2 or past 64 bits is refused, naming the field")
    func lenientNumbersAreRefused() async throws {
        try await TestServer.routed { server in
            let policy = "/admin/v1/tenants/default/authentication-policy"
            for (text, number) in [("3.0", "3.0"), ("1e2", "1e2"), ("9223372036854775808", "9223372036854775808")] {
                let answer = try await server.call("PUT", policy, key: server.adminKey,
                                                   body: Data(#"{"pin_attempt_limit": \#(text)}"#.utf8))
                #expect(answer.status == 400)
                #expect(answer.error == "invalid_request")
                #expect(answer.errorDescription?.hasPrefix("field pin_attempt_limit is invalid: the number \(number)") == true,
                        "\(answer.errorDescription ?? "")")
            }
            #expect(try await server.admin("GET", policy)["pin_attempt_limit"] as? Int == 3, "nothing changed")

            let userID = try await server.createUser("alice")
            let ticket = try await server.call("POST", "/admin/v1/tenants/default/users/\(userID)/enrollment-tickets",
                                               key: server.adminKey, body: Data(#"{"lifetime_seconds": 1e2}"#.utf8))
            #expect(ticket.status == 400)
            #expect(ticket.errorDescription == "field lifetime_seconds is invalid: the number 1e2 must be a whole number, written without a fraction or exponent")
        }
    }

    @Test("a query parameter given twice, or a limit with a sign or leading zero, is invalid_request",
          arguments: ["limit=1&limit=2", "cursor=a&cursor=b", "limit=+5", "limit=05"])
    func queryParametersAreStrict(query: String) async throws {
        try await TestServer.routed { server in
            let answer = try await server.admin("GET", "/admin/v1/tenants/default/users?\(query)")
            #expect(answer.status == 400)
            #expect(answer.error == "invalid_request")
        }
    }

    @Test("a NUL character anywhere a client or device can send one gets the field's own error, not a 500",
          arguments: Engine.available)
    func nulCharactersAreRefusedWhereParsed(engine: Engine) async throws {
        try await TestServer.with(engine) { server in
            let client = try await server.createClient()
            let alice = try await server.enrolledUser("alice")

            let posted = try await server.form("/token", [("grant_type", "x"), ("client_id", "cli_\0"), ("client_secret", "x")])
            #expect(posted.status == 400)
            #expect(posted.error == "invalid_request")
            #expect(posted.errorDescription == "parameter client_id must not contain a NUL character")

            let basic = Data("cli_\u{0}:secret".utf8).base64EncodedString()
            // Raw HTTP: URLSession on Linux does not return a 401 that carries a Basic challenge.
            let basicAnswer = try await server.rawForm("/token", [("grant_type", "refresh_token"), ("refresh_token", "x")],
                                                       authorization: "Basic \(basic)")
            #expect(basicAnswer.status == 401)
            #expect(basicAnswer.error == "invalid_client")

            let hint = try await server.bcAuthorize(client, [("scope", "openid"), ("login_hint", "alice\0")])
            #expect(hint.status == 400)
            #expect(hint.error == "invalid_request")

            let assertion = try Self.assertion(issuer: "cli_\0", audience: server.base)
            let asserted = try await server.rawForm("/token", [
                ("grant_type", "refresh_token"), ("refresh_token", "x"),
                ("client_assertion_type", "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"), ("client_assertion", assertion),
            ])
            #expect(asserted.status == 401)
            #expect(asserted.error == "invalid_client")

            let url = server.base + "/device/v1/requests"
            let claims = JSONValue.object([
                "htm": .string("GET"), "htu": .string(url), "iat": .integer(Int64(server.clock.now.timeIntervalSince1970)),
                "jti": .string(DeviceRequestSignature.randomNonce()), "body_sha256": .string(DeviceRequestSignature.digest(of: Data())),
            ])
            let jws = try CompactJWS.sign(header: ["typ": .string(DeviceRequestSignature.type), "kid": .string("dev_\0")],
                                          payload: claims.canonicalData, signer: alice.device.keys.signer)
            var request = URLRequest(url: try #require(URL(string: url)))
            request.setValue("\(DeviceRequestSignature.scheme) \(jws.serialized)", forHTTPHeaderField: "Authorization")
            let signed = try await server.send(request)
            #expect(signed.status == 401)
            #expect(signed.error == "malformed_signature")

            let push = try await alice.device.call("PUT", "/device/v1/self/push-token", body: Data(#"{"provider":"apns","token":"ab\u0000cd"}"#.utf8))
            #expect(push.status == 400)
            #expect(push.errorDescription == "field token must not contain a NUL character")

            let endpoint = try await server.admin("POST", "/admin/v1/tenants/default/clients", json: [
                "name": "Ping", "scopes": ["openid"], "token_delivery_mode": "ping", "notification_endpoint": "https://rp.example.com/\u{0}",
            ])
            #expect(endpoint.status == 400)
            #expect(endpoint.errorDescription == "field notification_endpoint must not contain a NUL character")

            for path in ["/admin/v1/tenants/%00/users", "/admin/v1/tenants/default/users/usr_%00", "/t/%00/.well-known/openid-configuration"] {
                let answer = try await server.admin("GET", path)
                #expect(answer.status == 400, "\(path)")
                #expect(answer.error == "invalid_request", "\(path)")
            }
        }
    }

    @Test("a NUL in a header (a device signature, say) is malformed HTTP: 400 invalid_request with a JSON body naming it")
    func nulInAHeaderIsAnsweredWithAnErrorCode() async throws {
        try await TestServer.with(.sqlite) { server in
            let connection = try RawHTTPConnection(port: server.running.port)
            try connection.send(Array("GET /device/v1/requests HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Device eyJ\u{0}x.y.z\r\n\r\n".utf8))
            let text = try await connection.response()
            #expect(text.hasPrefix("HTTP/1.1 400 "), "\(text)")
            #expect(text.contains("Content-Type: application/json"))
            #expect(text.hasSuffix(#"{"error":"invalid_request","error_description":"a header holds a character no header may hold (NUL, CR or LF; RFC 9110, section 5.5)"}"#),
                    "\(text)")
        }
    }

    @Test("an answer dated before its request or in the future is invalid_response, and nothing is decided")
    func answerTimesMustBePossible() async throws {
        try await TestServer.routed { server in
            let client = try await server.createClient()
            let alice = try await server.enrolledUser("alice")
            let authReqID = try await server.startApproval(client, user: "alice")
            let envelope = try #require(try await alice.device.inbox().first)
            let (details, plaintext) = try alice.device.open(envelope)
            let now = Int64(server.clock.now.timeIntervalSince1970)
            for issuedAt in [Int64.min, 0, now - 3600, now + 3600, Int64.max] {
                let response = ApprovalResponse(
                    requestID: details.requestID, decision: .approve, detailsDigest: TransactionDetails.digest(of: plaintext),
                    challenge: details.challenge, factors: ["confirm"], issuedAt: issuedAt)
                let answer = try await alice.device.answer(
                    envelope.id, response: try response.sign(deviceID: alice.device.id, signer: alice.device.keys.signer).serialized)
                #expect(answer.status == 400, "iat \(issuedAt)")
                #expect(answer.error == "invalid_response", "iat \(issuedAt)")
                #expect(answer.errorDescription?.hasPrefix("iat is") == true, "\(answer.errorDescription ?? "")")
            }
            #expect(try await server.token(client, authReqID).error == "authorization_pending")
            #expect(try await alice.device.decideNewest(.approve).status == 200)
        }
    }

    @Test("a response whose number does not fit in 64 bits says so, not that a claim is missing")
    func hugeNumberIsNamed() async throws {
        try await TestServer.routed { server in
            let client = try await server.createClient()
            let alice = try await server.enrolledUser("alice")
            _ = try await server.startApproval(client, user: "alice")
            let envelope = try #require(try await alice.device.inbox().first)
            let (details, plaintext) = try alice.device.open(envelope)
            let payload = """
                {"challenge":"\(details.challenge)","decision":"approve","details_sha256":"\(TransactionDetails.digest(of: plaintext))",\
                "factors":["confirm"],"iat":\(Int64(server.clock.now.timeIntervalSince1970)),"number":18446744073709551616,\
                "request_id":"\(details.requestID)"}
                """
            let jws = try CompactJWS.sign(header: ["typ": .string(ApprovalResponse.type), "kid": .string(alice.device.id)],
                                          payload: Data(payload.utf8), signer: alice.device.keys.signer)
            let answer = try await alice.device.answer(envelope.id, response: jws.serialized)
            #expect(answer.status == 400)
            #expect(answer.error == "invalid_response")
            #expect(answer.errorDescription == "the response's payload is not acceptable JSON: number: the number 18446744073709551616 does not fit in 64 bits",
                    "\(answer.errorDescription ?? "")")
        }
    }

    /// A client assertion signed by a key no client has; only its claims matter here.
    static func assertion(issuer: String, audience: String) throws -> String {
        let claims = JSONValue.object([
            "iss": .string(issuer), "sub": .string(issuer), "aud": .string(audience), "jti": .string(UUID().uuidString),
            "iat": .integer(Int64(Date().timeIntervalSince1970)), "exp": .integer(Int64(Date().timeIntervalSince1970) + 60),
        ])
        return try CompactJWS.sign(header: ["typ": .string("JWT")], payload: claims.canonicalData,
                                   signer: P256.Signing.PrivateKey()).serialized
    }
}
