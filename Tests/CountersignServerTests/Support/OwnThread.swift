import Foundation

/// Runs `body`, which blocks (waits for a child, reads a socket), on a thread started for it,
/// and waits for it without holding a thread.
///
/// Not on GCD's global queues: on Linux, Swift's concurrency pool *is* GCD's global root queue
/// (one thread per core, two here), and GCD adds a thread for blocked ones only about once a
/// second. A wait on `DispatchQueue.global()` therefore holds a thread that runs tasks, among
/// them the handlers of the server under test; the slapd harness's children (openssl, slapadd,
/// ldapwhoami) on top of the others' held the pool for half a minute under the full suite.
func onThreadOfItsOwn<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<T, any Error>) in
        Thread.detachNewThread { continuation.resume(with: Result { try body() }) }
    }
}

/// `onThreadOfItsOwn` for a body that does not throw.
func onThreadOfItsOwn<T: Sendable>(_ body: @escaping @Sendable () -> T) async -> T {
    await withCheckedContinuation { (continuation: CheckedContinuation<T, Never>) in
        Thread.detachNewThread { continuation.resume(returning: body()) }
    }
}
