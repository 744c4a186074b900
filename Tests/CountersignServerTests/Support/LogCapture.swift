import Foundation
import Logging
import Synchronization

/// Keeps what a server logs, for tests that check what it did not log: nothing at error level
/// for a client's fault, no secret anywhere.
final class LogCapture: Sendable {
    struct Entry: Sendable {
        let level: Logger.Level
        /// The message followed by every metadata value, the logger's and the line's.
        let message: String
    }

    private let entries = Mutex<[Entry]>([])

    /// A logger writing here, from `level` up.
    func logger(level: Logger.Level = .debug) -> Logger {
        var logger = Logger(label: "countersign-captured") { _ in Handler(capture: self) }
        logger.logLevel = level
        return logger
    }

    /// What was logged at `level` or above.
    func logged(atLeast level: Logger.Level) -> [Entry] {
        entries.withLock { $0.filter { $0.level >= level } }
    }

    fileprivate func append(_ entry: Entry) {
        entries.withLock { $0.append(entry) }
    }

    private struct Handler: LogHandler {
        let capture: LogCapture
        var metadata: Logger.Metadata = [:]
        var logLevel: Logger.Level = .trace

        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }

        func log(event: LogEvent) {
            let all = metadata.merging(event.metadata ?? [:]) { $1 }
            capture.append(Entry(level: event.level, message: "\(event.message) \(all)"))
        }
    }
}
