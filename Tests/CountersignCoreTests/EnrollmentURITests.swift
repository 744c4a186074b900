import CountersignCore
import Crypto
import Foundation
import Testing

/// `countersign://enroll?v=1&server=…&ticket=…&fp=…`, the URI a QR code hands to a device.
@Suite struct EnrollmentURITests {
    static let fingerprint = ECPublicJWK(P256.Signing.PrivateKey().publicKey).thumbprint
    static let server = "https%3A%2F%2Fauth.example.com%2Ft%2Facme"

    /// An enrollment URI with every parameter valid unless replaced.
    static func uri(
        v: String? = "1", server: String? = server, ticket: String? = "cst_abc", fp: String? = fingerprint
    ) -> String {
        let items = [("v", v), ("server", server), ("ticket", ticket), ("fp", fp)]
        return "countersign://enroll?" + items.compactMap { name, value in value.map { "\(name)=\($0)" } }
            .joined(separator: "&")
    }

    // MARK: Round trips

    @Test(arguments: [
        "https://auth.example.com",
        "https://auth.example.com/t/acme",
        "https://auth.example.com:8443/t/acme",
        "http://127.0.0.1:8080/t/acme",
        "https://auth.example.com/t/acme%20corp",
        "https://[::1]:8443/t/acme",
    ])
    func aURIRoundTripsThroughItsText(_ server: String) throws {
        let uri = EnrollmentURI(server: try #require(URL(string: server)), ticket: "cst_Abc-123_xyz", serverKeyThumbprint: Self.fingerprint)
        let parsed = try EnrollmentURI(parsing: uri.description)
        #expect(parsed == uri)
        #expect(parsed.server.absoluteString == server)
    }

    @Test func theServerURLIsFullyPercentEncoded() throws {
        let uri = EnrollmentURI(
            server: try #require(URL(string: "https://auth.example.com:8443/t/acme")), ticket: "cst_abc",
            serverKeyThumbprint: Self.fingerprint)
        #expect(uri.description
                == "countersign://enroll?v=1&server=https%3A%2F%2Fauth.example.com%3A8443%2Ft%2Facme&ticket=cst_abc&fp=\(Self.fingerprint)")
    }

    @Test func aTicketWithReservedCharactersSurvives() throws {
        let ticket = "a+b&c=d/e?f#g %h"
        let uri = EnrollmentURI(server: try #require(URL(string: "https://auth.example.com")), ticket: ticket, serverKeyThumbprint: Self.fingerprint)
        #expect(!uri.description.contains("+"))
        #expect(try EnrollmentURI(parsing: uri.description).ticket == ticket)
    }

    @Test func parsingReadsEveryField() throws {
        let parsed = try EnrollmentURI(parsing: Self.uri())
        #expect(parsed.server == URL(string: "https://auth.example.com/t/acme"))
        #expect(parsed.ticket == "cst_abc")
        #expect(parsed.serverKeyThumbprint == Self.fingerprint)
    }

    @Test func surroundingWhiteSpaceIsIgnored() throws {
        #expect(try EnrollmentURI(parsing: " \n\(Self.uri())\t\n") == EnrollmentURI(parsing: Self.uri()))
    }

    @Test func theSchemeIsCaseInsensitive() throws {
        let upper = "COUNTERSIGN" + Self.uri().dropFirst("countersign".count)
        #expect(try EnrollmentURI(parsing: upper) == EnrollmentURI(parsing: Self.uri()))
    }

    @Test func parametersMayComeInAnyOrderAndUnknownOnesAreIgnored() throws {
        let text = "countersign://enroll?fp=\(Self.fingerprint)&extra=1&ticket=cst_abc&server=\(Self.server)&v=1"
        #expect(try EnrollmentURI(parsing: text) == EnrollmentURI(parsing: Self.uri()))
    }

    // MARK: Refusals

    @Test(arguments: ["countersign://[enroll?v=1", "http://[::1"])
    func textThatIsNotAURIIsRefused(_ text: String) {
        #expect(throws: EnrollmentURIError.notAURI) { try EnrollmentURI(parsing: text) }
    }

    @Test func anotherSchemeIsRefused() {
        let https = "https" + Self.uri().dropFirst("countersign".count)
        #expect(throws: EnrollmentURIError.wrongScheme("https")) { try EnrollmentURI(parsing: https) }
        #expect(throws: EnrollmentURIError.wrongScheme("")) { try EnrollmentURI(parsing: "not a uri at all") }
        #expect(throws: EnrollmentURIError.wrongScheme("")) { try EnrollmentURI(parsing: "") }
    }

    @Test func anotherActionIsRefused() {
        let pair = Self.uri().replacingOccurrences(of: "://enroll?", with: "://pair?")
        #expect(throws: EnrollmentURIError.wrongAction("pair")) { try EnrollmentURI(parsing: pair) }
        let pathOnly = Self.uri().replacingOccurrences(of: "://enroll?", with: ":enroll?")
        #expect(throws: EnrollmentURIError.wrongAction("")) { try EnrollmentURI(parsing: pathOnly) }
    }

    @Test(arguments: ["v", "server", "ticket", "fp"])
    func aDuplicatedParameterIsRefused(_ name: String) throws {
        let original = Self.uri()
        let components = try #require(URLComponents(string: original))
        let value = try #require(components.percentEncodedQueryItems?.first { $0.name == name }?.value)
        #expect(throws: EnrollmentURIError.duplicateParameter(name)) {
            try EnrollmentURI(parsing: original + "&\(name)=\(value)")
        }
    }

