#if canImport(Glibc)
import Glibc
#endif
import Foundation

/// glibc's allocator gives threads arenas of their own, up to eight per core by default, and an
/// arena keeps the memory freed into it for its own thread's later use. The server's threads are
/// few (its event loops and the task pool, about one per core each), so `serve` allows one arena
/// per core: about 1 MiB less resident with 10,000 requests pending and no change in loops per
/// second (BENCHMARKS.md, "Memory: the binary's link").
enum MallocArenas {
    /// Limits the arenas to the number of cores, unless the operator chose a limit already
    /// (`MALLOC_ARENA_MAX`, or `glibc.malloc.arena_max` in `GLIBC_TUNABLES`). Only arenas made
    /// afterwards are affected, so it is called before the server starts its threads.
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
