import Foundation
import Hummingbird
import NIOCore

extension Request {
    /// The whole body, refused with 413 past `limit` bytes.
    /// A body that is not empty must be declared `application/json`.
    func bodyData(limit: Int) async throws -> Data {
        let data: Data
        do {
            let buffer = try await body.collect(upTo: limit)
            data = Data(buffer.readableBytesView)
        } catch is NIOTooManyBytesError {
            throw APIError(.contentTooLarge, .payloadTooLarge, "the request body exceeds \(limit) bytes")
        }
        if !data.isEmpty {
            let type = headers[.contentType]?.split(separator: ";").first?.trimmingCharacters(in: .whitespaces).lowercased()
            guard type == "application/json" else {
                throw APIError(.unsupportedMediaType, .unsupportedMediaType, "the request body must be application/json")
            }
        }
        return data
    }

    /// The whole body decoded as JSON, with a precise 400 for anything malformed.
    func decodeJSON<T: Decodable>(_ type: T.Type, limit: Int) async throws -> T {
        try JSON.decode(T.self, from: try await bodyData(limit: limit))
    }
}
