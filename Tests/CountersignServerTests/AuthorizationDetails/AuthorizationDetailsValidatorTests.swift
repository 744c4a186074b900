import CountersignCore
import Foundation
import Testing
@testable import CountersignServer

/// `AuthorizationDetails` and `AuthorizationDetailTypes` without a server: what a request may
/// carry, and what a tenant may register.
@Suite("Authorization details: the validator")
struct AuthorizationDetailsValidatorTests {
    typealias Fixtures = AuthorizationDetailsFixtures

    func check(_ text: String, allowed: [String] = ["payment_initiation"]) throws -> AuthorizationDetails {
        try AuthorizationDetails(parameter: .text(text), allowedTypes: allowed, registry: try Fixtures.parsedRegistry)
    }

    @Test("RFC 9396's payment passes unchanged")
    func paymentPasses() throws {
        let details = try check(Fixtures.paymentDetails)
        #expect(details.json == (try JSONValue(parsing: Data(Fixtures.paymentDetails.utf8))))
        #expect(details.types == ["payment_initiation"])
    }

    @Test("several elements, of one type or several, pass")
    func severalElements() throws {
        let text = "[\(Fixtures.payment),\(Fixtures.payment),{\"type\":\"account_information\",\"actions\":[\"list_accounts\"]}]"
        let details = try check(text, allowed: ["payment_initiation", "account_information"])
        #expect(details.elements.count == 3)
        #expect(details.types == ["payment_initiation", "account_information"])
    }

    struct Refusal: Sendable, CustomTestStringConvertible {
        let name: String
        let text: @Sendable () throws -> String
        let error: AuthorizationDetailsError
        var testDescription: String { name }
    }

