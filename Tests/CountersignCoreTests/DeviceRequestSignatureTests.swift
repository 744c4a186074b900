import CountersignCore
import Crypto
import Foundation
import Testing

/// The `Authorization: Device <jws>` signature on every device call after enrollment.
@Suite struct DeviceRequestSignatureTests {
    let device = P256.Signing.PrivateKey()
    let deviceID = "dev_7Q2mX"
    let url = "https://auth.example.com:8443/t/acme/device/v1/self"
    let body = Data(#"{"name":"Ada's phone"}"#.utf8)
    let signedAt = Date(timeIntervalSince1970: 1_790_000_000)
    let window: TimeInterval = 300

    func signed(method: String = "PATCH", at date: Date? = nil) throws -> DeviceRequestSignature {
        try DeviceRequestSignature.sign(
            method: method, url: url, body: body, deviceID: deviceID, signer: device, now: date ?? signedAt)
    }

    func verify(
        _ signature: DeviceRequestSignature, key: P256.Signing.PublicKey? = nil, method: String = "PATCH",
        url: String? = nil, body: Data? = nil, now: Date? = nil
    ) throws(DeviceRequestError) {
        try signature.verify(
            key: key ?? device.publicKey, method: method, url: url ?? self.url, body: body ?? self.body,
            now: now ?? signedAt, window: window)
    }

    var claims: [String: JSONValue] {
        [
            "htm": .string("PATCH"), "htu": .string(url), "iat": .integer(1_790_000_000),
            "jti": .string("0123456789abcdef"), "body_sha256": .string(DeviceRequestSignature.digest(of: body)),
        ]
    }

    var header: [String: JSONValue] {
        ["typ": .string(DeviceRequestSignature.type), "kid": .string(deviceID)]
    }

    /// A compact JWS signed by the device over arbitrary claims and header.
    func jws(claims: [String: JSONValue]? = nil, header: [String: JSONValue]? = nil) throws -> String {
        try CompactJWS.sign(
            header: header ?? self.header, payload: JSONValue.object(claims ?? self.claims).canonicalData,
            signer: device
        ).serialized
    }

    func expectMalformed(
        _ authorization: String, sourceLocation: SourceLocation = #_sourceLocation
    ) {
        let error = #expect(throws: DeviceRequestError.self, sourceLocation: sourceLocation) {
            try DeviceRequestSignature.parse(authorizationHeader: authorization)
        }
        #expect(error?.isMalformed == true, sourceLocation: sourceLocation)
    }

    // MARK: The happy path

    @Test func aSignedRequestParsesFromItsHeaderAndVerifies() throws {
        let signature = try signed()
        let parsed = try DeviceRequestSignature.parse(authorizationHeader: signature.authorizationHeader)
        #expect(throws: Never.self) { try verify(parsed) }
        #expect(parsed.deviceID == deviceID)
        #expect(parsed.method == "PATCH")
        #expect(parsed.url == url)
        #expect(parsed.issuedAt == 1_790_000_000)
        #expect(parsed.nonce == signature.nonce)
        #expect(parsed.jws == signature.jws)
    }

    @Test func theHeaderUsesTheDeviceSchemeAndTheRequestType() throws {
        let signature = try signed()
        #expect(signature.authorizationHeader == "Device " + signature.jws.serialized)
        #expect(signature.jws.type == "countersign-request+jwt")
        #expect(signature.jws.keyID == deviceID)
    }

    @Test func theClaimsAreCanonicalJSONWithTheBodyDigest() throws {
        let signature = try signed()
        let expected = #"{"body_sha256":"\#(Data(SHA256.hash(data: body)).base64URLEncodedString)","htm":"PATCH","htu":"\#(url)","iat":1790000000,"jti":"\#(signature.nonce)"}"#
        #expect(signature.jws.payload == Data(expected.utf8))
    }

    @Test func theEmptyBodyHasTheDigestOfTheEmptyString() {
        #expect(DeviceRequestSignature.digest(of: Data()) == "47DEQpj8HBSa-_TImW-5JCeuQeRkm5NMpJWZG3hSuFU")
    }

    @Test func issuedAtIsTheSigningTimeRoundedDown() throws {
        #expect(try signed(at: Date(timeIntervalSince1970: 1_790_000_000.999)).issuedAt == 1_790_000_000)
    }

    @Test func theMethodIsSignedInUpperCaseAndComparedWithoutCase() throws {
        let signature = try signed(method: "patch")
        #expect(signature.method == "PATCH")
        #expect(throws: Never.self) { try verify(signature, method: "patch") }
    }

