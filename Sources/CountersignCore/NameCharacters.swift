/// The characters a name shown to a person in a list (a device, a passkey, a user's display
/// name, a client, a tenant, an admin key) may not hold: control characters (tabs, line breaks,
/// NUL), line and paragraph separators, and format characters — above all the bidirectional
/// overrides and isolates (U+202A–U+202E, U+2066–U+2069), which reorder what follows them, so
/// that "Alice's phone" + U+202E + "enohp" shows as another name, and the invisible marks that
/// make two names look alike (U+200B, U+2060, U+FEFF). The two joiners are kept: U+200C
/// (ZWNJ) and U+200D (ZWJ) only join or part neighbouring letters and emoji, and names in
/// Persian or Hindi, or an emoji family, need them.
///
/// ```swift
/// NameCharacters.refuses("Ivy\u{202E}enohp")   // true
/// NameCharacters.refuses("می‌خواهم")          // false: the ZWNJ joins nothing it should not
/// ```
public enum NameCharacters {
    public static func isRefused(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.properties.generalCategory {
        case .control, .lineSeparator, .paragraphSeparator: true
        case .format: scalar != "\u{200C}" && scalar != "\u{200D}"
        default: false
        }
    }

    /// Whether `name` holds a character no listed name may hold.
    public static func refuses(_ name: some StringProtocol) -> Bool {
        name.unicodeScalars.contains(where: isRefused)
    }
}
