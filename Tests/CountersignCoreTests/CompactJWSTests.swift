import CountersignCore
import Crypto
import Foundation
import Testing

/// Compact JWS (RFC 7515 §7.1) with ES256 only.
@Suite struct CompactJWSTests {
    let key = P256.Signing.PrivateKey()
    let payload = Data(#"{"sub":"ada"}"#.utf8)

    static func segment(_ text: String) -> String { Data(text.utf8).base64URLEncodedString }

    func signed() throws -> CompactJWS {
        try CompactJWS.sign(header: ["typ": .string("JWT"), "kid": .string("k1")], payload: payload, signer: key)
    }

    /// `serialized` with one of its three parts replaced.
    func replacing(part index: Int, in jws: CompactJWS, with replacement: String) -> String {
        var parts = jws.serialized.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        parts[index] = replacement
        return parts.joined(separator: ".")
    }

    // MARK: Signing and verifying

    @Test func aSignedJWSParsesBackAndVerifies() throws {
        let jws = try signed()
        let parsed = try CompactJWS(parsing: jws.serialized)
        #expect(parsed == jws)
        #expect(parsed.isValid(for: key.publicKey))
        #expect(throws: Never.self) { try parsed.verify(with: key.publicKey) }
        #expect(parsed.payload == payload)
        #expect(parsed.keyID == "k1")
        #expect(parsed.type == "JWT")
        #expect(try parsed.payloadJSON() == .object(["sub": .string("ada")]))
    }

    @Test func theHeaderIsCanonicalJSONWithAlgES256() throws {
        let jws = try signed()
        let headerPart = try #require(jws.serialized.split(separator: ".").first)
        #expect(Data(base64URLEncoded: headerPart) == Data(#"{"alg":"ES256","kid":"k1","typ":"JWT"}"#.utf8))
        #expect(jws.signingInput == Data(jws.serialized.split(separator: ".").prefix(2).joined(separator: ".").utf8))
    }

    @Test func signingOverridesACallerSuppliedAlg() throws {
        let jws = try CompactJWS.sign(header: ["alg": .string("none")], payload: payload, signer: key)
        #expect(jws.header["alg"] == .string("ES256"))
        #expect(try CompactJWS(parsing: jws.serialized).isValid(for: key.publicKey))
    }

    @Test func theSignatureIsRawRAndS() throws {
        #expect(try signed().signature.count == 64)
    }

    @Test func anotherKeyDoesNotVerify() throws {
        let jws = try CompactJWS(parsing: signed().serialized)
        let other = P256.Signing.PrivateKey().publicKey
        #expect(!jws.isValid(for: other))
        #expect(throws: JWSError.badSignature) { try jws.verify(with: other) }
    }

    @Test func aTamperedPayloadDoesNotVerify() throws {
        let jws = try signed()
        let tampered = try CompactJWS(parsing: replacing(part: 1, in: jws, with: Self.segment(#"{"sub":"eve"}"#)))
        #expect(throws: JWSError.badSignature) { try tampered.verify(with: key.publicKey) }
    }

    @Test func aTamperedHeaderDoesNotVerify() throws {
        let jws = try signed()
        let header = Self.segment(#"{"alg":"ES256","kid":"k2","typ":"JWT"}"#)
        let tampered = try CompactJWS(parsing: replacing(part: 0, in: jws, with: header))
        #expect(tampered.keyID == "k2")
        #expect(throws: JWSError.badSignature) { try tampered.verify(with: key.publicKey) }
    }

    @Test func aTruncatedSignatureDoesNotVerify() throws {
        let jws = try signed()
        let signature = jws.signature.base64URLEncodedString
        let truncated = try CompactJWS(parsing: replacing(part: 2, in: jws, with: String(signature.dropLast(2))))
        #expect(truncated.signature.count < 64)
        #expect(throws: JWSError.badSignature) { try truncated.verify(with: key.publicKey) }
    }

    @Test func aDEREncodedSignatureDoesNotVerify() throws {
        let jws = try signed()
        let der = try key.signature(for: jws.signingInput).derRepresentation
        let reencoded = try CompactJWS(parsing: replacing(part: 2, in: jws, with: der.base64URLEncodedString))
        #expect(throws: JWSError.badSignature) { try reencoded.verify(with: key.publicKey) }
    }

    @Test func anEmptyOrZeroSignatureDoesNotVerify() throws {
        let jws = try signed()
        for signature in ["", Data(count: 64).base64URLEncodedString] {
            let forged = try CompactJWS(parsing: replacing(part: 2, in: jws, with: signature))
            #expect(throws: JWSError.badSignature) { try forged.verify(with: key.publicKey) }
        }
    }

    // MARK: Interoperability

    @Test func aSignatureMadeDirectlyWithSwiftCryptoVerifies() throws {
        // Not canonical on purpose: the signature covers the header as sent, not as re-serialised.
        let input = Self.segment(#"{"typ":"JWT", "alg":"ES256"}"#) + "." + Self.segment(#"{"iss":"joe"}"#)
        let signature = try key.signature(for: Data(input.utf8)).rawRepresentation
        let jws = try CompactJWS(parsing: input + "." + signature.base64URLEncodedString)
        #expect(throws: Never.self) { try jws.verify(with: key.publicKey) }
        #expect(jws.type == "JWT")
    }

    @Test func rfc7515AppendixA3Verifies() throws {
        // RFC 7515 A.3: an ES256 JWS and the public half of the key that made it.
        let text = "eyJhbGciOiJFUzI1NiJ9"
            + ".eyJpc3MiOiJqb2UiLA0KICJleHAiOjEzMDA4MTkzODAsDQogImh0dHA6Ly9leGFtcGxlLmNvbS9pc19yb290Ijp0cnVlfQ"
            + ".DtEhU3ljbEg8L38VWAfUAqOyKAM6-Xx-F4GawxaepmXFCgfTjDxw5djxLa8ISlSApmWQxfKTUJqPP3-Kg6NU1Q"
        let jwk = ECPublicJWK(x: "f83OJ3D2xF1Bg8vub9tLe1gHMzV76e8Tus9uPHvRVEU", y: "x_FEzRu9m36HLN_tue659LNpXW6pCyStikYjKIWI5a0")
        let jws = try CompactJWS(parsing: text)
        #expect(throws: Never.self) { try jws.verify(with: jwk.signingKey()) }
        #expect(jws.payload == Data("{\"iss\":\"joe\",\r\n \"exp\":1300819380,\r\n \"http://example.com/is_root\":true}".utf8))
    }

    // MARK: Parsing refusals

    static let goodHeader = segment(#"{"alg":"ES256"}"#)
    static let goodPayload = segment("{}")
    static let goodSignature = Data(count: 64).base64URLEncodedString

    @Test(arguments: [
        "",
        "onlyone",
        "\(goodHeader).\(goodPayload)",
        "\(goodHeader).\(goodPayload).\(goodSignature).extra",
        "\(goodHeader)..\(goodPayload).\(goodSignature)",
    ])
    func aWrongNumberOfPartsIsMalformed(_ text: String) {
        let error = #expect(throws: JWSError.self) { try CompactJWS(parsing: text) }
        #expect(error?.isMalformed == true)
    }

    @Test(arguments: [
        "\(goodHeader)=.\(goodPayload).\(goodSignature)",
        "\(goodHeader).\(goodPayload)==.\(goodSignature)",
        "\(goodHeader).\(goodPayload).\(goodSignature)=",
        // Standard base64 ("...I+Pj4ifQ") without its padding: only the '+' is wrong.
        "\(Data(#"{"alg":"ES256","k":">>>"}"#.utf8).base64EncodedString().replacingOccurrences(of: "=", with: "")).\(goodPayload).\(goodSignature)",
        "\(goodHeader).+/+/.\(goodSignature)",
        "\(goodHeader).\(goodPayload).a*b",
    ])
    func aPartThatIsNotBase64URLIsMalformed(_ text: String) {
        let error = #expect(throws: JWSError.self) { try CompactJWS(parsing: text) }
        #expect(error?.isMalformed == true)
    }

    @Test(arguments: ["not json", #"["alg","ES256"]"#, #""ES256""#, "", #"{"alg":"ES256","n":1.5}"#])
    func aHeaderThatIsNotAJSONObjectIsMalformed(_ header: String) {
        let error = #expect(throws: JWSError.self) {
            try CompactJWS(parsing: "\(Self.segment(header)).\(Self.goodPayload).\(Self.goodSignature)")
        }
        #expect(error?.isMalformed == true)
    }

    @Test(arguments: ["none", "HS256", "RS256", "ES384", "PS256", "EdDSA", "es256"])
    func algorithmsOtherThanES256AreRefused(_ alg: String) {
        let header = Self.segment(#"{"alg":"\#(alg)"}"#)
        #expect(throws: JWSError.unsupportedAlgorithm(alg)) {
            try CompactJWS(parsing: "\(header).\(Self.goodPayload).\(Self.goodSignature)")
        }
    }

    @Test func aHeaderWithoutAlgIsRefused() {
        let header = Self.segment(#"{"typ":"JWT"}"#)
        #expect(throws: JWSError.unsupportedAlgorithm("none")) {
            try CompactJWS(parsing: "\(header).\(Self.goodPayload).\(Self.goodSignature)")
        }
    }

    @Test func aCritHeaderIsRefused() {
        let header = Self.segment(#"{"alg":"ES256","crit":["exp"],"exp":1}"#)
        let error = #expect(throws: JWSError.self) {
            try CompactJWS(parsing: "\(header).\(Self.goodPayload).\(Self.goodSignature)")
        }
        #expect(error?.isMalformed == true)
    }

    @Test func aHeaderWithDuplicateAlgIsMalformed() {
        // RFC 7515 §5.2: duplicate header names are refused, never resolved to the first one.
        let header = Self.segment(#"{"alg":"ES256","alg":"none"}"#)
        let error = #expect(throws: JWSError.self) {
            try CompactJWS(parsing: "\(header).\(Self.goodPayload).\(Self.goodSignature)")
        }
        #expect(error?.isMalformed == true)
    }

    @Test func aPayloadThatIsNotJSONIsMalformedOnlyWhenReadAsJSON() throws {
        let jws = try CompactJWS.sign(header: [:], payload: Data("plain text".utf8), signer: key)
        let parsed = try CompactJWS(parsing: jws.serialized)
        #expect(parsed.isValid(for: key.publicKey))
        let error = #expect(throws: JWSError.self) { try parsed.payloadJSON() }
        #expect(error?.isMalformed == true)
    }

    @Test func errorsDescribeThemselves() {
        #expect(JWSError.badSignature.description == "the signature does not verify")
        #expect(JWSError.unsupportedAlgorithm("HS256").description.contains("HS256"))
        #expect(JWSError.malformed("why").description == "malformed JWS: why")
    }
}

extension JWSError {
    var isMalformed: Bool {
        if case .malformed = self { return true }
        return false
    }
}
