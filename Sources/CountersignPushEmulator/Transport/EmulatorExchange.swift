import Foundation

/// One HTTP/2 request, reassembled from its HEADERS and DATA frames.
struct EmulatorRequest: Sendable {
    var method: String
    var path: String
    /// Regular header fields (no pseudo-headers), lowercased as HTTP/2 requires, in the order
    /// received, duplicates kept: APNs refuses repeated headers, so they must stay visible.
    var headers: [(name: String, value: String)]
    var body: Data
    var connection: ConnectionIdentity

    /// The first value of `name` (lowercase).
    func header(_ name: String) -> String? {
        headers.first { $0.name == name }?.value
    }
}

/// What a request carries about the TLS connection it came on.
struct ConnectionIdentity: Sendable {
    /// 1-based, in the order connections completed their handshake.
    var number: Int
    /// The subject common name of the client certificate, when one was presented.
    var clientCertificateSubject: String?
}

/// The answer to one request, written as a HEADERS frame and, when there is a body, one DATA
/// frame that ends the stream.
struct EmulatorResponse: Sendable {
    var status: Int
    var headers: [(name: String, value: String)] = []
    var body: Data = Data()

    /// A JSON body with its content type.
    static func json(status: Int, _ text: String, headers: [(name: String, value: String)] = []) -> EmulatorResponse {
        EmulatorResponse(status: status, headers: headers + [("content-type", "application/json; charset=utf-8")],
                         body: Data(text.utf8))
    }
}

/// Answers requests for one emulator. Runs on the connection's event loop and must not block:
/// every stream of that connection waits for it.
typealias EmulatorRequestHandler = @Sendable (EmulatorRequest) -> EmulatorResponse
