import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The process's limit on open file descriptors (`RLIMIT_NOFILE`).
///
/// Many systems start services with a soft limit of 1,024 under a much higher hard limit. The
/// soft limit bounds how many connections the server can hold, so it is raised to the hard
/// limit at start, which needs no privilege.
enum DescriptorLimit {
    struct Raise: Equatable {
        /// The soft limit found at start.
        let before: Int
        /// The soft limit now.
        let after: Int
    }

    /// Raises the soft limit to the hard limit where the system allows it. Darwin refuses a soft
    /// limit above `OPEN_MAX` whatever the hard limit says, so the raise is bounded by it there.
    static func raiseToHardLimit() -> Raise {
        var limits = rlimit()
        guard getrlimit(resourceNumber, &limits) == 0 else { return Raise(before: current, after: current) }
        let before = Int(clamping: limits.rlim_cur)
        var target = limits.rlim_max
        #if canImport(Darwin)
        target = min(target, rlim_t(OPEN_MAX))
        #endif
        guard target > limits.rlim_cur else { return Raise(before: before, after: before) }
        var raised = limits
        raised.rlim_cur = target
        guard setrlimit(resourceNumber, &raised) == 0 else { return Raise(before: before, after: before) }
        return Raise(before: before, after: current)
    }

    /// The soft limit; 1,024 if it cannot be read.
    static var current: Int {
        var limits = rlimit()
        guard getrlimit(resourceNumber, &limits) == 0 else { return 1024 }
        return Int(clamping: limits.rlim_cur)
    }

    #if canImport(Glibc)
    private static let resourceNumber = __rlimit_resource_t(RLIMIT_NOFILE.rawValue)
    #else
    private static let resourceNumber = RLIMIT_NOFILE
    #endif
}
