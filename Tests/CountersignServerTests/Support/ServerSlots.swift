import Foundation
import Synchronization

/// How many test servers run at once in this process. Swift Testing starts every test at once;
/// unbounded, the first seconds of the suite open well over a thousand sockets and files in one
/// process (servers, their database connections, the clients calling them). FoundationNetworking,
/// under `URLSession` on Linux, watches its sockets with `select`, which cannot see a descriptor
/// numbered 1024 or above: a request on such a socket never completes. Bounding the servers
/// keeps the descriptors low. Two cores gain nothing from more servers at once (the suite takes
/// as long with 8 as with 16), and with 16 a loaded machine once left a request unanswered for
/// 30 seconds.
enum ServerSlots {
    static let limit = 8

    /// Whether the current task already holds a slot (a test that starts a second server).
    @TaskLocal static var held = false

    private static let state = Mutex(State())

    private struct State {
        var free = ServerSlots.limit
        var waiting: [CheckedContinuation<Void, Never>] = []
    }

    /// Runs `body` holding a slot, waiting for one first unless this task holds one already.
    static func run<T>(_ body: () async throws -> T) async throws -> T {
        if held { return try await body() }
        await acquire()
        defer { release() }
        return try await $held.withValue(true) { try await body() }
    }

    private static func acquire() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let granted = state.withLock { state -> Bool in
                if state.free > 0 {
                    state.free -= 1
                    return true
                }
                state.waiting.append(continuation)
                return false
            }
            if granted { continuation.resume() }
        }
    }

    private static func release() {
        let next = state.withLock { state -> CheckedContinuation<Void, Never>? in
            if state.waiting.isEmpty {
                state.free += 1
                return nil
            }
            return state.waiting.removeFirst()
        }
        next?.resume()
    }
}
