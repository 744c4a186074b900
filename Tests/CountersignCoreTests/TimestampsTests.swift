import CountersignCore
import Foundation
import Testing

/// RFC 3339 timestamps in UTC with milliseconds, the form every date takes on the wire.
@Suite struct TimestampsTests {
    let instant = Date(timeIntervalSince1970: 1_700_000_000.5)

    @Test func formatIsUTCWithMillisecondsAndZ() {
        #expect(Timestamps.format(instant) == "2023-11-14T22:13:20.500Z")
        #expect(Timestamps.format(Date(timeIntervalSince1970: 0)) == "1970-01-01T00:00:00.000Z")
        #expect(Timestamps.format(Date(timeIntervalSince1970: 1_700_000_000)) == "2023-11-14T22:13:20.000Z")
    }

    @Test func formatAlwaysHasTheSameShape() {
        let text = Timestamps.format(Date())
        #expect(text.wholeMatch(of: /\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z/) != nil)
    }

    @Test func parseAcceptsFractionalSeconds() {
        #expect(Timestamps.parse("2023-11-14T22:13:20.500Z") == instant)
    }

    @Test func parseAcceptsWholeSeconds() {
        #expect(Timestamps.parse("2023-11-14T22:13:20Z") == Date(timeIntervalSince1970: 1_700_000_000))
    }

    @Test func parseHonoursAnOffset() {
        #expect(Timestamps.parse("2023-11-15T00:13:20.500+02:00") == instant)
    }

    @Test(arguments: ["", "yesterday", "1700000000", "2023-11-14", "2023-13-14T22:13:20Z", "2023-11-14T22:13:20.500"])
    func parseRefusesWhatIsNotRFC3339(_ text: String) {
        #expect(Timestamps.parse(text) == nil)
    }

    @Test func formatThenParseRoundTripsAtMillisecondPrecision() throws {
        let date = Date(timeIntervalSince1970: 1_790_123_456.789)
        let parsed = try #require(Timestamps.parse(Timestamps.format(date)))
        #expect(abs(parsed.timeIntervalSince(date)) < 0.001)
        #expect(Timestamps.format(parsed) == Timestamps.format(date))
    }

    struct Event: Codable, Equatable {
        var at: Date
        var until: Date?
        var path: String
    }

    @Test func theEncoderWritesTimestampsSortedKeysAndPlainSlashes() throws {
        let event = Event(at: instant, until: nil, path: "/device/v1/self")
        let json = String(decoding: try Timestamps.encoder().encode(event), as: UTF8.self)
        #expect(json == #"{"at":"2023-11-14T22:13:20.500Z","path":"/device/v1/self"}"#)
    }

    @Test func encoderAndDecoderRoundTrip() throws {
        let event = Event(at: instant, until: Date(timeIntervalSince1970: 1_700_003_600), path: "/")
        let data = try Timestamps.encoder().encode(event)
        #expect(try Timestamps.decoder().decode(Event.self, from: data) == event)
    }

    @Test func theDecoderAcceptsWholeSeconds() throws {
        let json = #"{"at":"2023-11-14T22:13:20Z","path":"/"}"#
        #expect(try Timestamps.decoder().decode(Event.self, from: Data(json.utf8)).at == Date(timeIntervalSince1970: 1_700_000_000))
    }

    @Test(arguments: [#"{"at":"yesterday","path":"/"}"#, #"{"at":1700000000,"path":"/"}"#])
    func theDecoderRefusesOtherDateForms(_ json: String) {
        #expect(throws: DecodingError.self) { try Timestamps.decoder().decode(Event.self, from: Data(json.utf8)) }
    }
}
