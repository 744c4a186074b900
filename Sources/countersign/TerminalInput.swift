import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Standard input as `device watch` asks on it. One thread owns it: it writes each question's
/// prompt, and reads what is typed, blocked in `poll(2)` while nothing happens.
///
/// On a terminal, an answer is what is typed after its prompt is on the screen. The terminal
/// is switched to reading key by key for that (and back by `restore()`), so that even half a
/// line typed before the prompt is known as such: it is set aside, and the user is told, since
/// an early keystroke must not answer a request the user has not seen. A line typed while no
/// question is asked answers nothing, and the user is told so too.
///
/// From a pipe, lines wait for the questions they answer, in order, and the input ends once
/// the last of them has been taken.
final class TerminalInput: Sendable {
    enum Answer: Sendable, Equatable {
        case line(String)
        /// The request left the inbox while it was asked about.
        case withdrawn
        /// The input ended, or the asking task was cancelled.
        case ended
    }

    private struct Question {
        let requestID: String
        let prompt: String
        /// What is typed is not echoed (a PIN).
        let secret: Bool
        let continuation: CheckedContinuation<Answer, Never>
    }

    private struct State {
        var question: Question?
        /// Whether the question's prompt has been written.
        var shown = false
        /// Lines to write before the open question's prompt is written again.
        var repeating: String?
        /// Piped lines not yet taken by a question.
        var queued: [String] = []
        var ended = false
        var endReported = false
    }

    private let state = Mutex(State())
    private let interactive: Bool
    /// The terminal's settings before the watch changed them.
    private let original: termios?
    /// Written to wake the reading thread when a question is asked.
    private let wakeUp: (read: Int32, write: Int32)
    private let onEnd: @Sendable () -> Void

    /// Starts reading; `onEnd` is called once, when the input has ended and no line is left.
    init(onEnd: @escaping @Sendable () -> Void) {
        self.onEnd = onEnd
        var ends: [Int32] = [-1, -1]
        if pipe(&ends) != 0 { ends = [-1, -1] }
        wakeUp = (ends[0], ends[1])
        var settings = termios()
        if isatty(STDIN_FILENO) == 1, tcgetattr(STDIN_FILENO, &settings) == 0 {
            interactive = true
            original = settings
            var keyByKey = settings
            keyByKey.c_lflag &= ~tcflag_t(ICANON | ECHO)
            withUnsafeMutableBytes(of: &keyByKey.c_cc) { controls in
                controls[Int(VMIN)] = 1
                controls[Int(VTIME)] = 0
            }
            tcsetattr(STDIN_FILENO, TCSANOW, &keyByKey)
        } else {
            interactive = false
            original = nil
        }
        // Reading blocks its thread, which must not be one of the few that run tasks.
        Thread.detachNewThread { [self] in readUntilTheEnd() }
    }

    /// Puts the terminal back as it was.
    func restore() {
        guard var original else { return }
        tcsetattr(STDIN_FILENO, TCSANOW, &original)
    }

