import ArgumentParser
import CountersignCore
import CountersignKit
import Foundation
import Synchronization

/// `countersign device watch`: this terminal as a live authenticator.
extension DeviceCommand {
    struct Watch: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Listen for requests and answer each as it arrives.",
            discussion: """
                Holds the live stream of every enrollment (or the one given), reconnecting when it drops, \
                and asks about each request on the terminal. Stops on Ctrl-C or at the end of input.
                """)

        enum AutoAnswer: String, ExpressibleByArgument, CaseIterable {
            case approve, deny
        }

        @OptionGroup var options: StoreOptions
        @Option(help: "Only this enrollment. Default: every enrollment on this device.") var enrollment: String?
        @Option(help: "Answer every request without asking (for scripts and demos): approve or deny.")
        var auto: AutoAnswer?

        func run() async throws {
            let authenticator = options.authenticator()
            let enrollments = try await authenticator.enrollments().filter { enrollment == nil || $0.id == enrollment }
            guard !enrollments.isEmpty else {
                throw TerminalFailure(enrollment.map { "this device has no enrollment \($0)" } ?? "this device has no enrollments")
            }
            let watch = RequestWatch(
                authenticator: authenticator, enrollments: enrollments,
                automaticDecision: auto.map { $0 == .approve ? .approve : .deny })
            Terminal.say("Watching for requests to \(enrollments.map(RequestWatch.label).joined(separator: ", ")). Ctrl-C to stop.")
            Terminal.say(await watch.run())
        }
    }
}

/// Holds one live stream per enrollment and answers what arrives, one request at a time.
struct RequestWatch: Sendable {
    let authenticator: CountersignAuthenticator
    let enrollments: [Enrollment]
    /// Answer without asking; nil to ask on the terminal.
    let automaticDecision: ApprovalResponse.Decision?

    static func label(_ enrollment: Enrollment) -> String {
        "\(enrollment.user.username) at \(enrollment.server.absoluteString)"
    }

    /// Who decides: the command line, once for all, or the user, for each request.
    private enum Answerer: Sendable {
        case automatic(ApprovalResponse.Decision)
        case user(TerminalInput)
    }

    private enum Ending: Equatable {
        case listenersEnded, nothingLeftToWatch, endOfInput, interrupted

        var message: String {
            switch self {
            case .listenersEnded, .nothingLeftToWatch: "No enrollment left to watch."
            case .endOfInput: "End of input: stopped."
            case .interrupted: "Stopped."
            }
        }
    }

    /// What the one answering handles, in order: requests as they arrive, and the end of
    /// input once the lines before it have been used.
    private enum Happening: Sendable {
        case arrival(ApprovalRequest)
        case endOfInput
    }

    /// Runs until Ctrl-C, the end of input, or no enrollment is left to listen for; returns
    /// which, as the text to show. Standard input is read only when the user is to be asked.
    func run() async -> String {
        let (happenings, happening) = AsyncStream.makeStream(of: Happening.self)
        let board = RequestBoard()
        let answerer = automaticDecision.map(Answerer.automatic)
            ?? .user(TerminalInput { happening.yield(.endOfInput) })
        let ending = await withTaskGroup(of: Ending.self) { group in
            group.addTask {
                await withTaskGroup(of: Void.self) { listeners in
                    for enrollment in enrollments {
                        listeners.addTask {
                            await listen(enrollment, board: board) { happening.yield(.arrival($0)) }
                        }
                    }
                }
                happening.finish()
                return .listenersEnded
            }
            group.addTask { await answer(happenings, board: board, answerer: answerer) }
            group.addTask {
                await Terminal.interruption()
                return .interrupted
            }
            var ending = Ending.nothingLeftToWatch
            while let next = await group.next() {
                // The listeners ending is not the end: what they delivered is still answered.
                guard next == .listenersEnded else {
                    ending = next
                    break
                }
            }
            group.cancelAll()
            return ending
        }
        return ending.message
    }

