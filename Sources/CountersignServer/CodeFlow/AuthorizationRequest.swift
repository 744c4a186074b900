import CountersignCore
import Foundation

/// An authorization request of the code flow (OpenID Connect Core §3.1.2.1, RFC 6749 §4.1.1,
/// RFC 7636), once checked. It is read in two stages, because where an error may be sent
/// depends on how far the request got (RFC 6749 §4.1.2.1):
///
/// 1. `AuthorizationTarget`: the client and the redirect URI. Until both are known to be
///    valid, an error is shown to the user on a page and never sent anywhere.
/// 2. the rest, each parameter a small parse step in the order below; from here an error goes
///    back to the client's redirect URI with `state` and `iss`.
///
/// `response_type=code` only, PKCE with `S256` for every client, `response_mode` `query` only;
/// `request` and `registration` are refused with their own errors; `ui_locales`, `display`,
/// `claims_locales` and unknown parameters are ignored (RFC 6749 §3.1).
struct AuthorizationRequest: Sendable, Equatable, Codable {
    /// Longest `state` and `nonce` kept: a client's own values, echoed back, so bounded.
    static let maximumStateLength = 2048
    static let maximumNonceLength = 512
    static let maximumLoginHintLength = 256
    /// The longest `max_age` taken as given: a year.
    static let maximumMaxAge = 366 * 86_400

    enum Prompt: String, Sendable, Codable, CaseIterable {
        case none, login, consent
        case selectAccount = "select_account"
    }

    let clientID: String
    /// As the request gave it; the code is bound to this exact string (RFC 6749 §4.1.3).
    let redirectURI: String
    let scope: [String]
    let state: String?
    let nonce: String?
    let codeChallenge: String
    let prompt: Set<Prompt>
    /// Seconds since the user's last authentication beyond which they must authenticate again.
    let maxAge: Int?
    let loginHint: String?
    let acrValues: [String]?
    /// An ID token this tenant issued to the client, naming who the client expects to be
    /// signed in (OpenID Connect Core §3.1.2.1); checked by the sign-in, not here.
    let idTokenHint: String?

    enum CodingKeys: String, CodingKey {
        case scope, state, nonce, prompt
        case clientID = "client_id"
        case redirectURI = "redirect_uri"
        case codeChallenge = "code_challenge"
        case maxAge = "max_age"
        case loginHint = "login_hint"
        case acrValues = "acr_values"
        case idTokenHint = "id_token_hint"
    }

    init(clientID: String, redirectURI: String, scope: [String], state: String? = nil, nonce: String? = nil,
         codeChallenge: String, prompt: Set<Prompt> = [], maxAge: Int? = nil, loginHint: String? = nil,
         acrValues: [String]? = nil, idTokenHint: String? = nil) {
        self.clientID = clientID
        self.redirectURI = redirectURI
        self.scope = scope
        self.state = state
        self.nonce = nonce
        self.codeChallenge = codeChallenge
        self.prompt = prompt
        self.maxAge = maxAge
        self.loginHint = loginHint
        self.acrValues = acrValues
        self.idTokenHint = idTokenHint
    }

