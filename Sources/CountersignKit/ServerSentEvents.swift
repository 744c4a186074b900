import Foundation

/// One event of a `text/event-stream` (Server-Sent Events, WHATWG HTML §9.2).
struct ServerSentEvent: Sendable, Equatable {
    /// The `event` field; `message` when the server named none.
    var type: String
    /// The `data` lines of the event, joined with line feeds.
    var data: String
    /// The last `id` the stream set, up to and including this event; empty when none was.
    var lastEventID: String

    init(type: String = "message", data: String, lastEventID: String = "") {
        self.type = type
        self.data = data
        self.lastEventID = lastEventID
    }
}

/// Reads a `text/event-stream` as the WHATWG "event stream interpretation" prescribes, from
/// pieces split anywhere — inside a line, between a CR and its LF, inside a UTF-8 sequence:
///
/// - a line ends at CRLF, LF or CR; a blank line ends an event;
/// - `field: value` (one space after the colon is dropped), a line without a colon is a field
///   with an empty value, a line starting with a colon is a comment;
/// - `data` lines accumulate, joined by LF; `event` names the type; `id` sets the last event id
///   (unless it contains NUL) for this and later events;
/// - an event without any `data` line is not dispatched, and neither is one the stream ends in
///   the middle of;
/// - `retry` and unknown fields are ignored: when to reconnect is the caller's decision.
///
/// ```swift
/// var parser = ServerSentEventParser()
/// for try await piece in answer.body {
///     for event in parser.feed(piece) { handle(event) }
/// }
/// ```
struct ServerSentEventParser: Sendable {
    private var line: [UInt8] = []
    /// The previous piece ended in CR: an LF starting this one belongs to that line end.
    private var afterCarriageReturn = false
    private var isFirstLine = true
    private var type = ""
    private var data = ""
    private var hasData = false
    private var lastEventID = ""

    private static let lineFeed = UInt8(ascii: "\n")
    private static let carriageReturn = UInt8(ascii: "\r")
    private static let byteOrderMark: [UInt8] = [0xEF, 0xBB, 0xBF]

    /// Reads the next piece of the stream and returns the events it completes.
    mutating func feed(_ piece: some Sequence<UInt8>) -> [ServerSentEvent] {
        var events: [ServerSentEvent] = []
        for byte in piece {
            if afterCarriageReturn {
                afterCarriageReturn = false
                if byte == Self.lineFeed { continue }
            }
            switch byte {
            case Self.lineFeed:
                if let event = endLine() { events.append(event) }
            case Self.carriageReturn:
                afterCarriageReturn = true
                if let event = endLine() { events.append(event) }
            default:
                line.append(byte)
            }
        }
        return events
    }

    private mutating func endLine() -> ServerSentEvent? {
        var bytes = line[...]
        line.removeAll(keepingCapacity: true)
        if isFirstLine {
            isFirstLine = false
            if bytes.starts(with: Self.byteOrderMark) { bytes = bytes.dropFirst(Self.byteOrderMark.count) }
        }
        // Lines are split on bytes, which is safe in UTF-8: CR and LF never occur inside a
        // multi-byte sequence. Invalid sequences become U+FFFD, as the standard says.
        let text = String(decoding: bytes, as: UTF8.self)
        guard !text.isEmpty else { return dispatch() }
        guard !text.hasPrefix(":") else { return nil }
        let field: Substring
        var value: Substring
        if let colon = text.firstIndex(of: ":") {
            field = text[..<colon]
            value = text[text.index(after: colon)...]
            if value.hasPrefix(" ") { value = value.dropFirst() }
        } else {
            field = text[...]
            value = ""
        }
        switch field {
        case "event":
            type = String(value)
        case "data":
            if hasData { data += "\n" }
            data += value
            hasData = true
        case "id" where !value.contains("\0"):
            lastEventID = String(value)
        default:
            break
        }
        return nil
    }

    private mutating func dispatch() -> ServerSentEvent? {
        defer {
            type = ""
            data = ""
            hasData = false
        }
        guard hasData else { return nil }
        return ServerSentEvent(type: type.isEmpty ? "message" : type, data: data, lastEventID: lastEventID)
    }
}
