import Foundation
import Testing

/// `Scripts/build-ios` compiles the SDK, its dependencies, the reference authenticator app and
/// the documentation's Apple-only examples for `arm64-apple-ios` against the iOS SDK in `COUNTERSIGN_IOS_SDK`.
/// No iOS SDK can be fetched in CI, so there the compile is skipped and says so; run it wherever
/// one is at hand (docs/sdk.md, "Building for iOS").
@Suite("The SDK built for iOS")
struct IOSBuildTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()
    static let script = root.appending(path: "Scripts/build-ios")
    static let sdk = ProcessInfo.processInfo.environment["COUNTERSIGN_IOS_SDK"].flatMap { $0.isEmpty ? nil : $0 }

    struct Run {
        let status: Int32
        let output: String
    }

    /// Runs the script with `environment` changed as given (nil removes a variable).
    static func run(_ changes: [String: String?]) throws -> Run {
        var environment = ProcessInfo.processInfo.environment
        for (name, value) in changes { environment[name] = value }
        let process = Process()
        process.executableURL = script
        process.environment = environment
        process.currentDirectoryURL = root
        let output = Pipe()
        process.standardOutput = output
        process.standardError = output
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return Run(status: process.terminationStatus, output: String(decoding: data, as: UTF8.self))
    }

    @Test("without an iOS SDK the script says what it needs and exits 2")
    func withoutAnSDK() throws {
        let run = try Self.run(["COUNTERSIGN_IOS_SDK": nil])
        #expect(run.status == 2)
        #expect(run.output.contains("COUNTERSIGN_IOS_SDK is not set"))
        #expect(run.output.contains("iPhoneOS17.0.sdk"))
    }

    @Test("a folder that is not an iOS SDK is refused with exit 2")
    func notAnSDK() throws {
        let folder = FileManager.default.temporaryDirectory.appending(path: "countersign-not-an-sdk-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let run = try Self.run(["COUNTERSIGN_IOS_SDK": folder.path])
        #expect(run.status == 2)
        #expect(run.output.contains("is not an iPhoneOS SDK"))
    }

    @Test("an SDK older than iOS 17 is refused with exit 2: CryptoKit has HPKE from iOS 17")
    func olderSDK() throws {
        let folder = FileManager.default.temporaryDirectory.appending(path: "countersign-ios16-sdk-\(UUID().uuidString)")
        for part in ["usr/lib/swift", "System/Library/Frameworks"] {
            try FileManager.default.createDirectory(at: folder.appending(path: part), withIntermediateDirectories: true)
        }
        try Data(#"{"Version": "16.5"}"#.utf8).write(to: folder.appending(path: "SDKSettings.json"))
        defer { try? FileManager.default.removeItem(at: folder) }
        let run = try Self.run(["COUNTERSIGN_IOS_SDK": folder.path])
        #expect(run.status == 2)
        #expect(run.output.contains("needs iOS 17 or later"))
    }

    @Test(
        "the SDK, its dependencies, the reference app with its extension, and the Apple-only documentation examples compile for arm64-apple-ios",
        .enabled(if: sdk != nil, "COUNTERSIGN_IOS_SDK is not set: the iOS build is SKIPPED (CI has no iOS SDK; docs/sdk.md, \"Building for iOS\")"),
        .timeLimit(.minutes(30))
    )
    func compilesForIOS() throws {
        let build = Self.root.appending(path: ".build-ios")
        let run = try Self.run(["COUNTERSIGN_IOS_BUILD": build.path])
        #expect(run.status == 0, "Scripts/build-ios failed:\n\(run.output.suffix(20_000))")
        for module in ["CountersignCBOR", "CountersignCore", "CountersignWebAuthn", "CountersignKit", "AuthenticatorAppModel", "AuthenticatorApp", "NotificationService", "DocumentationExamples"] {
            #expect(run.output.contains("  \(module) "), "\(module) is not in the script's summary")
            let objects = (try? FileManager.default.contentsOfDirectory(atPath: build.appending(path: "objects/\(module)").path)) ?? []
            #expect(objects.contains { $0.hasSuffix(".o") }, "no objects for \(module)")
        }
    }
}
