import CountersignCore
import Foundation
import HTTPTypes
import Hummingbird

/// An error of the device and administration APIs: a status, an `error` code and a
/// description, and the members some codes carry. The API surface writes it as the JSON body
/// `ErrorBody`; feature errors of these APIs map each case to one of these.
public struct APIError: Error, Sendable, Equatable, WireFailure {
    public var status: HTTPResponse.Status
    public var code: DeviceErrorCode
    public var message: String
    public var missingRight: String?
    public var deregistration: String?
    public var attemptsRemaining: Int?
    public var headers: HTTPFields

    public init(_ status: HTTPResponse.Status, _ code: DeviceErrorCode, _ message: String,
                missingRight: String? = nil, deregistration: String? = nil, attemptsRemaining: Int? = nil,
                headers: HTTPFields = [:]) {
        self.status = status
        self.code = code
        self.message = message
        self.missingRight = missingRight
        self.deregistration = deregistration
        self.attemptsRemaining = attemptsRemaining
        self.headers = headers
    }

    var wireError: WireError {
        WireError(status, code: code.rawValue, description: message, headers: headers, missingRight: missingRight,
                  deregistration: deregistration, attemptsRemaining: attemptsRemaining)
    }

    public static func badRequest(_ message: String) -> APIError { APIError(.badRequest, .invalidRequest, message) }
    public static func notFound(_ message: String) -> APIError { APIError(.notFound, .notFound, message) }
}

/// A feature error of the device and administration APIs: each case is one `APIError`.
protocol APIFailure: WireFailure {
    var apiError: APIError { get }
}

extension APIFailure {
    var wireError: WireError { apiError.wireError }
}

/// The one JSON encoder and decoder of the HTTP layer: snake_case keys are spelled out in
/// `CodingKeys`, dates are RFC 3339 strings.
public enum JSON {
    public static func encode(_ value: some Encodable) throws -> Data {
        try Timestamps.encoder().encode(value)
    }

    /// Decodes a request body (or, naming it in `what`, another JSON document such as a signed
    /// payload), turning every decoding failure into a precise 400.
    public static func decode<T: Decodable>(_ type: T.Type, from data: Data, what: String = "the request body") throws -> T {
        guard !data.isEmpty else { throw APIError.badRequest("\(what) is empty; a JSON object is required") }
        // The strict parser first: it names a member given twice, and a number no field here
        // takes (3.0, 1e2, 2^63) by its field, where JSONDecoder would quietly read 3.0 as 3.
        let parsed: JSONValue
        do {
            parsed = try JSONValue(parsing: data)
        } catch where error.kind == .unsupportedNumber {
            throw APIError.badRequest(error.path.isEmpty ? "\(what): \(error.reason)" : "field \(error.path) is invalid: \(error.reason)")
        } catch where error.kind == .duplicateMember {
            throw APIError.badRequest("\(what) names a member more than once")
        } catch {
            throw APIError.badRequest("\(what) is not valid JSON: \(error.reason) (byte \(error.offset))")
        }
        if let path = parsed.pathToNULCharacter {
            throw APIError.badRequest(path.isEmpty ? "\(what) must not contain a NUL character"
                                      : "field \(path) must not contain a NUL character")
        }
        do {
            return try Timestamps.decoder().decode(T.self, from: data)
        } catch let DecodingError.keyNotFound(key, context) {
            throw APIError.badRequest("field \(path(context.codingPath + [key])) is required")
        } catch let DecodingError.typeMismatch(_, context) {
            if context.codingPath.isEmpty { throw APIError.badRequest("\(what) must be a JSON object") }
            throw APIError.badRequest("field \(path(context.codingPath)) has the wrong type")
        } catch let DecodingError.valueNotFound(_, context) {
            if context.codingPath.isEmpty { throw APIError.badRequest("\(what) must be a JSON object") }
            throw APIError.badRequest("field \(path(context.codingPath)) must not be null")
        } catch let DecodingError.dataCorrupted(context) {
            if context.codingPath.isEmpty { throw APIError.badRequest("\(what) is not valid JSON") }
            throw APIError.badRequest("field \(path(context.codingPath)) is invalid: \(context.debugDescription)")
        } catch {
            throw APIError.badRequest("\(what) is not valid JSON")
        }
    }

    private static func path(_ keys: [any CodingKey]) -> String {
        keys.map { $0.intValue.map { "[\($0)]" } ?? $0.stringValue }.joined(separator: ".")
    }

    /// A JSON response.
    public static func response(_ value: some Encodable, status: HTTPResponse.Status = .ok) throws -> Response {
        Response(status: status, headers: [.contentType: "application/json", .cacheControl: "no-store"],
                 body: .init(byteBuffer: ByteBuffer(data: try encode(value))))
    }
}
