import Foundation

/// A plain-text message as RFC 5322 and MIME (RFC 2045–2047) write it: UTF-8 text in base64,
/// and any header text beyond printable ASCII as encoded words, so that no line of it is longer
/// than 78 characters and no value can add a header of its own.
public struct MailMessage: Sendable, Equatable {
    public var from: MailAddress
    /// The sender's display name ("Acme sign-in").
    public var fromName: String?
    public var to: MailAddress
    public var toName: String?
    public var subject: String
    /// The body, in lines separated by `\n` or `\r\n`.
    public var text: String
    public var date: Date
    /// The `Message-ID`, without its angle brackets: the same on every attempt, so that a
    /// receiving server that got a message whose answer was lost can drop the repeat.
    public var messageID: String
    /// Marks the message as sent by a machine (RFC 3834 `Auto-Submitted: auto-generated`), so
    /// that vacation responders do not answer it.
    public var automatic: Bool

    public init(from: MailAddress, fromName: String? = nil, to: MailAddress, toName: String? = nil, subject: String,
                text: String, date: Date, messageID: String, automatic: Bool = true) {
        self.from = from
        self.fromName = fromName
        self.to = to
        self.toName = toName
        self.subject = subject
        self.text = text
        self.date = date
        self.messageID = messageID
        self.automatic = automatic
    }

    /// The longest subject, in characters: a header line may hold 998.
    public static let maximumSubjectLength = 400

    /// The message as sent, with CRLF line ends.
    public func rendered() throws(MailError) -> Data {
        try Self.checkHeaderText(subject, name: "subject")
        guard subject.count <= Self.maximumSubjectLength else {
            throw .invalidHeader("subject", "is longer than \(Self.maximumSubjectLength) characters")
        }
        for (name, value) in [("sender name", fromName), ("recipient name", toName)] {
            if let value { try Self.checkHeaderText(value, name: name) }
        }
        guard MailAddress.isMessageIDPart(messageID) else {
            throw .invalidHeader("message id", "must be an id@host of letters, digits and .-_")
        }
        var lines = [
            "Date: " + Self.dateText(date),
            "From: " + Self.mailbox(from, name: fromName, header: "From: "),
            "To: " + Self.mailbox(to, name: toName, header: "To: "),
            "Subject: " + Self.unstructured(subject, header: "Subject: "),
            "Message-ID: <\(messageID)>",
        ]
        if automatic { lines.append("Auto-Submitted: auto-generated") }
        lines += [
            "MIME-Version: 1.0",
            "Content-Type: text/plain; charset=utf-8",
            "Content-Transfer-Encoding: base64",
            "",
        ]
        // Text is sent with CRLF line ends (RFC 2046 §4.1.1), whatever it was written with.
        let canonical = text.replacingOccurrences(of: "\r\n", with: "\n").replacingOccurrences(of: "\n", with: "\r\n")
        let body = Data(canonical.utf8).base64EncodedString(options: [.lineLength76Characters, .endLineWithCarriageReturn, .endLineWithLineFeed])
        return Data((lines.joined(separator: "\r\n") + "\r\n" + body + "\r\n").utf8)
    }

    /// Header text may hold any character but controls (a line break would start a header).
    private static func checkHeaderText(_ value: String, name: String) throws(MailError) {
        if value.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F || (0x80..<0xA0).contains($0.value) }) {
            throw .invalidHeader(name, "must not hold line breaks or other control characters")
        }
    }

    /// `name <address>`: the name as a quoted string when it is printable ASCII and, escaped,
    /// fits the header's line; else as encoded words, which fold (RFC 2047 §5(3) allows them in
    /// a phrase, not in a quoted string). The address goes on a line of its own when it would
    /// make the name's last line longer than 78 characters.
    private static func mailbox(_ address: MailAddress, name: String?, header: String) -> String {
        guard let name, !name.isEmpty else { return "<\(address)>" }
        let quoted = "\"" + name.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"") + "\""
        let phrase = name.unicodeScalars.allSatisfy({ (0x20..<0x7F).contains($0.value) }) && header.count + quoted.utf8.count <= 78
            ? quoted : encodedWords(name)
        let lines = phrase.components(separatedBy: "\r\n")
        let lastLine = (lines.count == 1 ? header.count : 0) + (lines.last?.utf8.count ?? 0)
        let angle = "<\(address)>"
        return phrase + (lastLine + 1 + angle.utf8.count > 78 ? "\r\n " : " ") + angle
    }

    /// Unstructured text (a subject) as it is when it is printable ASCII that fits the line,
    /// else as encoded words.
    private static func unstructured(_ value: String, header: String) -> String {
        if value.unicodeScalars.allSatisfy({ (0x20..<0x7F).contains($0.value) }) && header.count + value.utf8.count <= 78
            && !value.contains("=?") {
            return value
        }
        return encodedWords(value)
    }

    /// RFC 2047 `=?utf-8?b?…?=` words, each at most 75 characters and never splitting a
    /// character, folded one to a line.
    private static func encodedWords(_ value: String) -> String {
        var words: [String] = []
        var chunk: [UInt8] = []
        // 36 bytes make 48 base64 characters, which with `=?utf-8?b?` and `?=` make 60: with
        // the header's name, or the folding space, a line stays under 78.
        for character in value {
            let bytes = Array(String(character).utf8)
            if chunk.count + bytes.count > 36, !chunk.isEmpty {
                words.append(word(chunk))
                chunk = []
            }
            chunk += bytes
        }
        if !chunk.isEmpty { words.append(word(chunk)) }
        return words.joined(separator: "\r\n ")
    }

    private static func word(_ bytes: [UInt8]) -> String {
        "=?utf-8?b?" + Data(bytes).base64EncodedString() + "?="
    }

    private static let dateFormatter: DateFormatter = {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss '+0000'"
        return formatter
    }()

    private static let dateLock = NSLock()

    /// RFC 5322 §3.3: `Sun, 06 Dec 2026 00:40:00 +0000`.
    static func dateText(_ date: Date) -> String {
        dateLock.withLock { dateFormatter.string(from: date) }
    }
}

extension MailAddress {
    /// Either half of a `Message-ID` this client writes: letters, digits and `.-_`, and one `@`.
    static func isMessageIDPart(_ value: String) -> Bool {
        let parts = value.split(separator: "@", omittingEmptySubsequences: false)
        return parts.count == 2 && value.utf8.count <= 200 && parts.allSatisfy { part in
            !part.isEmpty && part.utf8.allSatisfy { byte in
                (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte | 0x20) || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
                    || byte == UInt8(ascii: ".") || byte == UInt8(ascii: "-") || byte == UInt8(ascii: "_")
            }
        }
    }
}
