import CountersignKit
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Sends form posts to the server as a confidential client, authenticated with
/// `client_secret_basic`.
package struct RelyingPartyClient {
    package static let cibaGrantType = "urn:openid:params:grant-type:ciba"

    package let base: String
    let clientID: String
    let clientSecret: String
    let transport: any HTTPTransport

    package init(base: String, clientID: String, clientSecret: String, transport: any HTTPTransport) {
        self.base = base
        self.clientID = clientID
        self.clientSecret = clientSecret
        self.transport = transport
    }

    /// An OAuth error answer: `error` and `error_description`. Shown as `error: <code>: <text>`.
    package struct Refusal: Error, CustomStringConvertible {
        package let status: Int
        package let code: String
        package let text: String?

        package var description: String { "error: \(code)" + (text.map { ": \($0)" } ?? "") }

        /// A 5xx: the server could not answer now (a database outage, a proxy without its
        /// upstream), which says nothing of the request itself.
        package var isServerTrouble: Bool { status >= 500 }
    }

    /// Posts `form` to `path` and returns the JSON object of a 2xx answer; any other answer
    /// throws a `Refusal`, and no answer at all a `ConnectionFailure`.
    package func post(_ path: String, _ form: [String: String]) async throws -> [String: Any] {
        guard let url = URL(string: base + path) else { throw TerminalFailure("cannot make a URL of \(base + path)") }
        var request = URLRequest(url: url)
        request.httpMethod = "POST"
        request.setValue("application/x-www-form-urlencoded", forHTTPHeaderField: "Content-Type")
        request.setValue("application/json", forHTTPHeaderField: "Accept")
        request.setValue(authorization, forHTTPHeaderField: "Authorization")
        request.httpBody = Data(Self.formEncoded(form).utf8)
        let data: Data
        let response: HTTPURLResponse
        do {
            (data, response) = try await transport.send(request)
        } catch {
            throw ConnectionFailure(server: base, error: error)
        }
        let status = response.statusCode
        let object = (try? JSONSerialization.jsonObject(with: data)) as? [String: Any]
        guard (200..<300).contains(status) else {
            throw Refusal(
                status: status, code: object?["error"] as? String ?? "http_\(status)",
                text: object?["error_description"] as? String ?? (object == nil ? String(decoding: data, as: UTF8.self) : nil))
        }
        guard let object else { throw TerminalFailure("the answer to \(path) is not a JSON object") }
        return object
    }

    /// RFC 6749 §2.3.1: the id and the secret are each form-urlencoded before they are joined.
    private var authorization: String {
        let credentials = Self.formEncoded(clientID) + ":" + Self.formEncoded(clientSecret)
        return "Basic " + Data(credentials.utf8).base64EncodedString()
    }

    /// `application/x-www-form-urlencoded`, keys sorted so that requests are reproducible.
    static func formEncoded(_ form: [String: String]) -> String { FormEncoding.encode(form) }

    /// One name or value, form-encoded.
    static func formEncoded(_ text: String) -> String { FormEncoding.encode(text) }
}
