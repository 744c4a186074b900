import ArgumentParser
import CountersignCommandLine
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
                Holds the live stream of every enrollment (or the one given), reconnecting when it drops (and \
                saying when it is back, with the question still open asked again), and asks about each request \
                on the terminal: `Approve? [y/N]`, then the number to match or the PIN when the request asks for \
                one. Only what is typed after a prompt answers it: anything typed before is set aside, and the \
                watch says so. From a pipe, each line answers the next question. Stops on Ctrl-C or at the end \
                of input.
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
            // A refused connection fails at once, so that the watch can say the server is gone.
            let transport = NIOTransport(connections: enrollments.count + 2, retryingRefusedConnections: false)
            let watch = RequestWatch(
                authenticator: options.authenticator(transport: transport), enrollments: enrollments,
                automaticDecision: auto.map { $0 == .approve ? .approve : .deny }, log: options.answerLog)
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
    /// Where this terminal's answers are noted.
    let log: AnswerLog

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
    /// delay, until the task is cancelled or the enrollment is gone. After a failure it says
    /// when the server answers again, and asks the open question again.
    private func listen(
        _ enrollment: Enrollment, board: RequestBoard, input: TerminalInput?, arrival: (ApprovalRequest) -> Void
    ) async {
        var delay = ReconnectionDelay()
        // A failure was reported, and the server's return not yet.
        var interrupted = false
        while !Task.isCancelled {
            let opened = ContinuousClock.now
            let failure: CountersignError?
            do throws(CountersignError) {
                if interrupted {
                    // The inbox answers at once, where a stream says nothing until a request
                    // comes: its answer shows the server is back, and what is still pending.
                    let inbox = try await authenticator.pendingRequests(enrollment.id)
                    interrupted = false
                    Terminal.say("\(Self.label(enrollment)): reconnected.")
                    await resume(enrollment, pending: Set(inbox.map(\.id)), board: board, input: input)
                }
                for try await event in authenticator.liveRequests(enrollment.id) {
                    switch event {
                    case .request(let request):
                        arrival(request)
                    case .closed(let closed):
                        board.close(closed.id)
                        if input?.withdraw(closed.id) == true {
                            Terminal.say("\n" + (await closing(closed.id, status: closed.status, board: board)))
                        }
                    case .notice(let notice):
                        let place = notice.ipAddress.map { " (from \($0))" } ?? ""
                        Terminal.say("\n\(Self.label(enrollment)): \(notice.summary)\(place)\n"
                            + "Not you? Run: countersign device not-me \(notice.id)")
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
                interrupted = true
                Terminal.say("\(Self.label(enrollment)): \(failure); reconnecting in \(wait.components.seconds)s.")
            }
            try? await Task.sleep(for: wait)
        }
    }

    /// After the server's return: the open question, if about a request of this enrollment, is
    /// asked again when the request is still pending, and withdrawn when it is not (it was
    /// answered or expired while the stream was down, and its `closed` event was missed).
    private func resume(_ enrollment: Enrollment, pending: Set<String>, board: RequestBoard, input: TerminalInput?) async {
        guard let input, let asked = board.asked, asked.enrollmentID == enrollment.id else { return }
        if pending.contains(asked.requestID) {
            input.repeatQuestion(about: asked.requestID, after: "\n\(asked.requestID) is still waiting for your answer:\n\(asked.summary)")
            return
        }
        board.close(asked.requestID)
        if input.withdraw(asked.requestID) {
            Terminal.say("\n" + (await closing(asked.requestID, status: nil, board: board)))
        }
    }

    /// Why a request left the inbox while it was asked about: answered here by another command
    /// (the answer log says how and when), on another device, or expired. `status` is the
    /// stream's, nil when the request was found gone from the inbox.
    private func closing(_ requestID: String, status: String?, board: RequestBoard) async -> String {
        let shown = RequestSummary.shown(requestID)
        if status == "expired" {
            let expiry = board.asked.flatMap { $0.requestID == requestID ? $0.expiresAt : nil }
            return "\(shown) expired\(expiry.map { " at \(Timestamps.format($0))" } ?? "") before it was answered."
        }
        // Another command on this terminal notes its answer once the server has acknowledged
        // it, which may come a moment after the stream's event.
        for _ in 0..<10 {
            if let entry = log.entry(for: requestID) { return "\(shown) was \(entry.sentence)." }
            try? await Task.sleep(for: .milliseconds(100))
        }
        guard let status else {
            return "\(shown) is no longer pending: it was answered on another device, or expired, while the server could not be reached."
        }
        return "\(shown) was \(RequestSummary.shown(status)) on another device."
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
            let summary = RequestSummary(details).text
            Terminal.say("\nNew request\n" + summary)
            switch answerer {
            case .automatic(let automaticDecision):
                await send(automaticDecision, details, board: board, answers: nil)
            case .user(let input):
                guard !board.isClosed(request.id) else { continue }
                board.asked = RequestBoard.Asked(
                    requestID: request.id, enrollmentID: request.enrollmentID, summary: summary, expiresAt: details.expiresAt)
                defer { board.asked = nil }
                switch await input.ask("Approve? [y/N] ", about: request.id) {
                case .ended: return .endOfInput
                case .withdrawn: continue
                case .line(let line):
                    guard !board.isClosed(request.id) else { continue }
                    let approving = ["y", "yes"].contains(line.trimmingCharacters(in: .whitespaces).lowercased())
                    await send(
                        approving ? .approve : .deny, details, board: board, answers: WatchAnswers(input: input, requestID: request.id))
                }
            }
        }
        return .nothingLeftToWatch
    }

    /// Whether the watch asks, on the terminal, for what approving `details` takes beyond a
    /// confirmation: a number, a PIN or custom data. A biometric check and a choice among
    /// alternatives are left to `device approve`.
    private static func asksOnTheTerminal(_ details: RequestDetails) -> Bool {
        guard details.verification.alternatives == nil else { return false }
        switch details.requiredFactor {
        case .confirm, .numberMatch, .pin, .custom: return true
        case .biometric: return false
        }
    }

    /// Sends the decision; approving asks `answers` for the number, the PIN or the data the
    /// request requires (with no `answers`, only a confirmation can be given).
    private func send(
        _ decision: ApprovalResponse.Decision, _ details: RequestDetails, board: RequestBoard, answers: (any TerminalAnswers)?
    ) async {
        let requestID = details.request.id
        do throws(CountersignError) {
            let acknowledgement: ApprovalAcknowledgement
            switch decision {
            case .deny:
                acknowledgement = try await authenticator.deny(details)
            case .approve where details.requiredFactor == .confirm && details.verification.alternatives == nil:
                acknowledgement = try await authenticator.approve(details)
            case .approve:
                guard let answers, Self.asksOnTheTerminal(details) else { throw .requestNotHandleable }
                let handler = TerminalChallenges(
                    number: nil, customData: nil, pins: PINSource(fromStandardInput: false), preferPIN: false, answers: answers)
                acknowledgement = try await authenticator.respond(toDetails: details, with: handler).acknowledgement
            }
            log.record(acknowledgement, enrollment: details.request.enrollmentID, command: "device watch")
            Terminal.say(RequestSummary.outcome(of: acknowledgement))
        } catch .alreadyAnswered where board.isClosed(requestID), .expired where board.isClosed(requestID) {
            // Its question was withdrawn while asked (the number, the PIN), and the listener
            // said why.
        } catch .alreadyAnswered {
            let how = log.entry(for: requestID).map { "was already \($0.sentence)" } ?? "was already answered on another device"
            Terminal.say("\(requestID) \(how).")
        } catch .expired {
            Terminal.say("\(requestID) expired before the answer arrived.")
        } catch .actionCancelled {
            Terminal.say("Cancelled: \(requestID) was denied as cancelled.")
        } catch .requestNotHandleable {
            Terminal.say("\(requestID) asks for \(RequestSummary.verification(of: details)); answer it with "
                + "`countersign device approve \(requestID)`.")
        } catch {
            Terminal.say("\(requestID) could not be answered: \(error)")
        }
    }
}

/// The requests the listeners saw leave the inbox, so that the one answering skips them, and
/// the one being asked about, so that a listener can ask again after a reconnection.
private final class RequestBoard: Sendable {
    struct Asked: Sendable {
        let requestID: String
        let enrollmentID: String
        /// The request as it was shown.
        let summary: String
        let expiresAt: Date
    }

    private let closed = Mutex<Set<String>>([])
    private let asking = Mutex<Asked?>(nil)

    var asked: Asked? {
        get { asking.withLock { $0 } }
        set { asking.withLock { $0 = newValue } }
    }

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
