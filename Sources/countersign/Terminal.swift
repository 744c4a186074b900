import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The terminal as the device commands use it.
enum Terminal {
    /// Prints at once, even into a pipe, so that a script reading the output sees each line
    /// as it happens.
    static func say(_ text: String, terminator: String = "\n") {
        print(text, terminator: terminator)
        StandardOutput.flush()
    }

    /// Returns at the first Ctrl-C (SIGINT), SIGTERM or SIGHUP, or when the task is cancelled.
    /// A second Ctrl-C after that stops the process the usual way, should stopping take too long.
    static func interruption() async {
        let (signals, received) = AsyncStream.makeStream(of: Void.self)
        InterruptionPipe.watch { received.yield() }
        for await _ in signals { return }
    }
}

/// The write end of the pipe the signal handler writes to. A signal handler may only call
/// async-signal-safe functions: it cannot resume a continuation or take a lock, but it can
/// `write(2)` one byte, which a thread blocked in `read(2)` then turns into an event.
///
/// `nonisolated(unsafe)` is safe here: the value is written once, in `InterruptionPipe.watch`,
/// before the handler that reads it is installed, and never changed afterwards.
private nonisolated(unsafe) var interruptionPipeWriteEnd: Int32 = -1

private func noteInterruption(_ signal: Int32) {
    var byte = UInt8(truncatingIfNeeded: signal)
    _ = write(interruptionPipeWriteEnd, &byte, 1)
}

private enum InterruptionPipe {
    static let signals = [SIGINT, SIGTERM, SIGHUP]

    /// Installs the handler and calls `interrupted` from a thread of its own at the first
    /// signal. Every thread may take the signal: the handler runs on whichever does, so none is
    /// lost (a dispatch signal source, on Linux, misses those delivered to a thread that has
    /// not blocked the signal). Blocking in `read` costs nothing while nothing happens.
    static func watch(_ interrupted: @escaping @Sendable () -> Void) {
        var ends: [Int32] = [-1, -1]
        guard pipe(&ends) == 0 else { return }
        interruptionPipeWriteEnd = ends[1]
        for signal in signals {
            var action = sigaction()
            #if canImport(Glibc)
            action.__sigaction_handler.sa_handler = noteInterruption
            #else
            action.__sigaction_u.__sa_handler = noteInterruption
            #endif
            action.sa_flags = SA_RESTART
            sigemptyset(&action.sa_mask)
            sigaction(signal, &action, nil)
        }
        let readEnd = ends[0]
        Thread.detachNewThread {
            var byte: UInt8 = 0
            while read(readEnd, &byte, 1) < 0 && errno == EINTR {}
            // From now on a second Ctrl-C ends the process at once.
            signal(SIGINT, SIG_DFL)
            interrupted()
        }
    }
}