    /// Keeps one enrollment's live stream open, reconnecting after a failure with a growing
    /// delay, until the task is cancelled or the enrollment is gone.
    private func listen(
        _ enrollment: Enrollment, board: RequestBoard, arrival: (ApprovalRequest) -> Void
    ) async {
        var delay = ReconnectionDelay()
        while !Task.isCancelled {
            let opened = ContinuousClock.now
            let failure: CountersignError?
            do throws(CountersignError) {
                for try await event in authenticator.liveRequests(enrollment.id) {
                    switch event {
                    case .request(let request):
                        arrival(request)
                    case .closed(let closed):
                        if board.close(closed.id) {
                            let what = "\(RequestSummary.shown(closed.id)) is now \(RequestSummary.shown(closed.status))"
                            Terminal.say("\n\(what) (answered elsewhere, or expired); press Enter.")
                        }
                    }
                }
                failure = nil
            } catch .deviceDeregistered, .userDeregistered, .userDisenrolled, .notEnrolled {
                Terminal.say("\(Self.label(enrollment)): the enrollment is gone; no longer listening for it.")
                return
            } catch {
                failure = error
            }
            guard !Task.isCancelled else { return }
            // The server ends a stream after a while; one that lasted is reopened after the
            // shortest delay, one that keeps failing or ending early after longer and longer.
            if opened.duration(to: .now) > .seconds(60) { delay.reset() }
            let wait = delay.next()
            if let failure {
                Terminal.say("\(Self.label(enrollment)): \(failure); reconnecting in \(wait.components.seconds)s.")
            }
            try? await Task.sleep(for: wait)
        }
    }

    /// Shows each new request and answers it, as told or as the user says.
    private func answer(
        _ happenings: AsyncStream<Happening>, board: RequestBoard, answerer: Answerer
    ) async -> Ending {
        var seen: Set<String> = []
        for await happening in happenings {
            guard case .arrival(let request) = happening else { return .endOfInput }
            // A reconnected stream repeats what is still pending.
            guard seen.insert(request.id).inserted, !board.isClosed(request.id), request.expiresAt > Date() else {
                continue
            }
            let details: RequestDetails
            do { details = try await authenticator.details(for: request) } catch {
                Terminal.say("\n\(request.id) cannot be shown, and is left unanswered: \(error)")
                continue
            }
            Terminal.say("\nNew request\n" + RequestSummary(details).text)
            let decision: ApprovalResponse.Decision
            switch answerer {
            case .automatic(let automaticDecision):
                decision = automaticDecision
            case .user(let input):
                board.prompting(request.id)
                Terminal.say("Approve? [y/N] ", terminator: "")
                let line = await input.nextLine()
                board.prompting(nil)
                guard let line else { return .endOfInput }
                guard !board.isClosed(request.id) else { continue }
                decision = ["y", "yes"].contains(line.trimmingCharacters(in: .whitespaces).lowercased()) ? .approve : .deny
            }
            await send(decision, details)
        }
        return .nothingLeftToWatch
    }

    private func send(_ decision: ApprovalResponse.Decision, _ details: RequestDetails) async {
        do throws(CountersignError) {
            let acknowledgement = switch decision {
            case .approve: try await authenticator.approve(details)
            case .deny: try await authenticator.deny(details)
            }
            Terminal.say(RequestSummary.outcome(of: acknowledgement))
        } catch .alreadyAnswered {
            Terminal.say("\(details.request.id) was already answered, perhaps on another device.")
        } catch .expired {
            Terminal.say("\(details.request.id) expired before the answer arrived.")
        } catch .requestNotHandleable {
            Terminal.say("\(details.request.id) asks for more than a confirmation; answer it with "
                + "`countersign device approve \(details.request.id)`.")
        } catch {
            Terminal.say("\(details.request.id) could not be answered: \(error)")
        }
    }
}

/// What the listeners tell the one answering: which requests left the inbox, and whether the
/// one on screen is among them.
private final class RequestBoard: Sendable {
    private struct State {
        var closed: Set<String> = []
        var onScreen: String?
    }

