import Foundation
import Hummingbird
import NIOCore

extension Request {
    /// The whole body, refused with 413 past `limit` bytes.
    func bodyData(limit: Int) async throws -> Data {
        do {
            let buffer = try await body.collect(upTo: limit)
            return Data(buffer.readableBytesView)
        } catch is NIOTooManyBytesError {
            throw APIError(.contentTooLarge, .payloadTooLarge, "the request body exceeds \(limit) bytes")
        }
    }

    /// The whole body decoded as JSON, with a precise 400 for anything malformed.
    func decodeJSON<T: Decodable>(_ type: T.Type, limit: Int) async throws -> T {
        try JSON.decode(T.self, from: try await bodyData(limit: limit))
    }
}
