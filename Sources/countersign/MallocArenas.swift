#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Logging

/// glibc's allocator gives threads arenas of their own, up to eight per core by default, and an
/// arena keeps the memory freed into it for its own thread's later use. The server's threads are
/// few (its event loops and the task pool, about one per core each), so `serve` allows one arena
/// per core: about 1 MiB less resident with 10,000 requests pending and no change in loops per
/// second (BENCHMARKS.md, "Memory: the binary's link").
enum MallocArenas {
    /// Limits the arenas to the number of cores, unless the operator chose a limit already
    /// (`MALLOC_ARENA_MAX`, or `glibc.malloc.arena_max` in `GLIBC_TUNABLES`). Arenas already
    /// made are kept, so it is called first thing in `main`, before any thread but the main one
    /// has allocated.
    static func limitToCores() {
        #if canImport(Glibc)
        let environment = ProcessInfo.processInfo.environment
        guard environment["MALLOC_ARENA_MAX"] == nil,
              environment["GLIBC_TUNABLES"]?.contains("glibc.malloc.arena_max") != true else { return }
        // `mallopt` is declared in <malloc.h>, which the Glibc module does not include.
        guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "mallopt") else { return }
        typealias Mallopt = @convention(c) (Int32, Int32) -> Int32
        let mallopt = unsafeBitCast(symbol, to: Mallopt.self)
        let arenaMax: Int32 = -8  // M_ARENA_MAX in <malloc.h>
        _ = mallopt(arenaMax, Int32(clamping: max(ProcessInfo.processInfo.activeProcessorCount, 1)))
        #endif
    }
}

/// glibc's allocator keeps memory freed into its arenas for later use, and gives back to the
/// system only what is free at the top of the main heap: after a burst of requests the heap
/// stays at its high-water mark (BENCHMARKS.md: a soak's heap grew in steps with each busier
/// moment, and 19 of a server's 36 MiB of anonymous memory after a burst was free memory kept
/// this way). `malloc_trim(0)` gives back every free page of every arena.
enum FreeMemory {
    /// The default seconds between returns of free memory to the system.
    static let defaultInterval = 30

    /// Gives back the allocator's free pages to the system; false where there is no
    /// `malloc_trim` (not glibc).
    @discardableResult
    static func returnToSystem() -> Bool {
        #if canImport(Glibc)
        // `malloc_trim` is declared in <malloc.h>, which the Glibc module does not include.
        guard let symbol = trim else { return false }
        typealias MallocTrim = @convention(c) (Int) -> Int32
        _ = unsafeBitCast(symbol, to: MallocTrim.self)(0)
        return true
        #else
        return false
        #endif
    }

    #if canImport(Glibc)
    private nonisolated(unsafe) static let trim = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "malloc_trim")
    #endif

    /// Returns free memory to the system every `seconds` until the task is cancelled; nothing
    /// for 0.
    static func returnEvery(_ seconds: Int, logger: Logger) -> Task<Void, Never>? {
        guard seconds > 0, returnToSystem() else { return nil }
        return Task.detached {
            let clock = ContinuousClock()
            while !Task.isCancelled {
                do { try await Task.sleep(for: .seconds(seconds)) } catch { return }
                let took = clock.measure { returnToSystem() }
                logger.trace("returned free memory to the system", metadata: ["took": "\(took)"])
            }
        }
    }
}
