#if canImport(Glibc)
@preconcurrency import Glibc
#elseif canImport(Darwin)
@preconcurrency import Darwin
#endif

/// Standard output's C stream, which `print` writes into. Swift 6 refuses to name the C global
/// `stdout` outside a `@preconcurrency` import, and a file that imports Foundation imports the C
/// library without it; so the stream is reached from here alone. Only this stream is flushed:
/// `fflush(nil)` would also take the lock of standard input, and wait for as long as another
/// thread is blocked reading it.
enum StandardOutput {
    static func flush() {
        fflush(stdout)
    }

    /// One byte into the same buffer as `print`, so that a character of several bytes written a
    /// byte at a time reaches the terminal whole.
    static func put(_ byte: UInt8) {
        fputc(Int32(byte), stdout)
    }
}
