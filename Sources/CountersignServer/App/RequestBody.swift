import Foundation
import Hummingbird
import NIOCore

/// Why a request body could not be read whole.
enum RequestBodyFailure: Error, Equatable {
    /// It is longer than the endpoint accepts.
    case tooLarge
    /// Its framing is broken (a malformed or overflowing chunk size, a transfer coding other
    /// than chunked) or the client went away before its end. The client's doing, never a
    /// fault of the server: answered 400, not logged as an error.
    case unreadable
    /// It is sent with a transfer coding other than chunked alone (`gzip, chunked`): the HTTP
    /// decoder would hand over the coded bytes as if they were the body.
    case unsupportedTransferCoding
}

extension Request {
    /// The whole body, at most `limit` bytes.
    func collectBody(upTo limit: Int) async throws(RequestBodyFailure) -> ByteBuffer {
        let codings = headers[values: .transferEncoding].flatMap { $0.split(separator: ",") }
            .map { $0.trimmingCharacters(in: .whitespaces).lowercased() }
        guard codings.allSatisfy({ $0 == "chunked" }) else { throw .unsupportedTransferCoding }
        let buffer: ByteBuffer
        do {
            buffer = try await body.collect(upTo: limit)
        } catch is NIOTooManyBytesError {
            throw .tooLarge
        } catch {
            throw .unreadable
        }
        // A client that goes away (or is timed out) mid-body ends the body stream as if it were
        // complete: Hummingbird hands over the bytes that came. Read as whole, a cut-off form
        // would be acted on as a shorter request, or answered as one with no credentials.
        if codings.isEmpty, let declared = headers[.contentLength].flatMap({ Int($0) }), buffer.readableBytes < declared {
            throw .unreadable
        }
        return buffer
    }

    /// The whole body, refused with 413 past `limit` bytes.
    /// A body that is not empty must be declared `application/json` (or one of `mediaTypes`).
    func bodyData(limit: Int, mediaTypes: Set<String> = ["application/json"]) async throws -> Data {
        let data: Data
        do {
            data = Data(try await collectBody(upTo: limit).readableBytesView)
        } catch .tooLarge {
            throw APIError(.contentTooLarge, .payloadTooLarge, "the request body exceeds \(limit) bytes")
        } catch .unreadable {
            throw APIError.badRequest("the request body is malformed or was cut off")
        } catch .unsupportedTransferCoding {
            throw APIError.badRequest("the request body must not use a transfer coding other than chunked")
        }
        if !data.isEmpty {
            let type = headers[.contentType]?.split(separator: ";").first?.trimmingCharacters(in: .whitespaces).lowercased()
            guard let type, mediaTypes.contains(type) else {
                throw APIError(.unsupportedMediaType, .unsupportedMediaType,
                               "the request body must be \(mediaTypes.sorted().joined(separator: " or "))")
            }
        }
        return data
    }

    /// The whole body decoded as JSON, with a precise 400 for anything malformed.
    func decodeJSON<T: Decodable>(_ type: T.Type, limit: Int) async throws -> T {
        try JSON.decode(T.self, from: try await bodyData(limit: limit))
    }
}
