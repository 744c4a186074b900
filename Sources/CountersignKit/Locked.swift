import Foundation

/// A value only reached while holding a lock: what `Mutex` from the Synchronization module
/// does, which needs iOS 18 and macOS 15 while the SDK runs from iOS 17 (docs/sdk.md).
///
/// ```swift
/// let seen = Locked<Set<String>>([])
/// let isNew = seen.withLock { $0.insert(id).inserted }
/// ```
final class Locked<Value: Sendable>: @unchecked Sendable {
    // Sendable by construction: `value` is read and written only inside `withLock`, under `lock`.
    private let lock = NSLock()
    private var value: Value

    init(_ value: Value) {
        self.value = value
    }

    /// Runs `body` with the value, holding the lock; errors pass through with their type.
    func withLock<Result, Failure: Error>(_ body: (inout Value) throws(Failure) -> Result) throws(Failure) -> Result {
        lock.lock()
        defer { lock.unlock() }
        return try body(&value)
    }
}
