import Foundation
import NIOCore
import Testing
@testable import CountersignServer

/// The console's multipart forms: MultipartKit parses the body; the boundary and the
/// `Content-Disposition` parameters are read by hand, so both are held to a table of cases and to
/// thousands of deterministic mutations of a real form, none of which may trap or be misread.
@Suite("Console forms: multipart/form-data")
struct ConsoleFormTests {
    static let boundary = "----formBoundaryX7a"

    static func body(_ parts: [(disposition: String, body: String)]) -> [UInt8] {
        var text = ""
        for part in parts {
            text += "--\(boundary)\r\nContent-Disposition: \(part.disposition)\r\n\r\n\(part.body)\r\n"
        }
        return Array((text + "--\(boundary)--\r\n").utf8)
    }

    static func parse(_ bytes: [UInt8]) throws -> ConsoleForm {
        var buffer = ByteBuffer()
        buffer.writeBytes(bytes)
        return try ConsoleForm(multipart: buffer, boundary: boundary)
    }

    @Test("Fields and files are told apart by filename; an empty file input is not a file")
    func fieldsAndFiles() throws {
        let form = try Self.parse(Self.body([
            (#"form-data; name="csrf""#, "token"),
            (#"form-data; name="certificate_file"; filename="bank;ios.p12""#, "\u{1}\u{2}binary"),
            (#"form-data; name="empty_file"; filename="""#, ""),
            (#"form-data; name="password""#, ""),
        ]))
        #expect(form.fields["csrf"] == "token" && form.fields["password"] == nil)
        #expect(form.files["certificate_file"]?.filename == "bank;ios.p12")
        #expect(form.files["certificate_file"]?.data == Data("\u{1}\u{2}binary".utf8))
        #expect(form.files["empty_file"] == nil && form.fields["empty_file"] == nil)
    }

    @Test("Refused: a field twice, a NUL, text that is not UTF-8, a part without a name, a body cut off")
    func refusals() throws {
        #expect(throws: FormError.duplicate("a")) {
            try Self.parse(Self.body([(#"form-data; name="a""#, "1"), (#"form-data; name="a""#, "2")]))
        }
        #expect(throws: FormError.nulCharacter("a")) { try Self.parse(Self.body([(#"form-data; name="a""#, "x\u{0}y")])) }
        var latin1 = Self.body([(#"form-data; name="a""#, "caf_")])
        latin1[latin1.firstIndex(of: UInt8(ascii: "_"))!] = 0xE9
        #expect(throws: FormError.malformedEncoding) { try Self.parse(latin1) }
        #expect(throws: FormError.unreadable) { try Self.parse(Self.body([("form-data", "nameless")])) }
        let whole = Self.body([(#"form-data; name="a""#, "1")])
        #expect(throws: (any Error).self) {
            let form = try Self.parse(Array(whole.prefix(whole.count - 10)))
            // A body cut inside its last part must not yield that part as complete.
            if form.fields["a"] == "1" { throw FormError.unreadable }
        }
    }

    @Test("A header name with a byte above 0x7F is refused (MultipartKit would trap on it); a file name in UTF-8 passes")
    func nonASCIIHeaderNames() throws {
        var named = Self.body([(#"form-data; name="a""#, "1")])
        let header = Array("Content-Disposition".utf8)
        let at = try #require(named.indices.first { named[$0...].starts(with: header) })
        named[at + 3] = 0xE9
        #expect(throws: FormError.unreadable) { try Self.parse(named) }
        let form = try Self.parse(Self.body([(#"form-data; name="f"; filename="clé.p12""#, "x")]))
        #expect(form.files["f"]?.filename == "clé.p12")
    }

    @Test("A body that is nothing but delimiters, or one long header section, is read once through and refused")
    func pathologicalBodies() throws {
        let delimiters = Array(String(repeating: "--\(Self.boundary)", count: 8_000).utf8)
        #expect(throws: FormError.self) { try Self.parse(delimiters) }
        let header = Array(("--\(Self.boundary)\r\n" + String(repeating: "X-Long: value\r\n", count: 15_000)).utf8)
        #expect(throws: FormError.self) { try Self.parse(header) }
    }

    @Test("The boundary of a content type", arguments: [
        ("multipart/form-data; boundary=abc", "abc"),
        (#"Multipart/Form-Data; charset=utf-8; boundary="a b:c""#, "a b:c"),
        ("multipart/form-data", nil),
        ("multipart/form-data; boundary=", nil),
        ("multipart/mixed; boundary=abc", nil),
        ("application/x-www-form-urlencoded", nil),
        ("multipart/form-data; boundary=" + String(repeating: "x", count: 71), nil),
    ] as [(String, String?)])
    func boundaries(_ contentType: String, _ expected: String?) {
        #expect(ConsoleForm.multipartBoundary(contentType) == expected)
    }

    @Test("Content-Disposition parameters, with quotes and semicolons inside them")
    func dispositionParameters() {
        #expect(ConsoleForm.parameter("name", of: #"form-data; name="a;b"; filename="c.p8""#) == "a;b")
        #expect(ConsoleForm.parameter("filename", of: #"form-data; name="a;b"; filename="c.p8""#) == "c.p8")
        #expect(ConsoleForm.parameter("name", of: "form-data; NAME=plain") == "plain")
        #expect(ConsoleForm.parameter("filename", of: #"form-data; name="x""#) == nil)
        #expect(ConsoleForm.parameter("name", of: #"form-data; name=""#) == "\"")
        #expect(ConsoleForm.parameter("name", of: "") == nil)
    }

    @Test("20,000 mutations of a real form: each parses or is refused with a FormError, and never traps")
    func mutations() throws {
        let original = Self.body([
            (#"form-data; name="csrf""#, "7Qk2"), (#"form-data; name="client_app_key""#, "bank-ios"),
            (#"form-data; name="certificate_file"; filename="bank.p12""#, "\u{30}\u{82}\u{1}binary"),
            (#"form-data; name="password""#, "s3cret"),
        ])
        var mutator = WebAuthnMutationTests.Mutator(state: 20_261_125)
        var parsed = 0, refused = 0
        for _ in 0..<20_000 {
            var bytes = original
            for _ in 0..<Int(mutator.next() % 3 + 1) { bytes = mutator.mutate(bytes) }
            do {
                let form = try Self.parse(bytes)
                parsed += 1
                for (_, value) in form.files { #expect(value.data.count <= bytes.count) }
            } catch is FormError {
                refused += 1
            }
        }
        #expect(parsed > 0 && refused > 0, "parsed \(parsed), refused \(refused)")
    }
}
