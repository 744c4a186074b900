import Foundation

/// How long an HTTP connection may keep the server waiting, and how many may be open at once.
///
/// Every open connection holds a file descriptor. Without these bounds, clients that connect
/// and send nothing, or send a request a byte at a time, hold descriptors for as long as they
/// like; once the process runs out, the health checks go unanswered and SQLite cannot open its
/// write-ahead log.
///
/// ```swift
/// var configuration = ServerConfiguration(dataDirectory: directory)
/// configuration.connections.headerTimeout = .seconds(5)
/// configuration.connections.maximumConnections = 2_000
/// ```
public struct ConnectionLimits: Sendable, Equatable {
    /// How long a connection may stay open with no request on it: after it opens, and after
    /// each response on a kept-alive connection.
    public var idleTimeout: Duration = .seconds(60)
    /// How long a request head may take from its first byte to its last. More bytes do not
    /// extend it, so a client that dribbles its headers is closed on time.
    public var headerTimeout: Duration = .seconds(10)
    /// How long a request body may go without a byte while the server is waiting for one.
    /// Time the server itself spends before reading on (it is busy) does not count.
    public var bodyProgressTimeout: Duration = .seconds(30)
    /// The most connections open at once; nil: `defaultMaximumConnections`, or fewer when the
    /// descriptor limit leaves less room (`effectiveMaximumConnections`). At the cap, a new
    /// connection makes room by closing the longest-waiting one that has no request being
    /// answered; when every connection is busy, the new one is closed at once.
    public var maximumConnections: Int?

    public static let defaultMaximumConnections = 10_000
    /// The bounds of `--max-connections`.
    public static let connectionCaps = 16...1_000_000
    /// The bounds of the timeout options, in seconds.
    public static let timeoutSeconds = 1...3600
    /// Descriptors kept for everything but HTTP connections (besides the database pool): the
    /// SQLite database and its journal files, the push and webhook clients, logs, the listening
    /// socket.
    public static let descriptorReserve = 128

    public init() {}

    /// The cap to enforce, given the process's descriptor limit and the database pool's size:
    /// the configured (or default) cap, lowered so that the reserve and the pool always have
    /// descriptors left.
    public func effectiveMaximumConnections(descriptorLimit: Int, databasePoolSize: Int) -> Int {
        let room = descriptorLimit - Self.descriptorReserve - databasePoolSize
        return max(Self.connectionCaps.lowerBound, min(maximumConnections ?? Self.defaultMaximumConnections, room))
    }
}