    /// Shows `prompt` and returns what is typed after it (without echo when `secret`): a line,
    /// `.withdrawn` once `withdraw(requestID)` is called, or `.ended`.
    func ask(_ prompt: String, about requestID: String, secret: Bool = false) async -> Answer {
        await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                let asked = state.withLock { state in
                    guard !state.ended || !state.queued.isEmpty, !Task.isCancelled else { return false }
                    state.question = Question(requestID: requestID, prompt: prompt, secret: secret, continuation: continuation)
                    state.shown = false
                    state.repeating = nil
                    return true
                }
                guard asked else { return continuation.resume(returning: .ended) }
                var byte: UInt8 = 1
                _ = write(wakeUp.write, &byte, 1)
            }
        } onCancel: {
            answer(.ended)
        }
    }

    /// Stops asking about `requestID`; true when it was being asked about.
    func withdraw(_ requestID: String) -> Bool {
        answer(.withdrawn, ifAbout: requestID)
    }

    /// Writes `preface`, then the open question's prompt again with what has been typed after
    /// it so far, if the question is about `requestID` and its prompt was shown: other lines
    /// (a lost connection, its return) have pushed it up the screen. The answer is the same
    /// line either way.
    func repeatQuestion(about requestID: String, after preface: String) {
        let repeating = state.withLock { state in
            guard state.question?.requestID == requestID, state.shown else { return false }
            state.repeating = preface
            return true
        }
        guard repeating else { return }
        var byte: UInt8 = 1
        _ = write(wakeUp.write, &byte, 1)
    }

    /// Ends the open question, if any (and if it is about `requestID`, when given).
    @discardableResult
    private func answer(_ answer: Answer, ifAbout requestID: String? = nil) -> Bool {
        let question = state.withLock { state -> Question? in
            guard let question = state.question, requestID == nil || question.requestID == requestID else { return nil }
            state.question = nil
            state.shown = false
            return question
        }
        question?.continuation.resume(returning: answer)
        return question != nil
    }

    // MARK: - The reading thread

    private func readUntilTheEnd() {
        var editor = LineEditor(keyByKey: interactive)
        var inputOpen = true
        var buffer = [UInt8](repeating: 0, count: 512)
        while true {
            // poll(2) skips a negative descriptor: once the input has ended, only questions wake
            // the thread, to take the piped lines left.
            var watched = [pollfd(fd: inputOpen ? STDIN_FILENO : -1, events: Int16(POLLIN), revents: 0),
                           pollfd(fd: wakeUp.read, events: Int16(POLLIN), revents: 0)]
            guard poll(&watched, 2, -1) >= 0 || errno == EINTR else { break }
            if inputOpen, watched[0].revents != 0 {
                inputOpen = readWaitingInput(into: &editor, buffer: &buffer, block: true)
                if !inputOpen { finish() }
            }
            if watched[1].revents != 0 {
                _ = read(wakeUp.read, &buffer, buffer.count)
                if inputOpen {
                    // Whatever is already waiting was typed before the prompt appears.
                    inputOpen = readWaitingInput(into: &editor, buffer: &buffer, block: false)
                    if !inputOpen { finish() }
                }
                showPrompt(editor: &editor)
            }
            if state.withLock({ $0.ended && $0.queued.isEmpty }) { return }
        }
        finish()
    }

    /// Reads standard input: what one `read` returns when `block`, else all that is waiting
    /// without blocking. False at the end of input.
    private func readWaitingInput(into editor: inout LineEditor, buffer: inout [UInt8], block: Bool) -> Bool {
        repeat {
            if !block {
                var waiting = [pollfd(fd: STDIN_FILENO, events: Int16(POLLIN), revents: 0)]
                guard poll(&waiting, 1, 0) > 0 else { return true }
            }
            let count = read(STDIN_FILENO, &buffer, buffer.count)
            if count < 0, errno == EINTR || errno == EAGAIN { continue }
            guard count > 0, take(buffer[0..<count], into: &editor) else { return false }
        } while !block
        return true
    }

    /// Writes the prompt of the question just asked; from a pipe, answers it with the next
    /// line left, if any.
    private func showPrompt(editor: inout LineEditor) {
        let again = state.withLock { state -> (preface: String, prompt: String, secret: Bool)? in
            guard let question = state.question, state.shown, let preface = state.repeating else { return nil }
            state.repeating = nil
            return (preface, question.prompt, question.secret)
        }
        if let again {
            Terminal.say(again.preface)
            Terminal.say(again.prompt + (again.secret ? "" : editor.typed), terminator: "")
            return
        }
        // The question may have been withdrawn, or its task cancelled, since it woke the thread.
        guard let secret = state.withLock({ $0.shown ? nil : $0.question?.secret }) else { return }
        if interactive, !editor.typed.isEmpty {
            // What was typed may be the secret asked for: it is not shown back.
            let typed = secret ? "What" : "“\(RequestSummary.shown(editor.typed))”"
            Terminal.say("\n\(typed) was typed before the question below, and does not answer it.")
            editor.clear()
        }
        let piped: (Question, String)? = state.withLock { state in
            guard let question = state.question, !state.shown else { return nil }
            state.shown = true
            Terminal.say(question.prompt, terminator: "")
            guard !interactive, !state.queued.isEmpty else { return nil }
            state.question = nil
            state.shown = false
            return (question, state.queued.removeFirst())
        }
        if let (question, line) = piped {
            Terminal.say("")
            question.continuation.resume(returning: .line(line))
            endIfNothingIsLeft()
        }
    }

    /// Takes bytes read from standard input; false at the end of input (Ctrl-D on an empty
    /// line).
    private func take(_ bytes: ArraySlice<UInt8>, into editor: inout LineEditor) -> Bool {
        for byte in bytes {
            let echoing = state.withLock { state in state.shown && state.question.map { !$0.secret } == true }
            switch editor.take(byte, echo: interactive && echoing) {
            case .editing: break
            case .endOfInput: return false
            case .line(let line): deliver(line)
            }
        }
        return true
    }

    private func deliver(_ line: String) {
        let question = state.withLock { state -> Question? in
            guard let question = state.question, state.shown else {
                if !interactive { state.queued.append(line) }
                return nil
            }
            state.question = nil
            state.shown = false
            return question
        }
        if let question {
            if interactive { Terminal.say("") }
            question.continuation.resume(returning: .line(line))
        } else if interactive, !line.trimmingCharacters(in: .whitespaces).isEmpty {
            Terminal.say("“\(RequestSummary.shown(line))” was typed while no question was asked; it answers nothing.")
        }
    }

    private func finish() {
        let question = state.withLock { state -> Question? in
            state.ended = true
            guard state.queued.isEmpty else { return nil }
            defer {
                state.question = nil
                state.shown = false
            }
            return state.question
        }
        question?.continuation.resume(returning: .ended)
        endIfNothingIsLeft()
    }

    /// Calls `onEnd`, once, when the input has ended and every line has been taken.
    private func endIfNothingIsLeft() {
        let endsNow = state.withLock { state in
            guard state.ended, state.queued.isEmpty, !state.endReported else { return false }
            state.endReported = true
            return true
        }
        if endsNow { onEnd() }
    }
}

