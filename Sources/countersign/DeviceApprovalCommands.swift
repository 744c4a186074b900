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
                and asks about each request on the terminal. Only what is typed after a prompt answers it: \
                anything typed before is set aside, and the watch says so. From a pipe, each line answers the \
                next question. Stops on Ctrl-C or at the end of input.
                """)

        enum AutoAnswer: String, ExpressibleByArgument, CaseIterable {
            case approve, deny
        }

        @OptionGroup var options: StoreOptions
        @Option(help: "Only this enrollment. Default: every enrollment on this device.") var enrollment: String?
        @Option(help: "Answer every request without asking (for scripts and demos): approve or deny.")
        var auto: AutoAnswer?

        func run() async throws {
            let enrollments = try await options.authenticator().enrollments().filter { enrollment == nil || $0.id == enrollment }
            guard !enrollments.isEmpty else {
                throw TerminalFailure(enrollment.map { "this device has no enrollment \($0)" } ?? "this device has no enrollments")
            }
            // Not URLSession: on Linux it keeps an idle stream's socket registered for writing,
            // and spins on the readiness it reports (about half a core per watching terminal).
            // One connection per live stream, and two for the calls that answer.
            let transport = NIOTransport(connections: enrollments.count + 2)
            let watch = RequestWatch(
                authenticator: options.authenticator(transport: transport), enrollments: enrollments,
                automaticDecision: auto.map { $0 == .approve ? .approve : .deny })
            Terminal.say("Watching for requests to \(enrollments.map(RequestWatch.label).joined(separator: ", ")). Ctrl-C to stop.")
            let ending = await watch.run()
            try? await transport.shutdown()
            Terminal.say(ending)
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
        let answerer: Answerer
        let input: TerminalInput?
        if let automaticDecision {
            answerer = .automatic(automaticDecision)
            input = nil
        } else {
            let terminal = TerminalInput { happening.yield(.endOfInput) }
            answerer = .user(terminal)
            input = terminal
        }
        defer { input?.restore() }
        let ending = await withTaskGroup(of: Ending.self) { group in
            group.addTask {
                await withTaskGroup(of: Void.self) { listeners in
                    for enrollment in enrollments {
                        listeners.addTask {
                            await listen(enrollment, board: board, input: input) { happening.yield(.arrival($0)) }
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
        _ enrollment: Enrollment, board: RequestBoard, input: TerminalInput?, arrival: (ApprovalRequest) -> Void
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
                        board.close(closed.id)
                        if input?.withdraw(closed.id) == true {
                            let what = "\(RequestSummary.shown(closed.id)) is now \(RequestSummary.shown(closed.status))"
                            Terminal.say("\n\(what) (answered elsewhere, or expired).")
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
                guard !board.isClosed(request.id) else { continue }
                switch await input.ask("Approve? [y/N] ", about: request.id) {
                case .ended: return .endOfInput
                case .withdrawn: continue
                case .line(let line):
                    guard !board.isClosed(request.id) else { continue }
                    decision = ["y", "yes"].contains(line.trimmingCharacters(in: .whitespaces).lowercased()) ? .approve : .deny
                }
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

/// The requests the listeners saw leave the inbox, so that the one answering skips them.
private final class RequestBoard: Sendable {
    private let closed = Mutex<Set<String>>([])

    func close(_ requestID: String) {
        _ = closed.withLock { $0.insert(requestID) }
    }

    func isClosed(_ requestID: String) -> Bool {
        closed.withLock { $0.contains(requestID) }
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
