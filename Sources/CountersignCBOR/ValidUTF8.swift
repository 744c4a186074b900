extension String {
    /// The text `bytes` spell, or nil when they are not well-formed UTF-8 (an overlong form, a
    /// surrogate, a truncated or stray byte).
    ///
    /// `String(validating:as:)` does this from Swift 6's standard library, which iOS 17 does not
    /// have: decoding replaces each ill-formed sequence with U+FFFD, so the bytes were well formed
    /// exactly when the decoded text's UTF-8 is the same bytes.
    init?(validUTF8 bytes: some Collection<UInt8>) {
        let text = String(decoding: bytes, as: UTF8.self)
        guard text.utf8.elementsEqual(bytes) else { return nil }
        self = text
    }
}
