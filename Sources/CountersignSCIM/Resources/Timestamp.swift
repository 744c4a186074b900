import Foundation

/// SCIM's `dateTime` (RFC 7643 §2.3.5, an `xsd:dateTime` that RFC 3339 writes).
enum Timestamp {
    private static let withFraction = Date.ISO8601FormatStyle(includingFractionalSeconds: true)
    private static let withoutFraction = Date.ISO8601FormatStyle()

    static func date(_ text: String) -> Date? {
        (try? withoutFraction.parse(text)) ?? (try? withFraction.parse(text))
    }

    /// Written in UTC with milliseconds, so that timestamps of one server sort as text too.
    static func text(_ date: Date) -> String {
        withFraction.format(date)
    }
}
