import Foundation

/// Number matching: a two-digit number the relying party shows and the user carries to the
/// device. Two digits keep it quick to compare; the point is that the person at the device
/// sees the relying party's screen, not secrecy — a guess among the three choices offered
/// is right one time in three, and a wrong pick denies the request.
enum NumberMatching {
    static let range: ClosedRange<Int64> = 10...99

    static func number() -> Int64 {
        var generator = SystemRandomNumberGenerator()
        return Int64.random(in: range, using: &generator)
    }

    /// Three distinct numbers, `number` among them, in random order.
    static func choices(including number: Int64) -> [Int64] {
        var generator = SystemRandomNumberGenerator()
        var choices: Set<Int64> = [number]
        while choices.count < 3 { choices.insert(Int64.random(in: range, using: &generator)) }
        return Array(choices).shuffled(using: &generator)
    }
}
