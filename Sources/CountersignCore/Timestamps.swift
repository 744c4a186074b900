import Foundation

/// RFC 3339 timestamps in UTC with millisecond precision, the form every date takes on the wire.
public enum Timestamps {
    private static let style = Date.ISO8601FormatStyle(includingFractionalSeconds: true, timeZone: .gmt)

    public static func format(_ date: Date) -> String {
        date.formatted(style)
    }

    public static func parse(_ text: String) -> Date? {
        if let date = try? style.parse(text) { return date }
        return try? Date.ISO8601FormatStyle(timeZone: .gmt).parse(text)
    }

    public static func encoder() -> JSONEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        encoder.dateEncodingStrategy = .custom { date, encoder in
            var container = encoder.singleValueContainer()
            try container.encode(format(date))
        }
        return encoder
    }

    public static func decoder() -> JSONDecoder {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .custom { decoder in
            let container = try decoder.singleValueContainer()
            let text = try container.decode(String.self)
            guard let date = parse(text) else {
                throw DecodingError.dataCorruptedError(in: container, debugDescription: "not an RFC 3339 timestamp")
            }
            return date
        }
        return decoder
    }
}
