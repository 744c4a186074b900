import CountersignKit

/// The PIN pad's state: the digits typed so far, what the prompt says, and when the PIN can be
/// sent (4 to 12 digits, as the SDK requires). A new PIN is typed twice.
///
/// ```swift
/// var entry = PINEntry(challenge)
/// entry.type("7")
/// if entry.canSubmit, let pin = entry.submit() { resume(.pin(pin)) }
/// ```
public struct PINEntry: Sendable, Equatable {
    public static let lengths = 4...12

    public private(set) var digits = ""
    public private(set) var prompt: String
    public private(set) var note: String?
    private let settingUp: Bool
    private var first: String?

    public init(_ challenge: PINChallenge) {
        self.init(reason: challenge.reason, attemptsRemaining: challenge.attemptsRemaining)
    }

    /// The pad for a PIN asked for `reason`; `attemptsRemaining` after a wrong one.
    public init(reason: PINChallenge.Reason, attemptsRemaining: Int? = nil) {
        settingUp = reason == .setUp
        switch reason {
        case .setUp: prompt = "Choose a PIN of 4 to 12 digits"
        case .fallback: prompt = "Enter your PIN instead"
        case .required, .verifierRequested: prompt = "Enter your PIN"
        }
        note = attemptsRemaining.map { "Wrong PIN. \($0) attempt\($0 == 1 ? "" : "s") left." }
    }

    /// One more digit; anything else, or a thirteenth digit, is ignored.
    public mutating func type(_ character: Character) {
        guard character.isASCII, character.isNumber, digits.count < Self.lengths.upperBound else { return }
        digits.append(character)
    }

    public mutating func deleteBackward() {
        if !digits.isEmpty { digits.removeLast() }
    }

    public var canSubmit: Bool { Self.lengths.contains(digits.count) }

    /// The PIN to send; nil while a new PIN still waits for its repetition, or when the
    /// repetition differs (then the entry starts over, saying so).
    public mutating func submit() -> String? {
        guard canSubmit else { return nil }
        let typed = digits
        digits = ""
        guard settingUp else { return typed }
        guard let first else {
            self.first = typed
            prompt = "Enter the same PIN again"
            note = nil
            return nil
        }
        guard first == typed else {
            self.first = nil
            prompt = "Choose a PIN of 4 to 12 digits"
            note = "The two PINs were different. Start again."
            return nil
        }
        return typed
    }
}
