import Foundation

/// Where the build that made this test bundle put its products: the `countersign` and
/// `countersign-bench` executables and the compiled modules. That is `.build/debug` under `swift test` and `.build/release`
/// under `swift test -c release`, so it is found from the running test bundle, not assumed.
enum BuildProducts {
    static let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent()
    /// `Tests/CountersignServerTests`, whose `Fixtures/` the tests read.
    static let serverTests = packageRoot.appending(path: "Tests/CountersignServerTests")

    /// The products directory, or nil when none of the candidates holds a `countersign` executable.
    static let directory: URL? = {
        var candidates: [URL] = []
        // Linux: the test bundle is the running executable, written beside the other products.
        if let path = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe") {
            candidates.append(URL(fileURLWithPath: path).deletingLastPathComponent())
        }
        // Apple platforms: a loaded `.xctest` bundle sits in the products directory.
        for bundle in Bundle.allBundles where bundle.bundleURL.pathExtension == "xctest" {
            candidates.append(bundle.bundleURL.deletingLastPathComponent())
        }
        // Only when the bundle's own directory is unknown: a build of another configuration
        // would be tested in place of this one's.
        if candidates.isEmpty { candidates.append(packageRoot.appendingPathComponent(".build/debug")) }
        return candidates.first {
            FileManager.default.isExecutableFile(atPath: $0.appendingPathComponent("countersign").path)
        }
    }()

    /// The `countersign-bench` executable beside `countersign`, or nil when the build did not make it.
    static let benchExecutable: URL? = directory.map { $0.appendingPathComponent("countersign-bench") }
        .flatMap { FileManager.default.isExecutableFile(atPath: $0.path) ? $0 : nil }
}
