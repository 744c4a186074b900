import CountersignCore

/// Named text parameters, wherever they came from: a form body, or the claims of a signed
/// authentication request. The parse steps of `bc-authorize` read either through this.
protocol RequestParameters: Sendable {
    /// The value of `name`; nil when it was not sent or sent empty.
    subscript(name: String) -> String? { get }
}

extension RequestParameters {
    /// Whether `name` was sent with a value.
    func contains(_ name: String) -> Bool { self[name] != nil }
}

extension FormParameters: RequestParameters {}

/// The authentication request parameters of CIBA §7.1, as the checks of §7.2 read them. Sent
/// in the form, they are form values. Sent in a signed request (§7.1.1), they are the
/// claims of the JWT: each a JSON string, except `requested_expiry`, which may be a number
/// or a string (§7.1.1 allows both) and is read as its decimal digits.
struct AuthenticationParameters: RequestParameters {
    /// The parameters of the authentication request itself; client authentication stays apart.
    static let names: Set<String> = [
        "scope", "client_notification_token", "acr_values", "login_hint_token", "id_token_hint", "login_hint",
        "binding_message", "user_code", "requested_expiry", "authorization_details",
    ]

    private let values: [String: String]
    /// `authorization_details` as it came: JSON text in a form, a JSON value in a signed
    /// request, so that it is parsed once either way.
    let authorizationDetails: AuthorizationDetailsParameter?

    init(form: FormParameters) {
        var values: [String: String] = [:]
        for name in Self.names where name != AuthorizationDetails.claim { values[name] = form[name] }
        self.values = values
        self.authorizationDetails = form[AuthorizationDetails.claim].map(AuthorizationDetailsParameter.text)
    }

    init(claims: JWTClaims) throws(RequestObjectError) {
        var values: [String: String] = [:]
        var details: AuthorizationDetailsParameter?
        for name in Self.names {
            switch claims[name] {
            case nil:
                continue
            case let value? where name == AuthorizationDetails.claim:
                details = .json(value)
            case .string(let text)?:
                if !text.isEmpty { values[name] = text }
            case .integer(let number)? where name == "requested_expiry":
                values[name] = String(number)
            default:
                throw .claimType(name, name == "requested_expiry" ? "a number or a string" : "a string")
            }
        }
        self.values = values
        self.authorizationDetails = details
    }

    subscript(name: String) -> String? { values[name] }
}
