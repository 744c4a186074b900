/// The HTML of the hosted pages, as Mustache templates (rendered by `Pages`): the `*.mustache`
/// files under `Resources/`, named by their file name without the extension (`sign-in`,
/// `account`, `console-user`). The build embeds them (the EmbedFiles plugin), so that the one
/// binary is the whole server.
///
/// Every `{{value}}` is HTML-escaped by the engine; no template uses the unescaped forms. Each
/// page fills the `content` block of a layout (`layout` for the sign-in and account pages,
/// `console-layout` for the console's), which links the stylesheet and, where a page must wait,
/// its one script: the Content-Security-Policy allows no inline script or style. Every form that
/// changes something for a signed-in person posts the session's CSRF token.
enum PageTemplates {
    static let all: [String: String] = {
        var templates: [String: String] = [:]
        for (path, text) in embeddedResources where path.hasSuffix(extensionSuffix) {
            let name = String(path.split(separator: "/").last!.dropLast(extensionSuffix.count))
            // A second file of the same name in another folder would hide the first.
            precondition(templates.updateValue(text, forKey: name) == nil, "two templates are named \(name)")
        }
        return templates
    }()

    private static let extensionSuffix = ".mustache"
}

/// The files the pages link, served at `/assets/<name>` with a day's caching, the same for every
/// tenant. Written by hand under `Resources/`, embedded by the build; no build step makes them.
///
/// - `countersign.css`: the sign-in's card, and the account pages' additions (wider on a large
///   screen, the phone's width on a small one);
/// - `console.css`: the console, wide where the screen is and one column on a phone;
/// - `sign-in.js`: waits for the answer on the phone (the server holds each question up to 25
///   seconds), then submits the page's form, which shows the outcome; without script the user
///   presses the button;
/// - `invitation.js`: waits for the invitee's phone to enroll, then posts the sign-in form; an
///   invitation that expires or is withdrawn meanwhile ends the page as a reload would;
/// - `account-enroll.js`: waits for the new phone, then goes back to the account page; an
///   expired ticket or a refused question is said on the page;
/// - `passkey.js`: the passkey buttons of the sign-in and account pages (and passkeys in the
///   username field's autofill, where the browser can): asks the server for options, runs
///   `navigator.credentials.get()` or `create()`, and posts the credential's JSON form back,
///   with Level 3's JSON helpers where present;
/// - `console-directory.js`: the console's directory form fills in a kind's usual filters and
///   attributes when the kind changes.
enum PageAssets {
    static let invitationScript = "invitation.js"
    static let enrollScript = "account-enroll.js"

    static let files: [String: (type: String, body: String)] = [
        "countersign.css": (css, resource("SignIn/countersign.css") + resource("Account/account.css")),
        "console.css": (css, resource("Console/console.css")),
        "sign-in.js": (script, resource("SignIn/sign-in.js")),
        invitationScript: (script, resource("SignIn/invitation.js")),
        enrollScript: (script, resource("Account/account-enroll.js")),
        "passkey.js": (script, resource("Passkeys/passkey.js")),
        "console-directory.js": (script, resource("Console/console-directory.js")),
    ]

    private static let css = "text/css; charset=utf-8"
    private static let script = "text/javascript; charset=utf-8"

    private static func resource(_ path: String) -> String {
        guard let text = embeddedResources[path] else { preconditionFailure("Resources/\(path) is not embedded") }
        return text
    }
}
