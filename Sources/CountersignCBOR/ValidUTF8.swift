#if canImport(Darwin)
import Darwin
#elseif canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(ucrt)
import ucrt
#endif

extension String {
    /// The text `bytes` spell, or nil when they are not well-formed UTF-8 (an overlong form, a
    /// surrogate, a truncated or stray byte).
    ///
    /// `String(validating:as:)` does this from Swift 6's standard library, which iOS 17 does not
    /// have: decoding replaces each ill-formed sequence with U+FFFD, so the bytes were well formed
    /// exactly when the decoded text's UTF-8 is the same bytes. Shared with CountersignCore's JSON
    /// parser and CountersignWebAuthn's client data (package access).
    ///
    /// The comparison is one `memcmp` where both sides are contiguous; well-formed text is
    /// checked faster than by `String(validating:as:)` (BENCHMARKS.md, "UTF-8 validation").
    package init?(validUTF8 bytes: some Collection<UInt8>) {
        var text = String(decoding: bytes, as: UTF8.self)
        // Each ill-formed sequence became U+FFFD, 3 bytes for 1 to 3: usually the lengths differ.
        guard text.utf8.count == bytes.count else { return nil }
        let same = text.withUTF8 { decoded in
            bytes.withContiguousStorageIfAvailable { original in
                original.isEmpty || memcmp(decoded.baseAddress!, original.baseAddress!, original.count) == 0
            }
        } ?? text.utf8.elementsEqual(bytes)
        guard same else { return nil }
        self = text
    }
}
