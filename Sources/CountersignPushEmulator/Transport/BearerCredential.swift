/// The credential of an `authorization: Bearer <credential>` header, for both emulators.
enum BearerCredential {
    /// The credential, or nil when the scheme is not Bearer. Schemes are case-insensitive
    /// (RFC 9110 §11.1): Apple's examples write "bearer", Google's "Bearer".
    static func credential(in authorization: String) -> String? {
        let scheme = "bearer ".utf8
        let utf8 = authorization.utf8
        // Compared byte by byte with ASCII letters folded: this runs on every request, and
        // Character-based prefix and case folding cost more than the rest of the check.
        guard utf8.count > scheme.count,
              zip(utf8, scheme).allSatisfy({ $0 | 0x20 == $1 | 0x20 }) else { return nil }
        return String(Substring(utf8.dropFirst(scheme.count)))
    }
}
