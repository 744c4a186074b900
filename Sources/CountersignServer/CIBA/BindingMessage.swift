/// `binding_message` (CIBA §7.1): a short text shown on both the relying party's screen and
/// the device, so the user can tell that the request on the phone is theirs.
///
/// Countersign accepts at most 64 characters of letters, digits, spaces and `+-_.,:#`
/// (decision 5 of the standards checklist). Letters and digits are those of any script —
/// "Überweisung 100,00 EUR", "支付 100 元" and "भुगतान 500" all pass — because users who do not
/// write English deserve a message in their language; the combining marks many scripts need
/// are accepted after a letter. "Characters" are Unicode scalar values, which bounds how
/// much a message can stack on one glyph. Everything else is refused with
/// `invalid_binding_message`: control and format characters (line breaks, bidirectional
/// overrides), symbols and emoji, quotes and markup, and non-ASCII spaces — anything that
/// could make the two screens look alike while saying different things.
struct BindingMessage: Sendable, Equatable {
    static let maximumLength = 64
    static let punctuation: Set<Unicode.Scalar> = [" ", "+", "-", "_", ".", ",", ":", "#"]

    let text: String

    private static let refused = BackchannelAuthenticationError.invalidBindingMessage(
        "binding_message may hold letters, digits, spaces and + - _ . , : # only")

    init(_ raw: String) throws {
        let scalars = raw.unicodeScalars
        guard scalars.count <= Self.maximumLength else {
            throw BackchannelAuthenticationError.invalidBindingMessage("binding_message is longer than \(Self.maximumLength) characters")
        }
        guard scalars.contains(where: { $0 != " " }) else {
            throw BackchannelAuthenticationError.invalidBindingMessage("binding_message is blank")
        }
        var afterLetter = false
        for scalar in scalars {
            switch scalar.properties.generalCategory {
            case .uppercaseLetter, .lowercaseLetter, .titlecaseLetter, .modifierLetter, .otherLetter:
                afterLetter = true
            case .nonspacingMark, .spacingMark:
                guard afterLetter else { throw Self.refused }
            case .decimalNumber:
                afterLetter = false
            default:
                guard Self.punctuation.contains(scalar) else { throw Self.refused }
                afterLetter = false
            }
        }
        text = raw
    }
}
