import CountersignMailFormat
import Foundation
import LibFuzzerDriver
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Hands the command line to libFuzzer, which then calls `fuzzMail` once per input.
@main enum FuzzMail {
    static func main() {
        var argc = CommandLine.argc
        var argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>? = CommandLine.unsafeArgv
        exit(LLVMFuzzerRunDriver(&argc, &argv, fuzzMail))
    }
}

/// One input, as an address a user was given and as the text of a message (a device's name in a
/// subject, a display name, a template's output). A failure traps, which libFuzzer reports as a
/// crash and saves the input.
///
/// - An address that reads is the input itself, ASCII, with nothing an SMTP command or a header
///   could be broken with (white space, controls, `<>`, `,;:"`, a second `@` in the domain).
/// - A message renders, or is refused only for controls in a header value; rendered, its head has
///   exactly the headers written (no value added one), no line is longer than 78 characters
///   (the addresses here are short), the subject and names read back from their encoded words,
///   and the body reads back as the text with CRLF line ends.
@_cdecl("LLVMFuzzerTestOneInput")
func fuzzMail(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let text = String(decoding: UnsafeBufferPointer(start: data, count: size), as: UTF8.self)

    if let address = try? MailAddress(text) {
        let written = address.description
        guard written == text, written.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F }),
              !written.contains(where: { "<>,;:\"()[]\\".contains($0) }),
              address.domain.firstIndex(of: "@") == nil else {
            fatalError("an address read as something unsafe to send: \(text.debugDescription)")
        }
    }

    // The input split three ways: a subject, a sender's name, a body.
    let parts = text.split(separator: "\u{1}", maxSplits: 2, omittingEmptySubsequences: false).map(String.init)
    let subject = parts[0]
    let name = parts.count > 1 ? parts[1] : nil
    let body = parts.count > 2 ? parts[2] : text
    let message = MailMessage(
        from: try! MailAddress("no-reply@example.com"), fromName: name, to: try! MailAddress("ada@example.com"),
        toName: "Ada", subject: subject, text: body, date: Date(timeIntervalSince1970: 1_796_515_200),
        messageID: "mail_01@example.com")
    let rendered: Data
    do {
        rendered = try message.rendered()
    } catch {
        let controls = (subject + (name ?? "")).unicodeScalars.contains {
            $0.value < 0x20 || $0.value == 0x7F || (0x80..<0xA0).contains($0.value)
        }
        guard controls || subject.count > MailMessage.maximumSubjectLength else {
            fatalError("a message without controls in its headers was refused: \(error)")
        }
        return 0
    }
    let output = String(decoding: rendered, as: UTF8.self)
    guard let split = output.range(of: "\r\n\r\n") else { fatalError("no blank line after the head") }
    let head = output[..<split.lowerBound].components(separatedBy: "\r\n")
    let names = head.filter { !$0.hasPrefix(" ") }.map { $0.prefix { $0 != ":" } }
    guard names == ["Date", "From", "To", "Subject", "Message-ID", "Auto-Submitted", "MIME-Version", "Content-Type",
                    "Content-Transfer-Encoding"] else {
        fatalError("the head holds other headers: \(names)")
    }
    guard output.components(separatedBy: "\r\n").allSatisfy({ $0.utf8.count <= 78 }),
          !output.replacingOccurrences(of: "\r\n", with: "").contains(where: { $0 == "\r" || $0 == "\n" }) else {
        fatalError("a line is too long, or ends otherwise than in CRLF")
    }
    let unfolded = head.joined(separator: "\r\n").replacingOccurrences(of: "\r\n ", with: " ")
    let headers = Dictionary(unfolded.components(separatedBy: "\r\n").map { line -> (String, String) in
        let colon = line.firstIndex(of: ":")!
        return (String(line[..<colon]), String(line[line.index(colon, offsetBy: 2)...]))
    }) { first, _ in first }
    guard decodeWords(headers["Subject"]!) == subject else {
        fatalError("the subject does not read back: \(headers["Subject"]!.debugDescription)")
    }
    if let name, !name.isEmpty {
        let from = headers["From"]!
        let phrase = String(from[..<from.range(of: " <no-reply@example.com>")!.lowerBound])
        let read = phrase.hasPrefix("\"")
            ? String(phrase.dropFirst().dropLast()).replacingOccurrences(of: "\\\"", with: "\"").replacingOccurrences(of: "\\\\", with: "\\")
            : decodeWords(phrase)
        guard read == name else { fatalError("the sender's name does not read back: \(phrase.debugDescription)") }
    }
    let encoded = output[split.upperBound...].replacingOccurrences(of: "\r\n", with: "")
    guard let decoded = Data(base64Encoded: encoded),
          String(decoding: decoded, as: UTF8.self)
            == body.replacingOccurrences(of: "\r\n", with: "\n").replacingOccurrences(of: "\n", with: "\r\n") else {
        fatalError("the body does not read back")
    }
    return 0
}

/// Text as written, or RFC 2047 `=?utf-8?b?…?=` words separated by single spaces, read back.
private func decodeWords(_ value: String) -> String {
    guard value.hasPrefix("=?utf-8?b?") else { return value }
    var bytes: [UInt8] = []
    for word in value.split(separator: " ") {
        guard word.hasPrefix("=?utf-8?b?"), word.hasSuffix("?="),
              let data = Data(base64Encoded: String(word.dropFirst(10).dropLast(2))) else {
            fatalError("not an encoded word: \(word)")
        }
        bytes += data
    }
    return String(decoding: bytes, as: UTF8.self)
}