    /// The steps after the target, in order; the first failure is the error sent back.
    init(_ parameters: FormParameters, target: AuthorizationTarget) throws(AuthorizationError) {
        clientID = target.client.id
        redirectURI = target.redirectURI
        state = parameters["state"]
        if let state, state.utf8.count > Self.maximumStateLength {
            throw .invalidRequest("state must be at most \(Self.maximumStateLength) characters")
        }
        if parameters.contains("request") {
            throw .init(.requestNotSupported, "request objects are not supported at the authorization endpoint; push the request (RFC 9126) instead")
        }
        if parameters.contains("registration") {
            throw .init(.registrationNotSupported, "clients are registered by an administrator")
        }
        guard let responseType = parameters["response_type"] else { throw .invalidRequest("response_type is required") }
        guard responseType == "code" else {
            throw .init(.unsupportedResponseType, "response_type must be code")
        }
        if let mode = parameters["response_mode"], mode != "query" {
            throw .invalidRequest("response_mode must be query")
        }
        do {
            scope = try Scope(parameters["scope"], allowedFor: target.client).values
        } catch {
            throw .init(error.oauthError.code, error.oauthError.errorDescription)
        }
        do {
            codeChallenge = try CodeChallenge(
                challenge: parameters["code_challenge"], method: parameters["code_challenge_method"]).value
        } catch {
            throw .invalidRequest((error as? any OAuthFailure)?.oauthError.errorDescription ?? "code_challenge is invalid")
        }
        nonce = parameters["nonce"]
        if let nonce, nonce.utf8.count > Self.maximumNonceLength {
            throw .invalidRequest("nonce must be at most \(Self.maximumNonceLength) characters")
        }
        prompt = try Self.prompt(parameters["prompt"])
        maxAge = try Self.maxAge(parameters["max_age"])
        loginHint = parameters["login_hint"]
        if let loginHint, loginHint.count > Self.maximumLoginHintLength {
            throw .invalidRequest("login_hint must be at most \(Self.maximumLoginHintLength) characters")
        }
        do {
            acrValues = try parameters["acr_values"].map { raw throws(AcrValuesError) in try AcrValues(raw).values }
        } catch {
            throw .init(error.oauthError.code, error.oauthError.errorDescription)
        }
        idTokenHint = parameters["id_token_hint"]
        if let idTokenHint, idTokenHint.utf8.count > Self.maximumIDTokenHintLength {
            throw .invalidRequest("id_token_hint must be at most \(Self.maximumIDTokenHintLength) characters")
        }
    }

    /// Far more than an ID token of this server takes.
    static let maximumIDTokenHintLength = 8192

    /// OpenID Connect Core §3.1.2.1: space-separated values, `none` alone or not at all.
    static func prompt(_ raw: String?) throws(AuthorizationError) -> Set<Prompt> {
        guard let raw else { return [] }
        var values: Set<Prompt> = []
        for word in raw.split(separator: " ") {
            guard let value = Prompt(rawValue: String(word)) else {
                throw .invalidRequest("prompt must be none, login, consent or select_account, not \(word)")
            }
            values.insert(value)
        }
        if values.contains(.none) && values.count > 1 {
            throw .invalidRequest("prompt=none must not be combined with other values")
        }
        return values
    }

    /// A non-negative number of seconds.
    static func maxAge(_ raw: String?) throws(AuthorizationError) -> Int? {
        guard let raw else { return nil }
        guard raw.utf8.count <= 10, raw.utf8.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }),
              let value = Int(raw) else {
            throw .invalidRequest("max_age must be a non-negative number of seconds")
        }
        return min(value, maximumMaxAge)
    }

    /// Whether a session whose user authenticated at `authTime` answers this request at `now`:
    /// the request does not ask for a fresh sign-in, and `max_age` has not passed.
    ///
    /// `prompt=consent` and `prompt=select_account` ask the same as `login`: Countersign keeps
    /// no consent records and a browser holds one session, so the person is asked again on the
    /// hosted page, where they name themselves (choosing the account) and approve on their
    /// phone a request that names the client and the scopes it asks for (the consent).
    func isAnswered(bySessionAuthenticatedAt authTime: Date, now: Date) -> Bool {
        guard prompt.isDisjoint(with: [.login, .consent, .selectAccount]) else { return false }
        guard let maxAge else { return true }
        return now.timeIntervalSince(authTime) <= TimeInterval(maxAge)
    }
}

