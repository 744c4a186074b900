import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Files and directories that only the owner can read, created with that mode from the first
/// system call. `FileManager` creates with the default mode and narrows it afterwards, which
/// leaves a private key world-readable for a moment; these helpers never do.
enum PrivateFiles {
    static let directoryMode: mode_t = 0o700
    static let fileMode: mode_t = 0o600

    /// Creates a directory with mode 0700. Returns false if something already exists at `path`.
    @discardableResult
    static func makeDirectory(atPath path: String) throws(CountersignError) -> Bool {
        guard mkdir(path, directoryMode) == 0 else {
            if errno == EEXIST { return false }
            throw .keyStore("cannot create directory \(path): \(lastErrorText())")
        }
        // The umask can only have removed bits; restore the exact mode so it does not depend on it.
        guard chmod(path, directoryMode) == 0 else {
            throw .keyStore("cannot set the mode of \(path): \(lastErrorText())")
        }
        return true
    }

    /// Replaces the file at `path` with `data`, atomically: the bytes go to a new 0600 file in
    /// the same directory, which is then renamed over the old one. A reader sees the old file or
    /// the new one, never a half-written one, and never a file with a wider mode.
    static func write(_ data: Data, toPath path: String) throws(CountersignError) {
        let directory = (path as NSString).deletingLastPathComponent
        let temporary = directory + "/." + UUID().uuidString + ".partial"
        let descriptor = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, fileMode)
        guard descriptor >= 0 else {
            throw .keyStore("cannot create a file in \(directory): \(lastErrorText())")
        }
        guard fchmod(descriptor, fileMode) == 0 else {
            let failure = lastErrorText()
            close(descriptor)
            unlink(temporary)
            throw .keyStore("cannot set the mode of a file in \(directory): \(failure)")
        }
        let handle = FileHandle(fileDescriptor: descriptor, closeOnDealloc: false)
        do {
            try handle.write(contentsOf: data)
            try handle.synchronize()
        } catch {
            close(descriptor)
            unlink(temporary)
            throw .keyStore("cannot write \(path): \(error.localizedDescription)")
        }
        close(descriptor)
        guard rename(temporary, path) == 0 else {
            let failure = lastErrorText()
            unlink(temporary)
            throw .keyStore("cannot replace \(path): \(failure)")
        }
    }

    private static func lastErrorText() -> String {
        String(cString: strerror(errno))
    }
}
