import Foundation
import Hummingbird
import NIOCore

/// The parameters of an `application/x-www-form-urlencoded` request body, as OAuth reads them
/// (RFC 6749 §3.1, §3.2): a parameter sent twice is an error, one sent without a value counts
/// as omitted, and unknown parameters are simply never asked for.
///
/// ```swift
/// let form = try await FormParameters.read(request)
/// let scope = form["scope"]          // nil when absent or empty
/// ```
struct FormParameters: Sendable {
    /// OAuth requests are a few hundred bytes; 16 KiB leaves room for long hints and ID tokens.
    static let maximumSize = 16 * 1024

    private let values: [String: String]

    /// Reads and parses the body of `request`. `admittingNUL` names the parameters whose own
    /// parse answers a NUL with its standard's error and never stores the text: a `binding_message`
    /// (`invalid_binding_message`, CIBA §13), the `token` of revocation and introspection (no
    /// such token: RFC 7009 §2.2, RFC 7662 §2.2).
    static func read(_ request: Request, admittingNUL: Set<String> = []) async throws -> FormParameters {
        let buffer = try await body(of: request, upTo: maximumSize)
        return try FormParameters(
            body: Data(buffer.readableBytesView), contentType: request.headers[.contentType], admittingNUL: admittingNUL)
    }

    /// The query of `request`, read as OAuth reads a form (RFC 6749 §3.1: a parameter sent
    /// twice is an error).
    static func query(of request: Request) throws -> FormParameters {
        try FormParameters(body: Data((request.uri.query ?? "").utf8), contentType: "application/x-www-form-urlencoded")
    }

    /// The body of a form `request`, at most `limit` bytes; why not as a `FormError`.
    static func body(of request: Request, upTo limit: Int) async throws -> ByteBuffer {
        do {
            return try await request.collectBody(upTo: limit)
        } catch .tooLarge {
            throw FormError.tooLarge(limit)
        } catch .unreadable {
            throw FormError.unreadable
        } catch .unsupportedTransferCoding {
            throw FormError.unsupportedTransferCoding
        }
    }

    init(body: Data, contentType: String?, admittingNUL: Set<String> = []) throws {
        let mediaType = contentType?.split(separator: ";").first?.trimmingCharacters(in: .whitespaces).lowercased()
        guard mediaType == "application/x-www-form-urlencoded" else { throw FormError.notForm }
        var values: [String: String] = [:]
        var seen: Set<String> = []
        for pair in body.split(separator: UInt8(ascii: "&"), omittingEmptySubsequences: true) {
            let parts = pair.split(separator: UInt8(ascii: "="), maxSplits: 1, omittingEmptySubsequences: false)
            let name = try Self.decoded(parts[0])
            let value = parts.count > 1 ? try Self.decoded(parts[1]) : ""
            guard seen.insert(name).inserted else { throw FormError.duplicate(name) }
            // No parameter can hold a NUL (PostgreSQL cannot store one): refused here, alike on
            // both engines, rather than deep in a query, unless its own parse refuses it first.
            guard !name.unicodeScalars.contains("\0"),
                  admittingNUL.contains(name) || !value.unicodeScalars.contains("\0") else {
                throw FormError.nulCharacter(name)
            }
            if !value.isEmpty { values[name] = value }
        }
        self.values = values
    }

    /// Fields already parsed (the text fields of a `multipart/form-data` body); empty values
    /// count as not sent.
    init(fields: [String: String]) {
        values = fields.filter { !$0.value.isEmpty }
    }

    /// The value of `name`; nil when it was not sent or sent empty.
    subscript(name: String) -> String? { values[name] }

    /// Whether `name` was sent with a value.
    func contains(_ name: String) -> Bool { values[name] != nil }

    /// The names sent with a value that begin with `prefix`, sorted: a console's list of
    /// checkboxes, each box its own name, since a name sent twice is refused.
    func names(prefixed prefix: String) -> [String] {
        values.keys.filter { $0.hasPrefix(prefix) }.sorted()
    }

    /// Form decoding: `+` is a space, `%XX` a byte; the bytes must be UTF-8.
    static func decoded(_ bytes: some Collection<UInt8>) throws -> String {
        var output: [UInt8] = []
        output.reserveCapacity(bytes.count)
        var iterator = bytes.makeIterator()
        while let byte = iterator.next() {
            switch byte {
            case UInt8(ascii: "+"):
                output.append(UInt8(ascii: " "))
            case UInt8(ascii: "%"):
                guard let high = iterator.next().flatMap(hexValue), let low = iterator.next().flatMap(hexValue) else {
                    throw FormError.malformedEncoding
                }
                output.append(high << 4 | low)
            default:
                output.append(byte)
            }
        }
        guard let text = String(validating: output, as: UTF8.self) else { throw FormError.malformedEncoding }
        return text
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}

/// Why a request body is not an acceptable OAuth form.
enum FormError: OAuthFailure, Equatable {
    case notForm
    case tooLarge(Int)
    case duplicate(String)
    case malformedEncoding
    case nulCharacter(String)
    case unreadable
    case unsupportedTransferCoding

    var oauthError: OAuthError {
        switch self {
        case .notForm:
            OAuthError(.invalidRequest, "the request body must be application/x-www-form-urlencoded")
        case .tooLarge(let limit):
            OAuthError(.invalidRequest, "the request body exceeds \(limit) bytes")
        case .duplicate(let name):
            OAuthError(.invalidRequest, "parameter \(name) is given more than once")
        case .malformedEncoding:
            OAuthError(.invalidRequest, "the request body is not valid form encoding of UTF-8 text")
        case .nulCharacter(let name):
            OAuthError(.invalidRequest, "parameter \(name.unicodeScalars.contains("\0") ? name.debugDescription : name) must not contain a NUL character")
        case .unreadable:
            OAuthError(.invalidRequest, "the request body is malformed or was cut off")
        case .unsupportedTransferCoding:
            OAuthError(.invalidRequest, "the request body must not use a transfer coding other than chunked")
        }
    }
}