    @Test func theSchemeNameIsCaseInsensitive() throws {
        let jws = try signed().jws.serialized
        for scheme in ["device", "DEVICE", "dEvIcE"] {
            #expect(try DeviceRequestSignature.parse(authorizationHeader: "\(scheme) \(jws)").deviceID == deviceID)
        }
    }

    @Test func randomNoncesAre128BitsOfBase64URL() throws {
        let one = DeviceRequestSignature.randomNonce()
        let other = DeviceRequestSignature.randomNonce()
        #expect(one != other)
        #expect(try #require(Data(base64URLEncoded: one)).count == 16)
    }

    @Test func replayedNonceIsNotCheckedHereButTimeWindowIs() throws {
        let signature = try signed()
        #expect(throws: Never.self) { try verify(signature) }
        #expect(throws: Never.self) { try verify(signature) }
        #expect(throws: DeviceRequestError.outsideTimeWindow) {
            try verify(signature, now: signedAt.addingTimeInterval(window + 1))
        }
    }

    // MARK: Parsing refusals

    @Test func aMissingHeaderIsMissingSignature() {
        #expect(throws: DeviceRequestError.missingSignature) { try DeviceRequestSignature.parse(authorizationHeader: nil) }
        #expect(throws: DeviceRequestError.missingSignature) { try DeviceRequestSignature.parse(authorizationHeader: "") }
    }

    @Test func anotherSchemeIsMalformed() throws {
        let jws = try signed().jws.serialized
        for value in ["Bearer \(jws)", "DPoP \(jws)", "Devices \(jws)", "Device", "Device ", "Device:\(jws)", jws] {
            expectMalformed(value)
        }
    }

    @Test(arguments: ["Device not-a-jws", "Device a.b.c", "Device \u{20}\u{20}", "Device eyJhbGciOiJub25lIn0.e30."])
    func aMalformedJWSIsMalformed(_ authorization: String) {
        expectMalformed(authorization)
    }

    @Test func aWrongOrMissingTypIsMalformed() throws {
        expectMalformed("Device " + (try jws(header: ["typ": .string("JWT"), "kid": .string(deviceID)])))
        expectMalformed("Device " + (try jws(header: ["typ": .string("countersign-enrollment+jwt"), "kid": .string(deviceID)])))
        expectMalformed("Device " + (try jws(header: ["kid": .string(deviceID)])))
    }

    @Test func aMissingOrEmptyKidIsMalformed() throws {
        expectMalformed("Device " + (try jws(header: ["typ": .string(DeviceRequestSignature.type)])))
        expectMalformed("Device " + (try jws(header: ["typ": .string(DeviceRequestSignature.type), "kid": .string("")])))
        expectMalformed("Device " + (try jws(header: ["typ": .string(DeviceRequestSignature.type), "kid": .integer(7)])))
    }

    @Test(arguments: ["htm", "htu", "iat", "jti", "body_sha256"])
    func aMissingClaimIsMalformed(_ name: String) throws {
        var claims = self.claims
        claims[name] = nil
        expectMalformed("Device " + (try jws(claims: claims)))
    }

    @Test(arguments: ["htm", "htu", "iat", "jti", "body_sha256"])
    func aClaimOfTheWrongKindIsMalformed(_ name: String) throws {
        var claims = self.claims
        claims[name] = name == "iat" ? .string("1790000000") : .integer(1)
        expectMalformed("Device " + (try jws(claims: claims)))
    }

    @Test func aPayloadThatIsNotJSONIsMalformed() throws {
        let text = try CompactJWS.sign(header: header, payload: Data("htm=PATCH".utf8), signer: device).serialized
        expectMalformed("Device " + text)
    }

    @Test(arguments: [0, 1, 15, 129, 512])
    func aJTIOutside16To128CharactersIsMalformed(_ length: Int) throws {
        var claims = self.claims
        claims["jti"] = .string(String(repeating: "n", count: length))
        expectMalformed("Device " + (try jws(claims: claims)))
    }

    @Test(arguments: [16, 22, 128])
    func aJTIOf16To128CharactersIsAccepted(_ length: Int) throws {
        var claims = self.claims
        claims["jti"] = .string(String(repeating: "n", count: length))
        let signature = try DeviceRequestSignature.parse(authorizationHeader: "Device " + (try jws(claims: claims)))
        #expect(throws: Never.self) { try verify(signature) }
    }

    @Test func signingWithANonceTheServerWouldRefuseFails() {
        #expect(throws: DeviceRequestError.self) {
            try DeviceRequestSignature.sign(
                method: "GET", url: url, body: Data(), deviceID: deviceID, signer: device, now: signedAt, nonce: "short")
        }
    }

    // MARK: Verification refusals

    @Test func anotherKeyIsInvalidSignature() throws {
        #expect(throws: DeviceRequestError.invalidSignature) {
            try verify(signed(), key: P256.Signing.PrivateKey().publicKey)
        }
    }

    @Test func theSignatureIsCheckedBeforeTheClaims() throws {
        #expect(throws: DeviceRequestError.invalidSignature) {
            try verify(signed(), key: P256.Signing.PrivateKey().publicKey, method: "DELETE", url: "https://evil.example",
                       body: Data("x".utf8), now: .distantFuture)
        }
    }

    @Test func aSignatureMovedToAnotherDeviceIDIsInvalid() throws {
        // Re-labelling the kid changes the signed header, so the device's own key no longer verifies it.
        let original = try signed()
        let parts = original.jws.serialized.split(separator: ".").map(String.init)
        let header = JSONValue.object([
            "alg": .string("ES256"), "typ": .string(DeviceRequestSignature.type), "kid": .string("dev_other"),
        ]).canonicalData.base64URLEncodedString
        let moved = try DeviceRequestSignature.parse([header, parts[1], parts[2]].joined(separator: "."))
        #expect(moved.deviceID == "dev_other")
        #expect(throws: DeviceRequestError.invalidSignature) { try verify(moved) }
    }

    @Test(arguments: ["GET", "POST", "PUT", "DELETE"])
    func anotherMethodIsMethodMismatch(_ method: String) throws {
        #expect(throws: DeviceRequestError.methodMismatch) { try verify(signed(), method: method) }
    }

    static let otherURLs = [
        "https://auth.example.com:8443/t/acme/device/v1/self?x=1",
        "https://auth.example.com:8443/t/acme/device/v1/self?",
        "https://auth.example.com:8443/t/acme/device/v1/self/",
        "https://auth.example.com:8443/t/other/device/v1/self",
        "https://auth.example.com/t/acme/device/v1/self",
        "http://auth.example.com:8443/t/acme/device/v1/self",
        "https://evil.example.com:8443/t/acme/device/v1/self",
        "https://auth.example.com:8443/t/acme/device/v1/self#f",
    ]

    @Test(arguments: otherURLs)
    func urlMismatchIsRejected(_ url: String) throws {
        #expect(throws: DeviceRequestError.urlMismatch) { try verify(signed(), url: url) }
    }

    @Test func aDifferentQueryStringIsURLMismatch() throws {
        let signature = try DeviceRequestSignature.sign(
            method: "GET", url: url + "?page=1", body: Data(), deviceID: deviceID, signer: device, now: signedAt)
        #expect(throws: Never.self) { try verify(signature, method: "GET", url: url + "?page=1", body: Data()) }
        #expect(throws: DeviceRequestError.urlMismatch) { try verify(signature, method: "GET", url: url + "?page=2", body: Data()) }
    }

    @Test(arguments: [-300.0, -1, 0, 0.5, 1, 299, 300])
    func aTimeWithinTheWindowPasses(_ offset: TimeInterval) throws {
        #expect(throws: Never.self) { try verify(signed(), now: signedAt.addingTimeInterval(offset)) }
    }

    @Test(arguments: [-301.0, -300.5, 300.5, 301, 86_400])
    func aTimeOutsideTheWindowIsRefused(_ offset: TimeInterval) throws {
        #expect(throws: DeviceRequestError.outsideTimeWindow) { try verify(signed(), now: signedAt.addingTimeInterval(offset)) }
    }

    @Test func anAlteredBodyIsBodyMismatch() throws {
        #expect(throws: DeviceRequestError.bodyMismatch) {
            try verify(signed(), body: Data(#"{"name":"Eve's phone"}"#.utf8))
        }
        #expect(throws: DeviceRequestError.bodyMismatch) { try verify(signed(), body: Data()) }
    }

    // MARK: Wire codes

    static let errors: [DeviceRequestError] = [
        .missingSignature, .malformed("x"), .unknownDevice, .deviceDeregistered, .invalidSignature,
        .methodMismatch, .urlMismatch, .outsideTimeWindow, .replayed, .bodyMismatch,
    ]
    static let codes = [
        "missing_signature", "malformed_signature", "unknown_device", "device_deregistered", "invalid_signature",
        "request_mismatch", "request_mismatch", "request_expired", "replayed_request", "body_mismatch",
    ]

    @Test(arguments: zip(errors, codes))
    func eachErrorHasItsWireCode(_ error: DeviceRequestError, _ code: String) {
        #expect(error.code.rawValue == code)
        #expect(!error.description.isEmpty)
    }

    @Test func aMalformedErrorSaysWhy() {
        #expect(DeviceRequestError.malformed("jti must be 16 to 128 characters").description.hasSuffix("jti must be 16 to 128 characters"))
    }
}

extension DeviceRequestError {
    var isMalformed: Bool {
        if case .malformed = self { return true }
        return false
    }
}
