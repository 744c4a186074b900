/// `client_notification_token` (CIBA §7.1): the bearer token the server presents when it
/// calls a ping or push client's notification endpoint about this request. Required for
/// those clients, since a callback without it could not be told from a forgery. Its syntax is
/// RFC 6750 §2.1's `b64token` (letters, digits, `-._~+/`, then any `=`), at most 1,024
/// characters; anything else is `invalid_request`. A poll client is called back never, so its
/// token, if it sends one, is checked and then not kept.
struct ClientNotificationToken: Sendable, Equatable {
    static let maximumLength = 1024

    let value: String

    /// The token a request of `client` carries; nil for a poll client.
    static func of(_ raw: String?, client: Client) throws(BackchannelAuthenticationError) -> ClientNotificationToken? {
        let token = try raw.map(ClientNotificationToken.init)
        guard client.deliveryMode != .poll else { return nil }
        guard let token else { throw .missingClientNotificationToken(client.deliveryMode) }
        return token
    }

    init(_ raw: String) throws(BackchannelAuthenticationError) {
        let scalars = Array(raw.unicodeScalars)
        let body = scalars.prefix { $0 != "=" }
        guard raw.utf8.count <= Self.maximumLength, !body.isEmpty,
              body.allSatisfy(Self.isTokenCharacter),
              scalars.dropFirst(body.count).allSatisfy({ $0 == "=" }) else {
            throw .malformedClientNotificationToken
        }
        value = raw
    }

    private static func isTokenCharacter(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar {
        case "A"..."Z", "a"..."z", "0"..."9", "-", ".", "_", "~", "+", "/": true
        default: false
        }
    }
}
