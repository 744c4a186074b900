import Foundation

/// Runs `body` with a fresh directory path (not yet created) under the system's temporary
/// directory, and removes whatever is there afterwards.
func withTemporaryRoot<Result>(_ body: (URL) async throws -> Result) async throws -> Result {
    let parent = FileManager.default.temporaryDirectory
        .appendingPathComponent("countersign-kit-tests-\(UUID().uuidString)", isDirectory: true)
    defer { try? FileManager.default.removeItem(at: parent) }
    return try await body(parent.appendingPathComponent("store", isDirectory: true))
}

/// The POSIX permission bits of the file or directory at `url`.
func permissions(of url: URL) throws -> Int {
    let attributes = try FileManager.default.attributesOfItem(atPath: url.path)
    return (attributes[.posixPermissions] as? NSNumber)?.intValue ?? -1
}

/// Everything under `url`, recursively, as paths relative to it.
func contents(of url: URL) -> [String] {
    (FileManager.default.subpaths(atPath: url.path) ?? []).sorted()
}
