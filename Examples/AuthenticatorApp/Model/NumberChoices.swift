import CountersignKit

/// Number matching as the screen offers it: the numbers to tap, written with as many digits as
/// the relying party shows (07, not 7), or a field to type them in.
public struct NumberChoices: Sendable, Equatable {
    /// The buttons' titles and the numbers they answer; empty when the user types the number.
    public let buttons: [(title: String, number: Int64)]
    public let digits: Int
    public let prompt: String

    public init(_ challenge: NumberMatchChallenge) {
        digits = challenge.digits
        buttons = (challenge.choices ?? []).map { (Self.format($0, digits: challenge.digits), $0) }
        prompt = buttons.isEmpty
            ? "Type the number \(challenge.details.clientName) shows"
            : "Tap the number \(challenge.details.clientName) shows"
    }

    /// The typed number, when it has exactly `digits` digits.
    public func answer(typed text: String) -> NumberMatchAnswer? {
        guard text.count == digits, text.allSatisfy({ $0.isASCII && $0.isNumber }), let number = Int64(text) else { return nil }
        return .number(number)
    }

    /// `number` with at least `digits` digits: 7 as "07" for two.
    public static func format(_ number: Int64, digits: Int) -> String {
        let text = String(number)
        return String(repeating: "0", count: max(0, digits - text.count)) + text
    }

    public static func == (lhs: NumberChoices, rhs: NumberChoices) -> Bool {
        lhs.digits == rhs.digits && lhs.prompt == rhs.prompt
            && lhs.buttons.map(\.title) == rhs.buttons.map(\.title) && lhs.buttons.map(\.number) == rhs.buttons.map(\.number)
    }
}
