import Foundation
import HTTPTypes
import Hummingbird

/// What a step of the hosted pages decided, before it is an HTTP answer. The flows of the
/// sign-in, account and console pages return it and never build a response; routes return it
/// as it is (it is a `ResponseGenerator`), and only here does it become status, headers and
/// body: a page rendered by `Pages` with the headers every page carries, a redirect, a
/// script's JSON, or a file to save.
struct PageAnswer: Sendable {
    enum Kind: Sendable {
        /// The page `template` for `model`.
        case page(template: String, model: any PageModel, status: HTTPResponse.Status)
        /// 303 See Other to `location`.
        case redirect(location: String)
        /// A script's answer: the JSON document.
        case json(Data)
        /// A file the browser saves as `filename`.
        case download(text: String, type: String, filename: String)
    }

    let kind: Kind
    /// Cookies the answer sets (a session's, the browser's mark) or forgets.
    var cookies: [Cookie] = []

    static func page(_ template: String, _ model: some PageModel, status: HTTPResponse.Status = .ok,
                     cookies: [Cookie] = []) -> PageAnswer {
        PageAnswer(kind: .page(template: template, model: model, status: status), cookies: cookies)
    }

    static func redirect(to location: String, cookies: [Cookie] = []) -> PageAnswer {
        PageAnswer(kind: .redirect(location: location), cookies: cookies)
    }

    static func json(_ value: some Encodable, cookies: [Cookie] = []) throws -> PageAnswer {
        PageAnswer(kind: .json(try JSON.encode(value)), cookies: cookies)
    }

    static func download(_ text: String, type: String, filename: String) -> PageAnswer {
        PageAnswer(kind: .download(text: text, type: type, filename: filename))
    }

    /// The `Set-Cookie` fields of `cookies`: for an answer, and for a page failure that sets or
    /// forgets a cookie (`WireError.headers`).
    static func setCookie(_ cookies: [Cookie]) -> HTTPFields {
        var fields = HTTPFields()
        for cookie in cookies { fields.append(HTTPField(name: .setCookie, value: cookie.description)) }
        return fields
    }

    /// The same answer, setting `more` cookies as well.
    func setting(_ more: [Cookie]) -> PageAnswer {
        PageAnswer(kind: kind, cookies: cookies + more)
    }
}

extension PageAnswer: ResponseGenerator {
    func response(from request: Request, context: some RequestContext) throws -> Response {
        response(pages: .shared)
    }

    func response(pages: Pages) -> Response {
        var response: Response
        switch kind {
        case .page(let template, let model, let status):
            response = pages.response(template, model, status: status)
        case .redirect(let location):
            var headers = Pages.headers
            headers[.location] = location
            response = Response(status: .seeOther, headers: headers)
        case .json(let data):
            response = Response(
                status: .ok, headers: [.contentType: "application/json", .cacheControl: "no-store"],
                body: .init(byteBuffer: ByteBuffer(data: data)))
        case .download(let text, let type, let filename):
            var headers = Pages.headers
            headers[.contentType] = type
            headers[.contentDisposition] = "attachment; filename=\"\(filename)\""
            response = Response(status: .ok, headers: headers, body: .init(byteBuffer: ByteBuffer(string: text)))
        }
        response.headers.append(contentsOf: Self.setCookie(cookies))
        return response
    }
}
