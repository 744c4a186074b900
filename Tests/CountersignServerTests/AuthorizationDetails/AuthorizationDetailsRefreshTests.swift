import CountersignCore
import Foundation
import Testing
@testable import CountersignServer

private typealias Fixtures = AuthorizationDetailsFixtures

/// RFC 9396 §6: a refresh may ask for the approved details or part of them, never for others.
@Suite("Authorization details at refresh")
struct AuthorizationDetailsRefreshTests {
    /// The payment as granted, and a second payment to another payee, both approved at once.
    static var secondPayment: String {
        get throws {
            try Fixtures.payment {
                $0["creditorName"] = .string("Merchant B")
                $0["creditorAccount"] = .object(["iban": .string("DE89370400440532013000")])
            }
        }
    }

    static func bothPayments() throws -> String {
        let second = try JSONValue(parsing: Data(try secondPayment.utf8))
        let first = try JSONValue(parsing: Data(Fixtures.paymentDetails.utf8))
        guard case .array(let a) = first, case .array(let b) = second else { throw CancellationError() }
        return JSONValue.array(a + b).canonicalString
    }

    static func refresh(_ server: TestServer, _ client: TestClient, _ token: String, details: String?) async throws -> TestServer.Answer {
        var parameters = [("grant_type", "refresh_token"), ("refresh_token", token)]
        if let details { parameters.append(("authorization_details", details)) }
        return try await server.form("/token", parameters, basic: client)
    }

    static func approved(_ server: TestServer, _ client: TestClient, _ alice: EnrolledUser, details: String) async throws
        -> TestServer.Answer {
        let started = try await server.bcAuthorize(client, [
            ("scope", "openid offline_access"), ("login_hint", "alice"), ("authorization_details", details),
        ])
        #expect(started.status == 200, "\(started.errorDescription ?? "")")
        #expect(try await alice.device.decideNewest(.approve).status == 200)
        let tokens = try await server.token(client, try started.string("auth_req_id"))
        #expect(tokens.status == 200, "\(tokens.errorDescription ?? "")")
        return tokens
    }

    @Test("a refresh asking for another amount or payee is invalid_authorization_details; the token stays usable")
    func otherDetailsAreRefused() async throws {
        try await TestServer.routed { server in
            try await server.registerDetailTypes()
            let client = try await server.detailsClient()
            let alice = try await server.enrolledUser("alice")
            let tokens = try await Self.approved(server, client, alice, details: Fixtures.paymentDetails)
            let refreshToken = try tokens.string("refresh_token")
            let moreMoney = try Fixtures.payment {
                $0["instructedAmount"] = .object(["amount": .string("9123.50"), "currency": .string("EUR")])
            }
            let otherPayee = try Self.secondPayment
            for asked in [moreMoney, otherPayee, try Self.bothPayments()] {
                let refused = try await Self.refresh(server, client, refreshToken, details: asked)
                #expect(refused.status == 400)
                #expect(refused.error == "invalid_authorization_details")
                #expect(refused.errorDescription?.hasSuffix("is not one of the authorization details this grant holds") == true,
                        "\(refused.errorDescription ?? "")")
            }
            let notJSON = try await Self.refresh(server, client, refreshToken, details: "[{")
            #expect(notJSON.error == "invalid_authorization_details")
            let fraction = try await Self.refresh(server, client, refreshToken, details: #"[{"type":"payment_initiation","n":1.5}]"#)
            #expect(fraction.errorDescription == "authorization_details[0].n: the number 1.5 must be a whole number, written without a fraction or exponent")
            // Nothing was used up: the same token refreshes with the details as granted.
            let granted = try await Self.refresh(server, client, refreshToken, details: nil)
            #expect(granted.status == 200, "\(granted.errorDescription ?? "")")
            #expect(try JSONValue(parsing: granted.data)["authorization_details"] == (try JSONValue(parsing: Data(Fixtures.paymentDetails.utf8))))
        }
    }

    @Test("a refresh asking for part of the approved details is granted that part")
    func aSubsetIsGranted() async throws {
        try await TestServer.routed { server in
            try await server.registerDetailTypes()
            let client = try await server.detailsClient()
            let alice = try await server.enrolledUser("alice")
            let tokens = try await Self.approved(server, client, alice, details: try Self.bothPayments())
            let second = try JSONValue(parsing: Data(try Self.secondPayment.utf8))
            let narrowed = try await Self.refresh(server, client, try tokens.string("refresh_token"), details: try Self.secondPayment)
            #expect(narrowed.status == 200, "\(narrowed.errorDescription ?? "")")
            #expect(try JSONValue(parsing: narrowed.data)["authorization_details"] == second)
            #expect(try CompactJWS(parsing: try narrowed.string("access_token")).payloadJSON()["authorization_details"] == second)
            // The next refresh starts again from the whole grant: the subset was of one token, not of the grant.
            let whole = try await Self.refresh(server, client, try narrowed.string("refresh_token"), details: nil)
            #expect(try JSONValue(parsing: whole.data)["authorization_details"] == (try JSONValue(parsing: Data(try Self.bothPayments().utf8))))
            // The same element twice is not a subset.
            let twice = try await Self.refresh(server, client, try whole.string("refresh_token"),
                                               details: "[\(Fixtures.payment),\(Fixtures.payment)]")
            #expect(twice.error == "invalid_authorization_details")
        }
    }

    @Test("a refresh of a grant without details that asks for some is invalid_authorization_details")
    func noDetailsGranted() async throws {
        try await TestServer.routed { server in
            try await server.registerDetailTypes()
            let client = try await server.detailsClient()
            let alice = try await server.enrolledUser("alice")
            let started = try await server.bcAuthorize(client, [("scope", "openid offline_access"), ("login_hint", "alice")])
            #expect(try await alice.device.decideNewest(.approve).status == 200)
            let tokens = try await server.token(client, try started.string("auth_req_id"))
            let refused = try await Self.refresh(server, client, try tokens.string("refresh_token"), details: Fixtures.paymentDetails)
            #expect(refused.status == 400)
            #expect(refused.error == "invalid_authorization_details")
            #expect(refused.errorDescription == "the grant of this refresh token has no authorization details")
        }
    }
}
