/// Where the questions asked while answering a request (the number to match, the PIN, custom
/// data) are answered. `device approve` reads standard input a line at a time; `device watch`
/// asks through the input it already reads, so that only what is typed after the question
/// answers it.
protocol TerminalAnswers: Sendable {
    /// Shows `prompt` and returns the line typed after it; nil when none will come (the input
    /// ended, or the request left the inbox meanwhile).
    func line(_ prompt: String) async -> String?
    /// `line`, without echoing what is typed.
    func secret(_ prompt: String) async -> String?
}

/// Standard input, read where the command runs: `device approve`.
struct StandardInputAnswers: TerminalAnswers {
    func line(_ prompt: String) async -> String? {
        Terminal.say(prompt, terminator: "")
        return readLine(strippingNewline: true)
    }

    func secret(_ prompt: String) async -> String? {
        readSecretLine(prompt: prompt)
    }
}

/// The watch's input, asked about one request: a question about it is withdrawn when the
/// request leaves the inbox.
struct WatchAnswers: TerminalAnswers {
    let input: TerminalInput
    let requestID: String

    func line(_ prompt: String) async -> String? {
        guard case .line(let line) = await input.ask(prompt, about: requestID) else { return nil }
        return line
    }

    func secret(_ prompt: String) async -> String? {
        guard case .line(let line) = await input.ask(prompt, about: requestID, secret: true) else { return nil }
        return line
    }
}