    @Test func aDuplicatedParameterIsRefusedEvenWithTheSecondValueEmpty() {
        #expect(throws: EnrollmentURIError.duplicateParameter("ticket")) {
            try EnrollmentURI(parsing: Self.uri() + "&ticket")
        }
    }

    static let missing: [(String, String)] = [
        ("v", uri(v: nil)),
        ("server", uri(server: nil)),
        ("server", uri(server: "")),
        ("ticket", uri(ticket: nil)),
        ("ticket", uri(ticket: "")),
        ("fp", uri(fp: nil)),
        ("fp", uri(fp: "")),
        ("v", "countersign://enroll"),
    ]

    @Test(arguments: missing)
    func aMissingOrEmptyParameterIsRefused(_ name: String, _ text: String) {
        #expect(throws: EnrollmentURIError.missingParameter(name)) { try EnrollmentURI(parsing: text) }
    }

    @Test(arguments: ["2", "0", "", "1.0", "01", "v1"])
    func aWrongVersionIsRefused(_ version: String) {
        #expect(throws: EnrollmentURIError.unsupportedVersion(version)) {
            try EnrollmentURI(parsing: Self.uri(v: version))
        }
    }

    @Test(arguments: [
        "ftp://auth.example.com",
        "not a url",
        "https:///t/acme",
        "/t/acme",
        "auth.example.com",
        "mailto:admin@example.com",
        "javascript:alert(1)",
    ])
    func aServerThatIsNotAnHTTPURLIsRefused(_ server: String) throws {
        let encoded = try #require(server.addingPercentEncoding(withAllowedCharacters: .alphanumerics))
        #expect(throws: EnrollmentURIError.invalidServer(server)) {
            try EnrollmentURI(parsing: Self.uri(server: encoded))
        }
    }

    @Test(arguments: [
        "short",
        fingerprint + "=",
        String(fingerprint.dropLast()),
        Data(repeating: 7, count: 31).base64URLEncodedString,
        Data(repeating: 7, count: 33).base64URLEncodedString,
        Data(repeating: 0xFB, count: 32).base64EncodedString().replacingOccurrences(of: "=", with: ""),
    ])
    func aFingerprintThatIsNotABase64URLSHA256IsRefused(_ fp: String) throws {
        let encoded = try #require(fp.addingPercentEncoding(withAllowedCharacters: .alphanumerics))
        #expect(throws: EnrollmentURIError.invalidFingerprint) { try EnrollmentURI(parsing: Self.uri(fp: encoded)) }
    }

    @Test func errorsNameWhatIsWrong() {
        #expect(EnrollmentURIError.duplicateParameter("fp").description.contains("fp"))
        #expect(EnrollmentURIError.missingParameter("ticket").description.contains("ticket"))
        #expect(EnrollmentURIError.unsupportedVersion("2").description.contains("2"))
        #expect(EnrollmentURIError.wrongScheme("https").description.contains("https"))
    }
}
