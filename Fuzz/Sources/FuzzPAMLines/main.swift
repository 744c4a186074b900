import CountersignPAM
import LibFuzzerDriver
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// One line from the PAM module's helper, as the module reads it (cs_parse_line, C): it must not
/// read outside the line, and what it accepts must be what the protocol allows — a text within
/// the line, after its keyword, of 1 to 1,024 bytes of UTF-8 with no control character, or a
/// RESULT naming one verdict exactly. A failure traps, which libFuzzer reports as a crash.
@_cdecl("LLVMFuzzerTestOneInput")
func fuzzPAMLine(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    // A copy of exactly `size` bytes, so that AddressSanitizer sees any read past the line.
    let line = UnsafeMutablePointer<CChar>.allocate(capacity: max(size, 1))
    defer { line.deallocate() }
    if let data { data.withMemoryRebound(to: CChar.self, capacity: size) { line.update(from: $0, count: size) } }
    var parsed = cs_line()
    let kind = cs_parse_line(size == 0 ? nil : line, size, &parsed)
    guard kind == parsed.kind else { fatalError("the kind returned is not the kind stored") }
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    switch kind {
    case CS_LINE_RESULT:
        let verdicts = ["RESULT SUCCESS", "RESULT DENY", "RESULT UNAVAILABLE", "RESULT USER_UNKNOWN"]
        guard verdicts.contains(where: { Array($0.utf8) == bytes }), parsed.text == nil else {
            fatalError("a RESULT line that is not one of the verdicts was accepted")
        }
    case CS_LINE_PROMPT, CS_LINE_INFO, CS_LINE_ERROR, CS_LINE_LOG:
        guard let text = parsed.text else { fatalError("a text line without its text") }
        let offset = UnsafePointer(line).distance(to: text)
        guard offset > 0, offset + parsed.length == size, (1...Int(CS_MAXIMUM_LINE)).contains(parsed.length) else {
            fatalError("the text is not the rest of the line")
        }
        let textBytes = Array(bytes[offset...])
        guard String(validating: textBytes, as: UTF8.self) != nil else { fatalError("text that is not UTF-8 was accepted") }
        guard !String(decoding: textBytes, as: UTF8.self).unicodeScalars.contains(where: {
            $0.properties.generalCategory == .control
        }) else { fatalError("a control character was accepted") }
    default:
        guard parsed.text == nil, parsed.result == CS_RESULT_NONE else { fatalError("an invalid line left a text or verdict") }
    }
    return 0
}

var argc = CommandLine.argc
var argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>? = CommandLine.unsafeArgv
exit(LLVMFuzzerRunDriver(&argc, &argv, fuzzPAMLine))
