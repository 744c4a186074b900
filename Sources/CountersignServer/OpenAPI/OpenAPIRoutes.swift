import Crypto
import Foundation
import Hummingbird

/// `GET /openapi.json`: the OpenAPI 3.1 document of every route, as the build assembled it from
/// this folder's `document.json` and the feature pieces under `Features/`. The tests hold the
/// router and every answer they receive to it, so a client generated from it speaks to this server.
struct OpenAPIRoutes: Sendable {
    private let document: ByteBuffer
    /// A strong validator of the document, so a client that keeps it revalidates for free.
    private let entityTag: String

    init(text: String = openAPIDocumentText) {
        document = ByteBuffer(string: text)
        entityTag = "\"" + SHA256.hash(data: Data(text.utf8)).prefix(12).map { String(format: "%02x", $0) }.joined() + "\""
    }

    func register(on router: Router<CountersignRequestContext>) {
        router.get("/openapi.json") { request, _ in
            var headers: HTTPFields = [.cacheControl: "no-cache", .eTag: entityTag]
            if let wanted = request.headers[.ifNoneMatch], wanted.split(separator: ",").contains(where: {
                let tag = $0.trimmingCharacters(in: .whitespaces)
                return tag == entityTag || tag == "W/" + entityTag || tag == "*"
            }) {
                return Response(status: .notModified, headers: headers)
            }
            headers[.contentType] = "application/json"
            return Response(status: .ok, headers: headers, body: .init(byteBuffer: document))
        }
    }
}
