import CountersignCore
import Foundation
import Testing

/// Unpadded base64url (RFC 4648 §5), as JOSE uses it.
@Suite struct Base64URLTests {
    /// RFC 4648 §10, with the padding removed.
    static let plain = ["", "f", "fo", "foo", "foob", "fooba", "foobar"]
    static let encoded = ["", "Zg", "Zm8", "Zm9v", "Zm9vYg", "Zm9vYmE", "Zm9vYmFy"]

    @Test(arguments: zip(plain, encoded))
    func rfc4648VectorsEncodeWithoutPadding(_ plain: String, _ encoded: String) {
        #expect(Data(plain.utf8).base64URLEncodedString == encoded)
    }

    @Test(arguments: zip(plain, encoded))
    func rfc4648VectorsDecode(_ plain: String, _ encoded: String) throws {
        #expect(try #require(Data(base64URLEncoded: encoded)) == Data(plain.utf8))
    }

    @Test func theURLAlphabetReplacesPlusAndSlash() {
        // Standard base64 of these bytes is "+/+/".
        #expect(Data([0xFB, 0xFF, 0xBF]).base64URLEncodedString == "-_-_")
        #expect(Data(base64URLEncoded: "-_-_") == Data([0xFB, 0xFF, 0xBF]))
    }

    @Test func everyByteValueRoundTrips() {
        let bytes = Data((0...255).map { UInt8($0) } + (0...255).reversed().map { UInt8($0) })
        let text = bytes.base64URLEncodedString
        #expect(!text.contains("=") && !text.contains("+") && !text.contains("/"))
        #expect(Data(base64URLEncoded: text) == bytes)
    }

    @Test func everyLengthAgreesWithFoundationsBase64() throws {
        var generator = SystemRandomNumberGenerator()
        for length in 0...96 {
            let bytes = Data((0..<length).map { _ in UInt8.random(in: 0...255, using: &generator) })
            let standard = bytes.base64EncodedString()
                .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
                .replacingOccurrences(of: "=", with: "")
            #expect(bytes.base64URLEncodedString == standard)
            #expect(try #require(Data(base64URLEncoded: standard)) == bytes)
        }
    }

    @Test func aSubstringDecodesLikeAString() {
        let compact = "Zm9v.YmFy"
        let first = compact.split(separator: ".")[0]
        #expect(Data(base64URLEncoded: first) == Data("foo".utf8))
    }

    @Test(arguments: [
        "Zg==",   // padded
        "Zm8=",   // padded
        "Zg=",    // partial padding
        "+/+/",   // standard alphabet
        "-_+/",   // alphabets mixed
        "a/b_",   // standard '/' among url characters
        "Z",      // length 1 mod 4 can never be valid
        "Zm9vY",  // length 1 mod 4
        "Zm 9v",  // white space
        "Zm9v\n", // trailing newline
        "Zm9!",   // outside any base64 alphabet
        "Zm9é",   // non-ASCII
        "Zh",     // unused low bits set: "Zg" is the one encoding of "f"
        "Zm9",    // unused low bits set: "Zm8" is the one encoding of "fo"
    ])
    func malformedInputIsRefused(_ text: String) {
        #expect(Data(base64URLEncoded: text) == nil)
    }
}
