import AuthenticatorAppModel
import CountersignKit
import UIKit

/// Number matching: the numbers as buttons, or a field for the number when the request gives
/// no choices. A wrong number denies the request (the SDK's `wrong_number`).
enum NumberMatchViewController {
    static func ask(_ choices: NumberChoices, from host: UIViewController) async -> NumberMatchAnswer {
        if choices.buttons.isEmpty {
            while true {
                guard let typed = await host.askText(title: "Number", message: choices.prompt,
                                                     placeholder: String(repeating: "0", count: choices.digits)) else { return .cancel }
                if let answer = choices.answer(typed: typed) { return answer }
            }
        }
        guard let index = await host.choose(title: "Which number?", message: choices.prompt,
                                            actions: choices.buttons.map(\.title)) else { return .cancel }
        return .number(choices.buttons[index].number)
    }
}
