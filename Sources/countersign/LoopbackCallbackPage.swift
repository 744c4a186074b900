import Crypto
import Foundation

/// The page the browser shows when `device enroll --sign-in` gets its answer on loopback. The
/// command serves nothing else, so the page carries its own style, inline, in the look of the
/// server's hosted pages; its Content-Security-Policy allows that one style by its hash and
/// nothing else (no script, image, font, form or framing). It says what the terminal does next:
/// finish enrolling after a sign-in, or say why there was none.
enum LoopbackCallbackPage {
    /// The hosted pages' card, reduced to what this page uses.
    static let style = """
        :root { color-scheme: light dark; --muted: #667085; --error: #c62828; }
        body { margin: 0; min-height: 100vh; display: flex; align-items: center; justify-content: center;
          font: 16px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; background: #f2f4f7; color: #101828; }
        main { width: 100%; max-width: 26rem; margin: 1rem; padding: 2rem; background: #fff; border-radius: 12px;
          box-shadow: 0 1px 3px rgba(16, 24, 40, .1), 0 1px 2px rgba(16, 24, 40, .06); }
        .brand { margin: 0 0 1rem; font-size: .875rem; color: var(--muted); text-transform: uppercase; letter-spacing: .05em; }
        h1 { margin: 0 0 .5rem; font-size: 1.5rem; } .failed h1 { color: var(--error); }
        p { margin: 0 0 1rem; } .hint { font-size: .875rem; color: var(--muted); }
        @media (prefers-color-scheme: dark) { body { background: #0c111d; color: #f5f5f6; } main { background: #161b26; } }
        """

    static let contentSecurityPolicy: String = {
        let hash = Data(SHA256.hash(data: Data(style.utf8))).base64EncodedString()
        return "default-src 'none'; style-src 'sha256-\(hash)'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
    }()

    /// The page for the callback `uri` (path and query) the browser brought.
    static func html(forCallback uri: String) -> String {
        let query = URLComponents(string: "http://127.0.0.1" + uri)?.queryItems ?? []
        func value(_ name: String) -> String? { query.first { $0.name == name }?.value }
        if let error = value("error") {
            let why = value("error_description") ?? error
            return page(failed: true, heading: "Not signed in",
                        lines: ["The sign-in ended without signing you in: \(why).",
                                "The terminal says what happened; you can close this window."])
        }
        return page(failed: false, heading: "Signed in",
                    lines: ["Return to the terminal: it finishes enrolling this device.", "You can close this window."])
    }

    static let notFound = page(failed: true, heading: "Nothing here", lines: ["This address only takes the sign-in's answer."])

    private static func page(failed: Bool, heading: String, lines: [String]) -> String {
        let paragraphs = lines.enumerated().map { index, line in
            "<p\(index == lines.count - 1 ? " class=\"hint\"" : "")>\(escaped(line))</p>"
        }.joined(separator: "\n")
        return """
            <!doctype html>
            <html lang="en">
            <head>
            <meta charset="utf-8">
            <meta name="viewport" content="width=device-width, initial-scale=1">
            <meta name="referrer" content="no-referrer">
            <title>\(escaped(heading)) · Countersign</title>
            <style>\(style)</style>
            </head>
            <body>
            <main\(failed ? " class=\"failed\"" : "")>
            <p class="brand">Countersign</p>
            <h1>\(escaped(heading))</h1>
            \(paragraphs)
            </main>
            </body>
            </html>

            """
    }

    /// Text as HTML: what the browser brought (an error description) is never markup.
    static func escaped(_ text: String) -> String {
        text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
            .replacingOccurrences(of: ">", with: "&gt;").replacingOccurrences(of: "\"", with: "&quot;")
            .replacingOccurrences(of: "'", with: "&#39;")
    }
}