    private let state = Mutex(State())

    /// Records that a request left the inbox; true when it is the one the user is asked about.
    func close(_ requestID: String) -> Bool {
        state.withLock { state in
            state.closed.insert(requestID)
            return state.onScreen == requestID
        }
    }

    func isClosed(_ requestID: String) -> Bool {
        state.withLock { $0.closed.contains(requestID) }
    }

    func prompting(_ requestID: String?) {
        state.withLock { $0.onScreen = requestID }
    }
}

/// 1, 2, 4, 8, 16, then 30 seconds, each with up to a second of jitter so that terminals
/// dropped together do not all come back at the same instant.
struct ReconnectionDelay {
    private var attempt = 0

    mutating func next() -> Duration {
        let seconds = min(30, 1 << min(attempt, 5))
        attempt += 1
        return .seconds(seconds) + .milliseconds(Int.random(in: 0..<1000))
    }

    mutating func reset() {
        attempt = 0
    }
}

/// The terminal as the watch uses it.
enum Terminal {
    /// Prints at once, even into a pipe, so that a script reading the output sees each line
    /// as it happens.
    static func say(_ text: String, terminator: String = "\n") {
        print(text, terminator: terminator)
        fflush(nil)
    }

    /// Returns at the first Ctrl-C (SIGINT), or when the task is cancelled. A second Ctrl-C
    /// after that stops the process the usual way.
    static func interruption() async {
        signal(SIGINT, SIG_IGN)
        let source = DispatchSource.makeSignalSource(signal: SIGINT, queue: .global())
        let (signals, received) = AsyncStream.makeStream(of: Void.self)
        source.setEventHandler { received.yield() }
        source.resume()
        defer {
            source.cancel()
            signal(SIGINT, SIG_DFL)
        }
        for await _ in signals { return }
    }
}

/// Standard input, read line by line on a thread of its own, so that the end of input is
/// noticed even while no question is asked. A line typed on a terminal while no question is
/// asked is discarded: an early keystroke must not answer a request the user has not seen.
/// From a pipe, lines wait for the questions they answer, in order, and the input ends once the
/// last of them has been taken.
final class TerminalInput: Sendable {
    private struct State {
        var queued: [String] = []
        var waiting: CheckedContinuation<String?, Never>?
        var ended = false
    }

    private let state = Mutex(State())
    private let interactive = isatty(STDIN_FILENO) == 1
    private let onEnd: @Sendable () -> Void

    /// Starts reading; `onEnd` is called once, when the input has ended and no line is left.
    init(onEnd: @escaping @Sendable () -> Void) {
        self.onEnd = onEnd
        // Reading blocks its thread, which must not be one of the few that run tasks.
        Thread.detachNewThread { [self] in
            while let line = readLine() { deliver(line) }
            finish()
        }
    }

    /// The next line, or nil at the end of input or when the task is cancelled.
    func nextLine() async -> String? {
        await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                let endsNow = state.withLock { state in
                    if !state.queued.isEmpty {
                        continuation.resume(returning: state.queued.removeFirst())
                        return state.ended && state.queued.isEmpty
                    }
                    if state.ended || Task.isCancelled {
                        continuation.resume(returning: nil)
                    } else {
                        state.waiting = continuation
                    }
                    return false
                }
                if endsNow { onEnd() }
            }
        } onCancel: {
            state.withLock { state in
                state.waiting?.resume(returning: nil)
                state.waiting = nil
            }
        }
    }

    private func deliver(_ line: String) {
        state.withLock { state in
            if let waiting = state.waiting {
                waiting.resume(returning: line)
                state.waiting = nil
            } else if !interactive {
                state.queued.append(line)
            }
        }
    }

    private func finish() {
        let endsNow = state.withLock { state in
            state.ended = true
            state.waiting?.resume(returning: nil)
            state.waiting = nil
            return state.queued.isEmpty
        }
        if endsNow { onEnd() }
    }
}
