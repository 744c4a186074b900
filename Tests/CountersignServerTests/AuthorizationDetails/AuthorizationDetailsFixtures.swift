import CountersignCore
import Foundation
import Testing
@testable import CountersignServer

/// The payment-initiation type of docs/ciba.md and RFC 9396's running example, for the
/// authorization details suites.
enum AuthorizationDetailsFixtures {
    /// A registry with `payment_initiation` and `account_information`.
    static let registry = #"""
        {"types": {
          "payment_initiation": {"fields": {
            "actions": {"kind": "string_array", "max_length": 20},
            "locations": {"kind": "string_array", "max_length": 200},
            "instructedAmount": {"kind": "object", "required": true, "fields": {
              "amount": {"kind": "amount", "required": true},
              "currency": {"kind": "currency", "required": true}}},
            "creditorName": {"kind": "string", "max_length": 70, "required": true},
            "creditorAccount": {"kind": "object", "required": true, "fields": {
              "iban": {"kind": "string", "max_length": 34, "required": true}}},
            "remittanceInformationUnstructured": {"kind": "string", "max_length": 140},
            "urgent": {"kind": "boolean"},
            "batchCount": {"kind": "number"}}},
          "account_information": {"fields": {
            "actions": {"kind": "string_array"},
            "locations": {"kind": "string_array"}}}
        }}
        """#

    /// RFC 9396 §2's payment, as one element.
    static let payment = #"""
        {"type": "payment_initiation", "actions": ["initiate", "status", "cancel"],
         "locations": ["https://example.com/payments"],
         "instructedAmount": {"currency": "EUR", "amount": "123.50"}, "creditorName": "Merchant A",
         "creditorAccount": {"iban": "DE02100100109307118603"}, "remittanceInformationUnstructured": "Ref Number Merchant"}
        """#

    static let paymentDetails = "[\(payment)]"

    static var registryJSON: JSONValue {
        get throws { try JSONValue(parsing: Data(registry.utf8)) }
    }

    static var parsedRegistry: AuthorizationDetailTypes {
        get throws { try AuthorizationDetailTypes(schema: registryJSON) }
    }

    /// The payment element with `change` applied to its members.
    static func payment(_ change: (inout [String: JSONValue]) -> Void) throws -> String {
        guard case .object(var members) = try JSONValue(parsing: Data(payment.utf8)) else { throw CancellationError() }
        change(&members)
        return JSONValue.array([.object(members)]).canonicalString
    }
}

extension TestServer {
    /// Registers the fixture types in `tenant`; expects success.
    func registerDetailTypes(_ registry: String = AuthorizationDetailsFixtures.registry, tenant: String = "default") async throws {
        let answer = try await putDetailTypes(registry, tenant: tenant)
        #expect(answer.status == 200, "types: \(answer.errorDescription ?? String(decoding: answer.data, as: UTF8.self))")
    }

    func putDetailTypes(_ body: String, tenant: String = "default") async throws -> Answer {
        try await call("PUT", "/admin/v1/tenants/\(tenant)/authorization-detail-types", key: adminKey, body: Data(body.utf8))
    }

    /// A poll client allowed `types`, with `scopes`.
    func detailsClient(types: [String] = ["payment_initiation"],
                       scopes: [String] = ["openid", "offline_access"]) async throws -> TestClient {
        let answer = try await admin("POST", "/admin/v1/tenants/default/clients", json: [
            "name": "Payments", "scopes": scopes, "authorization_details_types": types,
        ])
        #expect(answer.status == 201, "client: \(answer.errorDescription ?? "")")
        let client = try #require(answer["client"] as? [String: any Sendable])
        return TestClient(id: try #require(client["client_id"] as? String),
                          secret: try #require(answer["client_secret"] as? String))
    }

    /// The number of requests stored, to show a refused one left nothing behind.
    func storedRequestCount() async throws -> Int {
        try await database.run("SELECT id FROM approval_transactions").count
    }
}
