import CountersignCore
import Crypto
import Foundation
import Testing

/// P-256 public keys as JWKs (RFC 7517/7518) and their RFC 7638 thumbprints.
@Suite struct JWKTests {
    /// base64url written out here rather than borrowed from the code under test.
    static func base64URL(_ data: some DataProtocol) -> String {
        Data(data).base64EncodedString()
            .replacingOccurrences(of: "+", with: "-")
            .replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }

    @Test func aSigningKeyRoundTrips() throws {
        let key = P256.Signing.PrivateKey().publicKey
        let jwk = ECPublicJWK(key)
        #expect(jwk.kty == "EC")
        #expect(jwk.crv == "P-256")
        #expect(try jwk.signingKey().x963Representation == key.x963Representation)
    }

    @Test func anAgreementKeyRoundTrips() throws {
        let key = P256.KeyAgreement.PrivateKey().publicKey
        #expect(try ECPublicJWK(key).agreementKey().x963Representation == key.x963Representation)
    }

    @Test func coordinatesAreTheRawThirtyTwoByteXAndY() {
        let key = P256.Signing.PrivateKey().publicKey
        let jwk = ECPublicJWK(key)
        #expect(jwk.x == Self.base64URL(key.rawRepresentation.prefix(32)))
        #expect(jwk.y == Self.base64URL(key.rawRepresentation.suffix(32)))
        #expect(jwk.x.count == 43 && jwk.y.count == 43)
    }

    @Test func itEncodesAsAJWKObject() throws {
        let jwk = ECPublicJWK(x: "AAAA", y: "BBBB")
        let json = try JSONValue(parsing: JSONEncoder().encode(jwk))
        #expect(json.canonicalString == #"{"crv":"P-256","kty":"EC","x":"AAAA","y":"BBBB"}"#)
        #expect(try json.decode(as: ECPublicJWK.self) == jwk)
    }

    // MARK: Thumbprint

    @Test func thumbprintIsSHA256OfTheRequiredMembersInOrder() {
        let jwk = ECPublicJWK(P256.Signing.PrivateKey().publicKey)
        let members = #"{"crv":"P-256","kty":"EC","x":""# + jwk.x + #"","y":""# + jwk.y + #""}"#
        #expect(jwk.thumbprint == Self.base64URL(Data(SHA256.hash(data: Data(members.utf8)))))
    }

    @Test func thumbprintMatchesRFC9449Example() {
        // RFC 9449 §4.2 (Figure 2) key and the jkt published for it in §6.1.
        let jwk = ECPublicJWK(
            x: "l8tFrhx-34tV3hRICRDY9zCkDlpBhF42UQUfWVAWBFs", y: "9VE4jf_Ok_o64zbTTlcuNJajHmt6v9TDVrU0CdvGRDA")
        #expect(jwk.thumbprint == "0ZcOCORZNYy-DWpqq30jZyJGHTN0d2HglBV3uiguA4I")
    }

    @Test func differentKeysHaveDifferentThumbprints() {
        let one = ECPublicJWK(P256.Signing.PrivateKey().publicKey)
        let other = ECPublicJWK(P256.Signing.PrivateKey().publicKey)
        #expect(one.thumbprint != other.thumbprint)
        #expect(one.thumbprint.count == 43)
    }

    // MARK: Refusals

    static let valid = ECPublicJWK(P256.Signing.PrivateKey().publicKey)

    @Test(arguments: ["RSA", "OKP", "oct", "ec", ""])
    func otherKeyTypesAreRefused(_ kty: String) {
        let jwk = ECPublicJWK(kty: kty, x: Self.valid.x, y: Self.valid.y)
        #expect(throws: JWKError.unsupportedKeyType(kty)) { try jwk.signingKey() }
        #expect(throws: JWKError.unsupportedKeyType(kty)) { try jwk.agreementKey() }
    }

    @Test(arguments: ["P-384", "P-521", "secp256k1", "p-256", "Ed25519"])
    func otherCurvesAreRefused(_ crv: String) {
        let jwk = ECPublicJWK(crv: crv, x: Self.valid.x, y: Self.valid.y)
        #expect(throws: JWKError.unsupportedCurve(crv)) { try jwk.signingKey() }
        #expect(throws: JWKError.unsupportedCurve(crv)) { try jwk.agreementKey() }
    }

    static let badCoordinates: [(x: String, y: String)] = [
        (base64URL(Data(repeating: 1, count: 31)), valid.y),
        (valid.x, base64URL(Data(repeating: 1, count: 31))),
        (base64URL(Data(repeating: 1, count: 33)), valid.y),
        ("", valid.y),
        (valid.x + "=", valid.y),
        ("+" + valid.x.dropFirst(), valid.y),
        (valid.x, "not base64url!"),
    ]

    @Test(arguments: badCoordinates)
    func coordinatesThatAreNot32BytesOfBase64URLAreRefused(_ x: String, _ y: String) {
        let jwk = ECPublicJWK(x: x, y: y)
        #expect(throws: JWKError.malformedCoordinates) { try jwk.signingKey() }
        #expect(throws: JWKError.malformedCoordinates) { try jwk.agreementKey() }
    }

    @Test func aPointOffTheCurveIsRefused() throws {
        var y = try #require(Data(base64URLEncoded: Self.valid.y))
        y[y.index(before: y.endIndex)] ^= 0x01
        let jwk = ECPublicJWK(x: Self.valid.x, y: Self.base64URL(y))
        #expect(throws: JWKError.notOnCurve) { try jwk.signingKey() }
        #expect(throws: JWKError.notOnCurve) { try jwk.agreementKey() }
    }

    @Test func theOriginIsRefused() {
        let zero = Self.base64URL(Data(repeating: 0, count: 32))
        #expect(throws: JWKError.notOnCurve) { try ECPublicJWK(x: zero, y: zero).signingKey() }
    }

    @Test func coordinatesBeyondTheFieldAreRefused() {
        let ones = Self.base64URL(Data(repeating: 0xFF, count: 32))
        #expect(throws: JWKError.notOnCurve) { try ECPublicJWK(x: ones, y: Self.valid.y).signingKey() }
    }
}
