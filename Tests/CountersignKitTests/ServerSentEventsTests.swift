import Foundation
import Testing
@testable import CountersignKit

/// Reading `text/event-stream` as the WHATWG standard says, whatever way the bytes are cut into
/// pieces on their way.
@Suite struct ServerSentEventsTests {
    /// Piece sizes from one byte to the whole stream at once.
    static let pieceSizes = [1, 2, 3, 5, 7, 64, Int.max]

    /// Feeds `bytes` in pieces of `size` and collects the events.
    static func parse(_ bytes: [UInt8], pieces size: Int) -> [ServerSentEvent] {
        var parser = ServerSentEventParser()
        var events: [ServerSentEvent] = []
        var start = 0
        while start < bytes.count {
            let end = size >= bytes.count - start ? bytes.count : start + size
            events += parser.feed(Data(bytes[start..<end]))
            start = end
        }
        return events
    }

    static func parse(_ text: String, pieces size: Int) -> [ServerSentEvent] {
        parse(Array(text.utf8), pieces: size)
    }

    @Test(arguments: pieceSizes)
    func theServersFramesAreReadAsTypedEvents(_ size: Int) {
        let stream = """
            : connected

            event: request
            data: {"id":"txn_1"}

            : keepalive

            event: closed
            data: {"id":"txn_1","status":"approved"}


            """
        #expect(Self.parse(stream, pieces: size) == [
            ServerSentEvent(type: "request", data: #"{"id":"txn_1"}"#),
            ServerSentEvent(type: "closed", data: #"{"id":"txn_1","status":"approved"}"#),
        ])
    }

    @Test(arguments: ["\n", "\r\n", "\r"], pieceSizes)
    func everyLineEndingEndsALine(_ lineEnd: String, _ size: Int) {
        let stream = ["event: request", "data: one", "data: two", "", "data: three", "", ""].joined(separator: lineEnd)
        #expect(Self.parse(stream, pieces: size) == [
            ServerSentEvent(type: "request", data: "one\ntwo"),
            ServerSentEvent(data: "three"),
        ])
    }

    @Test(arguments: pieceSizes)
    func aCarriageReturnAndTheLineFeedAfterItEndOneLineEvenInSeparatePieces(_ size: Int) {
        // Were the pair read as two line ends, the blank line would end the event after `one`.
        let stream = "data: one\r\ndata: two\r\n\r\n"
        #expect(Self.parse(stream, pieces: size) == [ServerSentEvent(data: "one\ntwo")])
    }

    @Test func anEventWithoutATypeIsAMessage() {
        #expect(Self.parse("data: hello\n\n", pieces: .max) == [ServerSentEvent(type: "message", data: "hello")])
    }

    @Test func onlyOneSpaceAfterTheColonIsDropped() {
        #expect(Self.parse("data:no space\n\ndata:  two spaces\n\n", pieces: .max) == [
            ServerSentEvent(data: "no space"), ServerSentEvent(data: " two spaces"),
        ])
    }

    @Test func aValueMayContainColons() {
        #expect(Self.parse("data: {\"a\":\"b:c\"}\n\n", pieces: .max) == [ServerSentEvent(data: #"{"a":"b:c"}"#)])
    }

    @Test func aFieldWithoutAColonHasAnEmptyValue() {
        #expect(Self.parse("data\n\ndata\ndata\n\n", pieces: .max) == [
            ServerSentEvent(data: ""), ServerSentEvent(data: "\n"),
        ])
    }

    @Test func anEventWithoutDataIsNotDispatchedAndItsTypeIsForgotten() {
        #expect(Self.parse("event: request\n\ndata: later\n\n", pieces: .max) == [ServerSentEvent(data: "later")])
    }

    @Test func commentsAreIgnoredEvenInsideAnEvent() {
        #expect(Self.parse(": hello\nevent: request\n: keepalive\ndata: x\n\n", pieces: .max) == [
            ServerSentEvent(type: "request", data: "x"),
        ])
    }

    @Test func anEventTheStreamEndsInTheMiddleOfIsNotDispatched() {
        #expect(Self.parse("data: complete\n\nevent: request\ndata: cut off\n", pieces: .max) == [
            ServerSentEvent(data: "complete"),
        ])
    }

    @Test func theLastEventIDCarriesOverToLaterEvents() {
        let stream = "id: 7\ndata: a\n\ndata: b\n\nid\ndata: c\n\n"
        #expect(Self.parse(stream, pieces: .max) == [
            ServerSentEvent(data: "a", lastEventID: "7"),
            ServerSentEvent(data: "b", lastEventID: "7"),
            ServerSentEvent(data: "c", lastEventID: ""),
        ])
    }

    @Test func anIDContainingNULIsIgnored() {
        #expect(Self.parse("id: 1\n\nid: 2\u{0}x\ndata: a\n\n", pieces: .max) == [ServerSentEvent(data: "a", lastEventID: "1")])
    }

    @Test func retryAndUnknownFieldsAreIgnored() {
        #expect(Self.parse("retry: 3000\nfoo: bar\ndata: a\n\n", pieces: .max) == [ServerSentEvent(data: "a")])
    }

    @Test(arguments: pieceSizes)
    func aByteOrderMarkAtTheStartIsDropped(_ size: Int) {
        let stream: [UInt8] = [0xEF, 0xBB, 0xBF] + Array("event: request\ndata: a\n\n".utf8)
        #expect(Self.parse(stream, pieces: size) == [ServerSentEvent(type: "request", data: "a")])
    }

    @Test(arguments: pieceSizes)
    func multiByteCharactersSurviveAnySplit(_ size: Int) {
        #expect(Self.parse("data: Zürich → 東京 ✓\n\n", pieces: size) == [ServerSentEvent(data: "Zürich → 東京 ✓")])
    }

    @Test func invalidUTF8BecomesTheReplacementCharacter() {
        let stream = Array("data: a".utf8) + [0xFF] + Array("b\n\n".utf8)
        #expect(Self.parse(stream, pieces: .max) == [ServerSentEvent(data: "a\u{FFFD}b")])
    }
}