    static let refusals: [Refusal] = [
        Refusal(name: "not JSON", text: { "[{" }, error: .notJSON("")),
        Refusal(name: "a fraction", text: { #"[{"type":"payment_initiation","batchCount":1.5}]"# },
                error: .unsupportedJSON(path: "[0].batchCount", "the number 1.5 must be a whole number, written without a fraction or exponent")),
        Refusal(name: "a number past 64 bits", text: { #"[{"type":"payment_initiation","batchCount":9223372036854775808}]"# },
                error: .unsupportedJSON(path: "[0].batchCount", "the number 9223372036854775808 does not fit in 64 bits")),
        Refusal(name: "an object, not an array", text: { Fixtures.payment }, error: .notArray),
        Refusal(name: "an empty array", text: { "[]" }, error: .empty),
        Refusal(name: "an element that is a string", text: { #"["payment_initiation"]"# }, error: .elementNotObject(index: 0)),
        Refusal(name: "no type", text: { #"[{"creditorName":"A"}]"# }, error: .missingType(index: 0)),
        Refusal(name: "a type that is a number", text: { #"[{"type":7}]"# }, error: .missingType(index: 0)),
        Refusal(name: "an unknown type", text: { #"[{"type":"crypto_transfer"}]"# }, error: .unknownType(index: 0, "crypto_transfer")),
        Refusal(name: "a type the client may not use", text: { #"[{"type":"account_information"}]"# },
                error: .typeNotAllowed(index: 0, "account_information")),
        Refusal(name: "the second element at fault", text: { "[\(Fixtures.payment),{\"type\":\"x\"}]" },
                error: .unknownType(index: 1, "x")),
        Refusal(name: "a field the type does not have",
                text: { try Fixtures.payment { $0["debtorAccount"] = .string("DE1") } },
                error: .fieldNotAllowed(index: 0, path: "debtorAccount")),
        Refusal(name: "a common field the type does not list",
                text: { try Fixtures.payment { $0["privileges"] = .array([.string("admin")]) } },
                error: .fieldNotAllowed(index: 0, path: "privileges")),
        Refusal(name: "a nested field the type does not have",
                text: { try Fixtures.payment { $0["creditorAccount"] = .object(["iban": .string("DE1"), "bic": .string("X")]) } },
                error: .fieldNotAllowed(index: 0, path: "creditorAccount.bic")),
        Refusal(name: "a required field missing", text: { try Fixtures.payment { $0["creditorName"] = nil } },
                error: .missingField(index: 0, path: "creditorName")),
        Refusal(name: "a required nested field missing",
                text: { try Fixtures.payment { $0["instructedAmount"] = .object(["amount": .string("1.00")]) } },
                error: .missingField(index: 0, path: "instructedAmount.currency")),
        Refusal(name: "an amount as a number",
                text: { try Fixtures.payment { $0["instructedAmount"] = .object(["amount": .integer(123), "currency": .string("EUR")]) } },
                error: .invalidField(index: 0, path: "instructedAmount.amount", "")),
        Refusal(name: "an amount with a sign",
                text: { try Fixtures.payment { $0["instructedAmount"] = .object(["amount": .string("-1.00"), "currency": .string("EUR")]) } },
                error: .invalidField(index: 0, path: "instructedAmount.amount", "")),
        Refusal(name: "a lower-case currency",
                text: { try Fixtures.payment { $0["instructedAmount"] = .object(["amount": .string("1.00"), "currency": .string("eur")]) } },
                error: .invalidField(index: 0, path: "instructedAmount.currency", "")),
        Refusal(name: "a name too long", text: { try Fixtures.payment { $0["creditorName"] = .string(String(repeating: "A", count: 71)) } },
                error: .invalidField(index: 0, path: "creditorName", "")),
        Refusal(name: "a name with a bidirectional override",
                text: { try Fixtures.payment { $0["creditorName"] = .string("Merchant \u{202E}A") } },
                error: .invalidField(index: 0, path: "creditorName", "")),
        Refusal(name: "a string array holding a number",
                text: { try Fixtures.payment { $0["actions"] = .array([.string("initiate"), .integer(1)]) } },
                error: .invalidField(index: 0, path: "actions[1]", "")),
        Refusal(name: "a boolean as a string", text: { try Fixtures.payment { $0["urgent"] = .string("true") } },
                error: .invalidField(index: 0, path: "urgent", "")),
        Refusal(name: "an object as a string", text: { try Fixtures.payment { $0["creditorAccount"] = .string("DE02") } },
                error: .invalidField(index: 0, path: "creditorAccount", "")),
        Refusal(name: "more than 8 KiB",
                text: { try Fixtures.payment { $0["remittanceInformationUnstructured"] = .string(String(repeating: "r", count: 8200)) } },
                error: .tooLarge(limit: 8192)),
    ]

    @Test("each malformed or unacceptable value gets its own refusal", arguments: refusals)
    func refused(_ refusal: Refusal) throws {
        let text = try refusal.text()
        do {
            _ = try check(text)
            Issue.record("\(refusal.name) was accepted")
        } catch let error as AuthorizationDetailsError {
            #expect(Self.sameCase(error, refusal.error), "\(error)")
        }
    }

    @Test("every refusal is invalid_authorization_details naming the element and field")
    func refusalsAreInvalidAuthorizationDetails() throws {
        let error = AuthorizationDetailsError.missingField(index: 2, path: "instructedAmount.currency").oauthError
        #expect(error.code == .invalidAuthorizationDetails)
        #expect(error.status == .badRequest)
        #expect(error.errorDescription == "authorization_details[2].instructedAmount.currency is required by its type")
    }

    @Test("amounts: digits and at most one point, no sign or exponent", arguments: [
        ("123.50", true), ("0", true), ("0.5", true), ("10", true), ("1.12345", true),
        ("", false), (".5", false), ("5.", false), ("01.00", false), ("1e3", false), ("1,00", false), ("1.123456", false),
        ("+1", false), ("1.2.3", false), (String(repeating: "9", count: 19), false),
    ])
    func amounts(text: String, valid: Bool) {
        #expect(AuthorizationDetails.isAmount(text) == valid)
    }

    /// Descriptions aside: the case and its element and path.
    static func sameCase(_ lhs: AuthorizationDetailsError, _ rhs: AuthorizationDetailsError) -> Bool {
        switch (lhs, rhs) {
        case (.notJSON, .notJSON): true
        case (.invalidField(let a, let p, _), .invalidField(let b, let q, _)): a == b && p == q
        default: lhs == rhs
        }
    }
}