extension AuthorizationRequest {
    /// Whether the request must be approved anew whatever session the browser has (RFC 8252
    /// §8.6: no automatic approval where the client's identity cannot be assured): it asks to
    /// enroll a device, which gives whoever holds it sign-in for good, or it comes from a
    /// public client redirecting to a loopback address or a private-use scheme, which any
    /// local app can claim. Countersign's own console, whose redirect is on the server's own
    /// origin (`base`), is assured by it.
    func needsApproval(by client: Client, base: String) -> Bool {
        if scope.contains(EnrollmentService.enrollScope) { return true }
        guard client.isPublic, !redirectURI.hasPrefix(base + "/") else { return false }
        return URLComponents(string: redirectURI)?.scheme?.lowercased() != "https"
    }
}

/// Who asks and where the answer goes: the first two checks of an authorization request,
/// whose failures are shown to the user, not redirected.
struct AuthorizationTarget: Sendable {
    let client: Client
    let redirectURI: String

    /// `redirect_uri` is one of the client's registered URIs (OpenID Connect requires the
    /// parameter; the comparison is exact, RFC 9700 §4.1.1).
    init(client: Client, redirectURI: String?) throws(AuthorizationPageError) {
        guard !client.redirectURIs.isEmpty else { throw .clientWithoutRedirectURIs }
        guard let redirectURI else { throw .missingRedirectURI }
        // Exactly a registered URI, or a loopback one at another port (RFC 8252 §7.3). The
        // console's own client is registered by the server at its public origin, which may be
        // `http://localhost:<port>` (a loopback listener's), a host clients may not register.
        guard client.redirectURIs.contains(redirectURI)
                || client.redirectURIs.contains(where: { (try? RedirectURI(registering: $0))?.matches(redirectURI) == true }) else {
            throw .unregisteredRedirectURI
        }
        self.client = client
        self.redirectURI = redirectURI
    }
}

/// An error of an authorization request that may go back to the client: its OAuth code and
/// description, sent to the redirect URI with `state` and `iss` (RFC 6749 §4.1.2.1, RFC 9207).
struct AuthorizationError: Error, Sendable, Equatable {
    let code: OAuthError.Code
    let description: String

    init(_ code: OAuthError.Code, _ description: String) {
        self.code = code
        self.description = OAuthError(code, description).errorDescription
    }

    static func invalidRequest(_ description: String) -> AuthorizationError { .init(.invalidRequest, description) }
}

/// An error of an authorization request that cannot go back to the client, because the
/// client or its redirect URI is not known to be valid: shown to the user on a page
/// (RFC 6749 §4.1.2.1: "MUST NOT automatically redirect").
enum AuthorizationPageError: WireFailure, Sendable, Equatable {
    case malformed(String)
    /// A form of the sign-in's pages that cannot be read.
    case malformedForm(String)
    case missingClientID
    case unknownClient
    case clientWithoutRedirectURIs
    case missingRedirectURI
    case unregisteredRedirectURI
    case invalidRequestURI

    var wireError: WireError {
        WireError(.badRequest, code: code.rawValue, description: message, heading: SignInError.heading)
    }

    /// What the page says; the OAuth code is shown too, for whoever debugs the client.
    var code: OAuthError.Code {
        switch self {
        case .malformed, .malformedForm, .missingClientID, .missingRedirectURI, .unregisteredRedirectURI: .invalidRequest
        case .unknownClient, .clientWithoutRedirectURIs: .unauthorizedClient
        case .invalidRequestURI: .invalidRequestURI
        }
    }

    var message: String {
        switch self {
        case .malformed(let why): "The sign-in link is malformed: \(why)."
        case .malformedForm(let why): "The form could not be read: \(why)."
        case .missingClientID: "The sign-in link does not name the application (client_id is missing)."
        case .unknownClient: "The application that sent you here is not registered with this sign-in service."
        case .clientWithoutRedirectURIs: "The application that sent you here is not set up for browser sign-in (it has no redirect URI)."
        case .missingRedirectURI: "The sign-in link does not say where to return (redirect_uri is missing)."
        case .unregisteredRedirectURI: "The sign-in link asks to return to an address the application did not register."
        case .invalidRequestURI: "The sign-in link has expired or was already used. Go back to the application and start again."
        }
    }
}
