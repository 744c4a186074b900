import CountersignCore
import Foundation
import Testing

/// `TransactionDetails.authorizationDetails`: what the device is shown and signs of an RFC 9396
/// request, and the version that keeps older authenticators from approving it blind.
@Suite("Authorization details in the sealed request details")
struct AuthorizationDetailsPayloadTests {
    static let payment: JSONValue = .object([
        "type": .string("payment_initiation"),
        "instructedAmount": .object(["amount": .string("123.50"), "currency": .string("EUR")]),
        "creditorName": .string("Merchant A"),
        "creditorAccount": .object(["iban": .string("DE02100100109307118603")]),
    ])

    static func details(_ authorizationDetails: [JSONValue]?) -> TransactionDetails {
        TransactionDetails(
            requestID: "txn_01HZX3", tenant: "acme", user: .init(id: "usr_1", name: "ada"),
            client: .init(id: "cli_1", name: "Shop"), bindingMessage: nil, scope: ["openid"], acrValues: nil,
            context: .init(ipAddress: nil, userAgent: nil), requestedAt: 1_800_000_000, expiresAt: 1_800_000_120,
            challenge: "q1bW5lQ0S3YxNWRoY2hhbGxlbmdlMzJieXRlcw", authorizationDetails: authorizationDetails)
    }

    @Test("details with authorization details are version 2 and parse back the same")
    func versionTwoRoundTrip() throws {
        let details = Self.details([Self.payment])
        #expect(details.version == TransactionDetails.authorizationDetailsVersion)
        let bytes = try details.canonicalData()
        #expect(String(decoding: bytes, as: UTF8.self).contains(#""authorization_details":[{"creditorAccount""#))
        #expect(try TransactionDetails(canonicalBytes: bytes) == details)
    }

    @Test("details without them stay version 1, with no member added")
    func versionOneUnchanged() throws {
        let details = Self.details(nil)
        #expect(details.version == TransactionDetails.currentVersion)
        #expect(!String(decoding: try details.canonicalData(), as: UTF8.self).contains("authorization_details"))
    }

    @Test("a version that does not match the presence of authorization details is refused", arguments: [true, false])
    func mismatchedVersionIsRefused(withDetails: Bool) throws {
        var details = Self.details(withDetails ? [Self.payment] : nil)
        details.version = withDetails ? TransactionDetails.currentVersion : TransactionDetails.authorizationDetailsVersion
        #expect(throws: ApprovalMessageError.unsupportedVersion(details.version)) {
            try TransactionDetails(canonicalBytes: try details.canonicalData())
        }
    }

    @Test("another amount or payee is another digest")
    func digestBindsAmountAndPayee() throws {
        let original = TransactionDetails.digest(of: try Self.details([Self.payment]).canonicalData())
        guard case .object(var members) = Self.payment else { return }
        members["instructedAmount"] = .object(["amount": .string("123.51"), "currency": .string("EUR")])
        #expect(TransactionDetails.digest(of: try Self.details([.object(members)]).canonicalData()) != original)
        members = ["type": .string("payment_initiation"), "creditorName": .string("Merchant B")]
        #expect(TransactionDetails.digest(of: try Self.details([.object(members)]).canonicalData()) != original)
    }
}
