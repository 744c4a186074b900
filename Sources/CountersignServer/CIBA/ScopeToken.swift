/// The characters of an OAuth scope token (RFC 6749 §3.3): `%x21 / %x23-5B / %x5D-7E`, which
/// `acr_values` entries share.
enum ScopeToken {
    static func isValid(_ token: Substring) -> Bool {
        !token.isEmpty && token.unicodeScalars.allSatisfy {
            $0.value == 0x21 || (0x23...0x5B).contains($0.value) || (0x5D...0x7E).contains($0.value)
        }
    }

    /// Whether `token` may be registered as one of a client's scopes (or a trusted issuer's
    /// required scope): a valid token of at most 128 characters.
    static func isRegistrable(_ token: String) -> Bool {
        token.count <= 128 && isValid(token[...])
    }

    /// The space-separated tokens of `text`, in order, each once; nil if one is malformed.
    static func list(_ text: String) -> [String]? {
        var tokens: [String] = []
        for token in text.split(separator: " ") {
            guard isValid(token) else { return nil }
            if !tokens.contains(String(token)) { tokens.append(String(token)) }
        }
        return tokens.isEmpty ? nil : tokens
    }
}