/// The line being typed on a terminal read key by key: printable characters are added and
/// echoed, Backspace and Ctrl-U erase, Enter ends the line, Ctrl-D on an empty line ends the
/// input, and escape sequences (arrow keys) are ignored. From a pipe, bytes are taken as they
/// are and only a newline means something.
struct LineEditor {
    enum Outcome: Equatable {
        case editing
        case line(String)
        case endOfInput
    }

    /// Whether the input is a terminal read key by key, rather than a pipe.
    let keyByKey: Bool
    private var bytes: [UInt8] = []
    private var escape = EscapeState.none

    init(keyByKey: Bool) {
        self.keyByKey = keyByKey
    }

    private enum EscapeState {
        case none, started, sequence
    }

    var typed: String { String(decoding: bytes, as: UTF8.self) }

    mutating func clear() {
        bytes = []
    }

    mutating func take(_ byte: UInt8, echo: Bool) -> Outcome {
        guard keyByKey else {
            switch byte {
            case UInt8(ascii: "\n"):
                defer { bytes = [] }
                return .line(typed)
            case UInt8(ascii: "\r"): break
            default: bytes.append(byte)
            }
            return .editing
        }
        switch escape {
        case .started:
            escape = byte == UInt8(ascii: "[") || byte == UInt8(ascii: "O") ? .sequence : .none
            return .editing
        case .sequence:
            if (0x40...0x7E).contains(byte) { escape = .none }
            return .editing
        case .none:
            break
        }
        switch byte {
        case UInt8(ascii: "\n"), UInt8(ascii: "\r"):
            defer { bytes = [] }
            return .line(typed)
        case 0x04:
            return bytes.isEmpty ? .endOfInput : .editing
        case 0x1B:
            escape = .started
        case 0x7F, 0x08:
            guard !bytes.isEmpty else { break }
            while let last = bytes.popLast(), last & 0xC0 == 0x80 {}
            if echo { write("\u{8} \u{8}") }
        case 0x15:
            let characters = typed.count
            bytes = []
            if echo { write(String(repeating: "\u{8} \u{8}", count: characters)) }
        case ..<0x20:
            break
        default:
            bytes.append(byte)
            if echo {
                StandardOutput.put(byte)
                StandardOutput.flush()
            }
        }
        return .editing
    }

    private func write(_ text: String) {
        Terminal.say(text, terminator: "")
    }
}
