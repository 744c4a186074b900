import CountersignCore
import Foundation
import Testing

/// `JSONValue` serialises as RFC 8785 (JCS), restricted to integers.
@Suite struct CanonicalJSONTests {
    func canonical(_ json: String) throws -> String {
        try JSONValue(parsing: Data(json.utf8)).canonicalString
    }

    // MARK: Literals and numbers

    @Test func literalsAndIntegersAreWrittenPlainly() {
        #expect(JSONValue.null.canonicalString == "null")
        #expect(JSONValue.bool(true).canonicalString == "true")
        #expect(JSONValue.bool(false).canonicalString == "false")
        #expect(JSONValue.integer(0).canonicalString == "0")
        #expect(JSONValue.integer(-42).canonicalString == "-42")
        #expect(JSONValue.integer(.max).canonicalString == "9223372036854775807")
        #expect(JSONValue.integer(.min).canonicalString == "-9223372036854775808")
    }

    @Test func integersAndBooleansStayDistinct() throws {
        #expect(try JSONValue(parsing: Data("1".utf8)) == .integer(1))
        #expect(try JSONValue(parsing: Data("true".utf8)) == .bool(true))
        #expect(try JSONValue(parsing: Data("0".utf8)) == .integer(0))
        #expect(try JSONValue(parsing: Data("false".utf8)) == .bool(false))
    }

    @Test(arguments: [
        "1.5", "0.1", "-2.25", "1e-3", "333333333.33333329",
        #"{"a":0.5}"#, "[1,2.5]", #"{"a":{"b":[0.25]}}"#,
        "9223372036854775808", "-9223372036854775809", "1e30",
    ])
    func fractionalAndOutOfRangeNumbersAreRefused(_ json: String) {
        #expect(throws: (any Error).self) { try JSONValue(parsing: Data(json.utf8)) }
    }

