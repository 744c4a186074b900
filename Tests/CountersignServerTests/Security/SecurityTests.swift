import Foundation
import Testing
@testable import CountersignServer

@Suite("Secrets at rest")
struct SecurityTests {
    private func scratchDirectory() throws -> URL {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("countersign-key-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        return directory
    }

    @Test func firstLoadCreatesAKeyFileReadableByTheOwnerOnly() throws {
        let file = try scratchDirectory().appendingPathComponent("master.key")
        let (created, wasCreated) = try MasterKey.load(environmentValue: nil, file: file)
        #expect(wasCreated)
        let permissions = try FileManager.default.attributesOfItem(atPath: file.path)[.posixPermissions] as? NSNumber
        #expect(permissions?.intValue == 0o600)
        let (loaded, createdAgain) = try MasterKey.load(environmentValue: nil, file: file)
        #expect(!createdAgain)
        #expect(loaded.identifier == created.identifier)
    }

    @Test func aKeyFileReadableByOthersIsRefused() throws {
        let file = try scratchDirectory().appendingPathComponent("master.key")
        _ = try MasterKey.load(environmentValue: nil, file: file)
        try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: file.path)
        #expect(throws: MasterKeyError.insecureFile(file.path, 0o644)) {
            try MasterKey.load(environmentValue: nil, file: file)
        }
    }

    @Test("the environment variable wins over the file; malformed values are refused",
          arguments: [("c2hvcnQ=", MasterKeyError.wrongLength(5)), ("not base64!", MasterKeyError.notBase64)])
    func environmentKey(value: String, error: MasterKeyError) throws {
        let file = try scratchDirectory().appendingPathComponent("master.key")
        #expect(throws: error) { try MasterKey.load(environmentValue: value, file: file) }
        let good = Data(repeating: 7, count: 32).base64EncodedString()
        let (key, created) = try MasterKey.load(environmentValue: good, file: file)
        #expect(!created)
        #expect(!FileManager.default.fileExists(atPath: file.path))
        #expect(try MasterKey(encoded: good).identifier == key.identifier)
    }

    @Test func sealedValuesOpenOnlyWithTheirKeyAndContext() throws {
        let sealer = SecretSealer(masterKey: .generate())
        let sealed = try sealer.seal(Data("secret".utf8), context: "tenant-signing-key:ten_a")
        #expect(try sealer.open(sealed, context: "tenant-signing-key:ten_a") == Data("secret".utf8))
        #expect(throws: SealingError.cannotOpen("tenant-signing-key:ten_b")) {
            try sealer.open(sealed, context: "tenant-signing-key:ten_b")
        }
        #expect(throws: SealingError.cannotOpen("tenant-signing-key:ten_a")) {
            try SecretSealer(masterKey: .generate()).open(sealed, context: "tenant-signing-key:ten_a")
        }
        var tampered = sealed
        tampered[tampered.count - 1] ^= 1
        #expect(throws: SealingError.cannotOpen("tenant-signing-key:ten_a")) {
            try sealer.open(tampered, context: "tenant-signing-key:ten_a")
        }
        #expect(!sealed.contains(Data("secret".utf8)))
    }

    @Test func secretsAreComparedByHash() {
        let secret = Secrets.generate(prefix: "css_")
        #expect(secret.hasPrefix("css_") && secret.count == 4 + 43)
        #expect(Secrets.matches(secret, storedHash: Secrets.hash(secret)))
        #expect(!Secrets.matches(secret + "x", storedHash: Secrets.hash(secret)))
        #expect(!Secrets.constantTimeEqual(Data([1, 2]), Data([1, 2, 3])))
    }

    @Test func identifiersSortByCreationTime() {
        let early = Identifier.make("usr", at: Date(timeIntervalSince1970: 1_700_000_000))
        let late = Identifier.make("usr", at: Date(timeIntervalSince1970: 1_700_000_000.002))
        #expect(early.count == 4 + 26)
        #expect(early < late)
        let now = Date()
        let burst = (0..<100).map { _ in Identifier.make("usr", at: now) }
        #expect(burst == burst.sorted())
        #expect(Set(burst).count == burst.count)
    }
}
