import CountersignPAM
import Testing

/// The PAM module's reader of its helper's lines (cs_parse_line, C), case by case; fuzzed as
/// FuzzPAMLines.
@Suite("PAM module: the helper's lines")
struct PAMLineTests {
    /// A line as read: its kind, verdict and text (copied out while the line's bytes live).
    struct Parsed {
        let kind: cs_line_kind
        let result: cs_result
        let text: String?
        let length: Int
    }

    static func parse(_ bytes: [UInt8]) -> Parsed {
        bytes.withUnsafeBufferPointer { buffer in
            buffer.withMemoryRebound(to: CChar.self) { characters in
                var line = cs_line()
                _ = cs_parse_line(characters.baseAddress, characters.count, &line)
                let text = line.text.map {
                    String(decoding: UnsafeRawBufferPointer(start: $0, count: line.length), as: UTF8.self)
                }
                return Parsed(kind: line.kind, result: line.result, text: text, length: line.length)
            }
        }
    }

    static func text(_ line: Parsed) -> String? { line.text }

    @Test("each kind of line, with its text or verdict")
    func kinds() {
        let prompt = Self.parse(Array("PROMPT Approve on your phone and choose 47, then press Enter: ".utf8))
        #expect(prompt.kind == CS_LINE_PROMPT && Self.text(prompt) == "Approve on your phone and choose 47, then press Enter: ")
        #expect(Self.parse(Array("INFO Grüße 📱".utf8)).kind == CS_LINE_INFO)
        #expect(Self.text(Self.parse(Array("ERROR Denied on your phone.".utf8))) == "Denied on your phone.")
        #expect(Self.parse(Array("LOG x".utf8)).kind == CS_LINE_LOG)
        for (word, result) in [("SUCCESS", CS_RESULT_SUCCESS), ("DENY", CS_RESULT_DENY),
                               ("UNAVAILABLE", CS_RESULT_UNAVAILABLE), ("USER_UNKNOWN", CS_RESULT_USER_UNKNOWN)] {
            let line = Self.parse(Array("RESULT \(word)".utf8))
            #expect(line.kind == CS_LINE_RESULT && line.result == result && line.text == nil)
        }
    }

    static let invalidLines: [[UInt8]] = {
        let texts = ["RESULT success", "RESULT SUCCESS ", "RESULT", "INFO", "INFO ", "info hello", "NOTE hello", " INFO hello",
                     "INFO \u{1B}[2J", "ERROR a\tb", "INFO \u{85}", "INFO \u{7F}"]
        let info: [UInt8] = Array("INFO ".utf8)
        let malformed: [[UInt8]] = [[0xC0, 0x80], [0xED, 0xA0, 0x80], [0xE2, 0x82], [0xF4, 0x90, 0x80, 0x80], [0x61, 0x00]]
        let tooLong: [UInt8] = Array("PROMPT ".utf8) + [UInt8](repeating: 0x61, count: 1025)
        return texts.map { Array($0.utf8) } + malformed.map { info + $0 } + [tooLong]
    }()

    @Test("invalid: unknown keywords and verdicts, no text, a text too long, control characters, malformed UTF-8",
          arguments: invalidLines)
    func invalid(line: [UInt8]) {
        let parsed = Self.parse(line)
        #expect(parsed.kind == CS_LINE_INVALID && parsed.text == nil && parsed.result == CS_RESULT_NONE)
    }

    @Test("a text of exactly 1,024 bytes is read")
    func longest() {
        #expect(Self.parse(Array("PROMPT ".utf8) + Array(repeating: 0x61, count: 1024)).length == 1024)
    }
}