    @Test(arguments: ["", "{", "nul", #"{"a":}"#, "[1 2]", "'a'"])
    func textThatIsNotJSONIsRefused(_ text: String) {
        #expect(throws: (any Error).self) { try JSONValue(parsing: Data(text.utf8)) }
    }

    @Test(arguments: [
        "01", "-", "-01", "1.", "1.0", "1e2", "1E2", "+1", "0x10",  // integers in JSON's one form only
        "\"a\u{01}\"", "\"\n\"",  // raw control characters
        #""\ud800""#, #""\udc00""#, #""\ud800\u0041""#, #""\ud800x""#,  // lone or broken surrogates
        #""\x""#, #""\u12""#, #""\u12g4""#,  // unknown or short escapes
        #""abc"#, #"{"a":1"#, #"{"a" 1}"#, "[1,]", #"{"a":1,}"#, "{1:2}",  // unterminated or malformed
        "tru", "nulll", "true false", "[] x",  // bad literals, trailing text
        String(repeating: "[", count: 65) + String(repeating: "]", count: 65),  // nested too deeply
    ])
    func malformedTextIsRefusedWithAPosition(_ text: String) {
        #expect(throws: JSONParseError.self) { try JSONValue(parsing: Data(text.utf8)) }
    }

    @Test func invalidUTF8InAStringIsRefused() {
        #expect(throws: JSONParseError.self) { try JSONValue(parsing: Data([0x22, 0xC3, 0x28, 0x22])) }
        #expect(throws: JSONParseError.self) { try JSONValue(parsing: Data([0x22, 0xED, 0xA0, 0x80, 0x22])) }
    }

    @Test func escapesAndWhiteSpaceAreRead() throws {
        #expect(try JSONValue(parsing: Data(#" "\ud83d\ude00 \u00E9\/\b\f\n\r\t\"\\" "#.utf8))
                == .string("😀 é/\u{08}\u{0C}\n\r\t\"\\"))
        #expect(try JSONValue(parsing: Data("\t[ 1 ,\r\n-0 , { } ]\n".utf8)) == .array([.integer(1), .integer(0), .object([:])]))
        let deepest = String(repeating: "[", count: 64) + String(repeating: "]", count: 64)
        #expect(throws: Never.self) { try JSONValue(parsing: Data(deepest.utf8)) }
    }

    @Test func theErrorSaysWhere() {
        #expect(throws: JSONParseError(offset: 7, reason: "',' or '}' was expected")) {
            try JSONValue(parsing: Data(#"{"a":1 "b":2}"#.utf8))
        }
    }

    @Test("valid JSON numbers that are not 64-bit integers are named as such, with their path", arguments: [
        (#"{"limits":{"pin":60.5}}"#, "limits.pin", "the number 60.5 must be a whole number, written without a fraction or exponent"),
        (#"{"a":[1,{"b":1e2}]}"#, "a[1].b", "the number 1e2 must be a whole number, written without a fraction or exponent"),
        (#"[3.0]"#, "[0]", "the number 3.0 must be a whole number, written without a fraction or exponent"),
        (#"{"n":9223372036854775808}"#, "n", "the number 9223372036854775808 does not fit in 64 bits"),
        (#"{"n":18446744073709551616}"#, "n", "the number 18446744073709551616 does not fit in 64 bits"),
        (#"{"n":-9223372036854775809}"#, "n", "the number -9223372036854775809 does not fit in 64 bits"),
    ])
    func unsupportedNumbersAreNotCalledInvalidJSON(text: String, path: String, reason: String) {
        let error = #expect(throws: JSONParseError.self) { try JSONValue(parsing: Data(text.utf8)) }
        #expect(error?.kind == .unsupportedNumber)
        #expect(error?.path == path)
        #expect(error?.reason == reason)
    }

    @Test func theLimitsOf64BitsAreTaken() throws {
        #expect(try JSONValue(parsing: Data("[9223372036854775807,-9223372036854775808]".utf8))
                == .array([.integer(.max), .integer(.min)]))
    }

    @Test func aDuplicateMemberIsNamedWithItsPath() {
        let error = #expect(throws: JSONParseError.self) { try JSONValue(parsing: Data(#"{"a":{"b":1,"b":2}}"#.utf8)) }
        #expect(error?.kind == .duplicateMember)
        #expect(error?.path == "a")
        #expect(error?.reason == #"the object names "b" more than once"#)
    }

    // MARK: Member order

    @Test func membersAreSortedAndWhiteSpaceIsDropped() throws {
        #expect(try canonical(#"{ "b" : 1, "a" : 2, "aa" : 3, "A" : 4, "" : 0 }"#)
                == #"{"":0,"A":4,"a":2,"aa":3,"b":1}"#)
    }

    @Test func membersAreSortedByUTF16CodeUnitsNotByScalars() {
        // U+1F600 is the surrogate pair D83D DE00, which sorts before E000 in UTF-16 even though
        // the scalar is larger.
        let value = JSONValue.object(["\u{E000}": .integer(1), "\u{1F600}": .integer(2)])
        #expect(value.canonicalData == Data("{\"\u{1F600}\":2,\"\u{E000}\":1}".utf8))
    }

    @Test func rfc8785SortingExampleGivesThePublishedOrder() throws {
        // RFC 8785 §3.2.3.
        let input = #"""
        {
          "\u20ac": "Euro Sign",
          "\r": "Carriage Return",
          "\ufb33": "Hebrew Letter Dalet With Dagesh",
          "1": "One",
          "\ud83d\ude00": "Emoji: Grinning Face",
          "\u0080": "Control",
          "\u00f6": "Latin Small Letter O With Diaeresis"
        }
        """#
        let expected = #"{"\r":"Carriage Return","1":"One","\#u{80}":"Control","\#u{F6}":"Latin Small Letter O With Diaeresis","\#u{20AC}":"Euro Sign","\#u{1F600}":"Emoji: Grinning Face","\#u{FB33}":"Hebrew Letter Dalet With Dagesh"}"#
        #expect(try JSONValue(parsing: Data(input.utf8)).canonicalData == Data(expected.utf8))
    }

    @Test func nestedObjectsAreSortedAndArraysKeepTheirOrder() throws {
        #expect(try canonical(#"{"b":[3,1,{"d":true,"c":null}],"a":{"z":"x","y":-1}}"#)
                == #"{"a":{"y":-1,"z":"x"},"b":[3,1,{"c":null,"d":true}]}"#)
    }

    @Test func emptyContainersAreWrittenCompactly() throws {
        #expect(try canonical(#"{ "a" : [ ], "b" : { } }"#) == #"{"a":[],"b":{}}"#)
    }

    // MARK: Strings

    static let unescaped = [
        "\u{00}", "\u{01}", "\u{0B}", "\u{0E}", "\u{1F}",
        "\u{08}", "\u{0C}", "\n", "\r", "\t",
        "\"", "\\",
        "/", "a/b", "\u{7F}", "\u{2028}", "é€😀", "\u{FB33}",
    ]
    static let escaped = [
        #""\u0000""#, #""\u0001""#, #""\u000b""#, #""\u000e""#, #""\u001f""#,
        #""\b""#, #""\f""#, #""\n""#, #""\r""#, #""\t""#,
        #""\"""#, #""\\""#,
        #""/""#, #""a/b""#, "\"\u{7F}\"", "\"\u{2028}\"", "\"é€😀\"", "\"\u{FB33}\"",
    ]

    @Test(arguments: zip(unescaped, escaped))
    func stringsAreEscapedExactlyAsJCSSays(_ raw: String, _ expected: String) {
        #expect(JSONValue.string(raw).canonicalData == Data(expected.utf8))
    }

    @Test func memberNamesAreEscapedLikeStrings() {
        #expect(JSONValue.object(["a\nb": .null, "\u{1F}": .null]).canonicalString == #"{"\u001f":null,"a\nb":null}"#)
    }

    @Test func rfc8785StringExampleGivesThePublishedBytes() throws {
        // RFC 8785 §3.2.2.2, without its "numbers" member (non-integers are not part of the protocol).
        let input = #"{"string": "\u20ac$\u000F\u000aA'\u0042\u0022\u005c\\\"\/", "literals": [null, true, false]}"#
        let expected = #"{"literals":[null,true,false],"string":"\#u{20AC}$\u000f\nA'B\"\\\\\"/"}"#
        #expect(try JSONValue(parsing: Data(input.utf8)).canonicalData == Data(expected.utf8))
    }

    // MARK: Duplicate member names

    @Test(arguments: [
        #"{"a":1,"a":2}"#,
        #"{"alg":"ES256","alg":"none"}"#,
        #"{"a":1,"\u0061":2}"#,
        #"{"x":{"a":1,"b":2,"a":3}}"#,
        #"[1,{"a":[],"a":{}}]"#,
        // Canonically equivalent names are one key in a Swift dictionary, so one would be lost.
        #"{"\u00e9":1,"e\u0301":2}"#,
    ])
    func duplicateMemberNamesAreRefused(_ json: String) {
        // I-JSON (RFC 7493 §2.3), which JCS requires; JSONDecoder alone would keep one silently.
        #expect(throws: (any Error).self) { try JSONValue(parsing: Data(json.utf8)) }
    }

    @Test(arguments: [
        #"[{"a":1},{"a":2}]"#,
        #"{"a":{"a":{"a":1}}}"#,
        #"{"a":"a","b":"a"}"#,
        #"{"a\"":1,"a":2}"#,
        #"{"[":1,"{":2,",":{"]":3,"}":4}}"#,
    ])
    func equalNamesInDifferentObjectsOrInValuesAreAccepted(_ json: String) {
        #expect(throws: Never.self) { try JSONValue(parsing: Data(json.utf8)) }
    }

    // MARK: Round trips

    static let documents = [
        #"{"z":[true,false,null,-1,"\u00e9"],"a":{"k":"v\t"},"m":""}"#,
        #"[{"b":2,"a":1},[],{},"x\u0007y"]"#,
        #""\u001f\n""#,
        "-9223372036854775808",
    ]

    @Test(arguments: documents)
    func canonicalTextParsesBackToTheSameValueAndBytes(_ json: String) throws {
        let value = try JSONValue(parsing: Data(json.utf8))
        let reparsed = try JSONValue(parsing: value.canonicalData)
        #expect(reparsed == value)
        #expect(reparsed.canonicalData == value.canonicalData)
    }

    @Test func encodablesConvertAndDecodeBack() throws {
        struct Claims: Codable, Equatable {
            var subject: String
            var count: Int
            var tags: [String]
            var nested: [String: Bool]
        }
        let claims = Claims(subject: "a/b", count: 3, tags: ["x", "y"], nested: ["on": true])
        let value = try JSONValue(encoding: claims)
        #expect(value.canonicalString == #"{"count":3,"nested":{"on":true},"subject":"a/b","tags":["x","y"]}"#)
        #expect(try value.decode(as: Claims.self) == claims)
    }

    @Test func accessorsReadMembersOfTheRightKindOnly() {
        let value = JSONValue.object(["s": .string("text"), "i": .integer(7)])
        #expect(value["s"]?.stringValue == "text")
        #expect(value["i"]?.integerValue == 7)
        #expect(value["s"]?.integerValue == nil)
        #expect(value["i"]?.stringValue == nil)
        #expect(value["missing"] == nil)
        #expect(JSONValue.array([.null])["s"] == nil)
    }
}
