import CountersignCore
import Foundation

/// Bytes that travel in WebAuthn's JSON forms as unpadded base64url (WebAuthn Level 3
/// `Base64URLString`). Decoding refuses padding, characters outside the alphabet and non-zero
/// unused bits, so a tampered value fails where it is read rather than deeper in a ceremony.
public struct Base64URLBytes: Codable, Sendable, Hashable, CustomStringConvertible {
    public var bytes: [UInt8]

    public init(_ bytes: [UInt8]) {
        self.bytes = bytes
    }

    public init(_ data: Data) {
        self.bytes = Array(data)
    }

    public init?(base64URL string: String) {
        guard let data = Data(base64URLEncoded: string) else { return nil }
        bytes = Array(data)
    }

    public var base64URL: String { Data(bytes).base64URLEncodedString }
    public var description: String { base64URL }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        let string = try container.decode(String.self)
        guard let decoded = Base64URLBytes(base64URL: string) else {
            throw DecodingError.dataCorruptedError(in: container, debugDescription: "not unpadded base64url")
        }
        self = decoded
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(base64URL)
    }
}
