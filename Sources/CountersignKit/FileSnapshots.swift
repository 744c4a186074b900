import Foundation
#if canImport(Darwin)
import Darwin
#elseif canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// What `FileKeyStore` read and decoded from each file, kept while the file stays as it was.
///
/// Every use looks at the file first (`stat`: device, inode, size, modification and change
/// times) and returns the kept value only when all of them match what they were when it was
/// read. A file deleted, replaced (the store writes a new file and renames it over the old, so
/// the inode changes) or edited in place (its change time moves) is read again, or reported
/// missing: a key deleted on disk is never used. What is saved is the read, the parse, and for
/// a P-256 key the public key's computation, on every approval.
final class FileSnapshots: Sendable {
    /// At most this many files are kept; past it the cache starts again empty.
    static let capacity = 256

    struct Identity: Equatable, Sendable {
        let device: UInt64
        let inode: UInt64
        let size: Int64
        let modified: timespec
        let changed: timespec

        static func == (lhs: Identity, rhs: Identity) -> Bool {
            lhs.device == rhs.device && lhs.inode == rhs.inode && lhs.size == rhs.size
                && lhs.modified.tv_sec == rhs.modified.tv_sec && lhs.modified.tv_nsec == rhs.modified.tv_nsec
                && lhs.changed.tv_sec == rhs.changed.tv_sec && lhs.changed.tv_nsec == rhs.changed.tv_nsec
        }
    }

    private struct Entry: @unchecked Sendable {
        let identity: Identity
        /// The decoded value: only ever a `Sendable` one (`value(at:…)` takes `T: Sendable`).
        let value: Any
    }

    private let entries = Locked<[String: Entry]>([:])

    /// The file's identity now; nil when there is no file at `path`.
    static func identity(of path: String) -> Identity? {
        var status = stat()
        guard stat(path, &status) == 0 else { return nil }
        #if canImport(Darwin)
        let modified = status.st_mtimespec, changed = status.st_ctimespec
        #else
        let modified = status.st_mtim, changed = status.st_ctim
        #endif
        return Identity(device: UInt64(status.st_dev), inode: UInt64(status.st_ino), size: Int64(status.st_size),
                        modified: modified, changed: changed)
    }

    /// The value decoded from the file at `path`: kept from an earlier read while the file is
    /// unchanged, else read with `read` and decoded with `decode`, and kept. Nil when there is
    /// no file.
    func value<T: Sendable>(
        at path: String, read: (String) throws(CountersignError) -> Data, decode: (Data) throws(CountersignError) -> T
    ) throws(CountersignError) -> T? {
        guard let before = Self.identity(of: path) else {
            forget(path)
            return nil
        }
        if let kept = entries.withLock({ $0[path] }), kept.identity == before, let value = kept.value as? T {
            return value
        }
        let value = try decode(try read(path))
        // Kept only if the file did not change while it was read.
        if Self.identity(of: path) == before {
            entries.withLock { entries in
                if entries.count >= Self.capacity { entries.removeAll() }
                entries[path] = Entry(identity: before, value: value)
            }
        }
        return value
    }

    /// Drops what was kept for `path`, or for every file under it when it is a directory.
    func forget(_ path: String) {
        entries.withLock { entries in
            entries[path] = nil
            let prefix = path.hasSuffix("/") ? path : path + "/"
            for key in entries.keys where key.hasPrefix(prefix) { entries[key] = nil }
        }
    }
}
