import Foundation
import HTTPTypes
import Hummingbird
import Mustache

/// Renders the hosted pages (`PageTemplates`) from typed view models and answers them with
/// the headers every page carries:
///
/// - `Content-Security-Policy`: scripts, styles, fetches and images from this origin only, no
///   inline script or style, no plugins, no `<base>`, and no framing (`frame-ancestors 'none'`,
///   with `X-Frame-Options: DENY` for older browsers);
/// - `Cache-Control: no-store`: pages hold per-attempt handles and personal data;
/// - `Referrer-Policy: no-referrer`, `X-Content-Type-Options: nosniff`.
struct Pages: Sendable {
    static let contentSecurityPolicy =
        "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; "
        + "base-uri 'none'; frame-ancestors 'none'"

    /// The templates are the same for every server in the process; parsed once.
    static let shared = Pages()

    private let library: MustacheLibrary

    private init() {
        var library = MustacheLibrary()
        for (name, text) in PageTemplates.all {
            do { try library.register(text, named: name) } catch {
                // The templates are part of the code; the page tests parse every one.
                preconditionFailure("page template \(name) does not parse: \(error)")
            }
        }
        self.library = library
    }

    /// The page `name` for `model`, with status `status`.
    func response(_ name: String, _ model: some PageModel, status: HTTPResponse.Status = .ok,
                  headers extra: HTTPFields = [:]) -> Response {
        let html = library.render(model, withTemplate: name) ?? ""
        var headers = Self.headers
        headers.append(contentsOf: extra)
        return Response(status: status, headers: headers, body: .init(byteBuffer: ByteBuffer(string: html)))
    }

    static var headers: HTTPFields {
        [
            .contentType: "text/html; charset=utf-8",
            .cacheControl: "no-store",
            .contentSecurityPolicy: contentSecurityPolicy,
            .xFrameOptions: "DENY",
            .referrerPolicy: "no-referrer",
            .xContentTypeOptions: "nosniff",
        ]
    }
}

extension HTTPField.Name {
    static let contentSecurityPolicy = Self("Content-Security-Policy")!
    static let xFrameOptions = Self("X-Frame-Options")!
    static let referrerPolicy = Self("Referrer-Policy")!
    static let xContentTypeOptions = Self("X-Content-Type-Options")!
}

/// What every page's layout reads. Mustache reads stored properties only, so each model
/// stores these itself.
protocol PageModel: Sendable {
    var title: String { get }
    var tenantName: String { get }
}

/// `sign-in`: the username form.
struct SignInPage: PageModel {
    let title = "Sign in"
    let tenantName: String
    /// The tenant's base path (`""` or `/t/<slug>`), where the forms post.
    let base: String
    let clientName: String
    let attempt: String
    let username: String
    let usernameError: String?
    /// Whether the tenant offers passkeys: the page then loads the script that runs WebAuthn.
    let passkeys: Bool
    /// Whether a request to the phone can answer this sign-in (not when it asks for a passkey).
    let phone: Bool
    var passkeyError: String?
    /// Whether the form asks for the directory password beside the username.
    let password: Bool
    let passwordError: String?
    /// The password field takes the focus: the username is filled in.
    let focusPassword: Bool
    /// The script that runs WebAuthn, where the tenant offers passkeys. Stored, not computed:
    /// Mustache reads stored properties only.
    let script: String?

    init(tenantName: String, base: String, clientName: String, attempt: String, username: String, usernameError: String?,
         passkeys: Bool, phone: Bool, passkeyError: String? = nil, password: Bool = false, passwordError: String? = nil) {
        self.tenantName = tenantName
        self.base = base
        self.clientName = clientName
        self.attempt = attempt
        self.username = username
        self.usernameError = usernameError
        self.passkeys = passkeys
        self.phone = phone
        self.passkeyError = passkeyError
        self.password = password
        self.passwordError = passwordError
        focusPassword = password && !username.isEmpty
        script = passkeys ? "passkey.js" : nil
    }
}

/// `waiting`: approve on the phone, with the number to match where the policy asks for it.
struct WaitingPage: PageModel {
    let title = "Approve on your phone"
    let tenantName: String
    let script: String? = "sign-in.js"
    let base: String
    let clientName: String
    let attempt: String
    let username: String
    let matchNumber: String?
    let expiresAt: String
    /// Where the request came from, as the phone shows it.
    let origin: String
    /// For how many days the browser may be remembered once approved; nil: it may not.
    var rememberDays: Int? = nil
    /// Where the browser's script keeps the key it makes (`RememberedBrowser`): this, `:`, and
    /// the public key's `x`.
    var keyName: String = ""
    /// A note above the request: why it was sent though the browser is remembered.
    var notice: String? = nil
}

/// `remembered`: a remembered browser proves it holds its key, then the sign-in completes
/// without a push; without the key (or JavaScript), the phone is asked after all.
struct RememberedPage: PageModel {
    let title = "Signing you in"
    let tenantName: String
    let script: String? = "sign-in.js"
    let base: String
    let clientName: String
    let attempt: String
    let username: String
    let challenge: String
    let keyName: String
}

/// `outcome`: how a sign-in ended when it did not end in a code.
struct OutcomePage: PageModel {
    enum Kind: String, Sendable {
        case denied, expired, noDevice = "no-device", rateLimited = "rate-limited", unavailable, refused
        case passkeyRequired = "passkey-required"
    }

    let title: String
    let tenantName: String
    let script: String? = nil
    let base: String
    let kind: String
    let heading: String
    let message: String
    let clientName: String
    /// Offer to send a new request for the same sign-in.
    let retry: Bool
    /// Offer the username form again, for the same sign-in.
    var anotherUsername = false
    /// Offer the sign-in page again, where the user chooses a passkey (a risk rule asks for one).
    var startOverForPasskey = false
    let attempt: String
    let username: String
    /// The client's redirect URI with the error, for "Return to the application".
    let returnURL: String?
}

/// `error`: every failure of the sign-in and account pages, in the tenant's name
/// (`ErrorSurface.page`).
struct ErrorPage: PageModel {
    /// A link back, where the page offers one.
    struct Back: Sendable {
        let href: String
        let label: String
    }

    let title: String
    let tenantName: String
    let script: String? = nil
    let heading: String
    let message: String
    let code: String
    let back: Back?

    init(tenantName: String, heading: String, message: String, code: String, back: Back?) {
        (self.title, self.tenantName, self.heading, self.message, self.code, self.back) =
            (heading, tenantName, heading, message, code, back)
    }
}

/// `signed-out`.
struct SignedOutPage: PageModel {
    let title = "Signed out"
    let tenantName: String
    /// The tenant's base path, where the account page signs in again.
    let base: String
    let script: String? = nil
    let message: String
}

/// `sign-out`: the question before a session ends, for a sign-out the person did not post.
struct SignOutPage: PageModel {
    let title = "Sign out"
    let tenantName: String
    let base: String
    let script: String? = nil
    let csrf: String
    let username: String?
    /// The logout request's parameters, posted on with the answer.
    let fields: [Field]

    struct Field: Sendable {
        let name: String
        let value: String
    }
}
