import CountersignCore
import Crypto
import Foundation
import Testing
@testable import CountersignKit

@Suite struct FileKeyStoreTests {
    static func record(id: String, enrolledAt: Date = Date(timeIntervalSince1970: 1_790_000_000)) -> Enrollment {
        Enrollment(
            id: id, server: URL(string: "https://auth.example.com/t/acme")!, tenant: "acme", deviceID: "dev_1",
            user: EnrolledUser(id: "usr_1", username: "ada", displayName: "Ada Lovelace"), deviceName: "Ada's laptop",
            platform: .linux, serverKey: ECPublicJWK(P256.Signing.PrivateKey().publicKey), enrolledAt: enrolledAt)
    }

    @Test func storedSigningKeySignsForThePublicKeyItWasCreatedWith() async throws {
        try await withTemporaryRoot { root in
            let store = FileKeyStore(root: root)
            let id = UUID().uuidString
            let created = try await store.createKeys(for: id)
            let loaded = try await store.keys(for: id)

            let message = Data("htm=GET".utf8)
            let signature = try P256.Signing.ECDSASignature(rawRepresentation: loaded.signer.signature(for: message))
            #expect(created.signer.publicKey.isValidSignature(signature, for: message))
            #expect(loaded.signer.publicKey.rawRepresentation == created.signer.publicKey.rawRepresentation)
        }
    }

    @Test func storedAgreementKeyOpensAnHPKEMessageSealedToIt() async throws {
        try await withTemporaryRoot { root in
            let store = FileKeyStore(root: root)
            let id = UUID().uuidString
            let created = try await store.createKeys(for: id)
            let info = Data("countersign request details".utf8)
            let aad = Data("req_123".utf8)
            var sender = try HPKE.Sender(
                recipientKey: created.agreement.publicKey, ciphersuite: HPKESuite.countersign, info: info)
            let ciphertext = try sender.seal(Data("Sign in to Payroll from Firefox".utf8), authenticating: aad)

            let loaded = try await store.keys(for: id)
            let opened = try loaded.agreement.open(
                ciphertext: ciphertext, encapsulatedKey: sender.encapsulatedKey, info: info, authenticating: aad)
            #expect(String(decoding: opened, as: UTF8.self) == "Sign in to Payroll from Firefox")
        }
    }

    @Test func agreementKeyRefusesAMessageWithOtherAuthenticatedData() async throws {
        try await withTemporaryRoot { root in
            let keys = try await FileKeyStore(root: root).createKeys(for: UUID().uuidString)
            var sender = try HPKE.Sender(recipientKey: keys.agreement.publicKey, ciphersuite: HPKESuite.countersign, info: Data())
            let ciphertext = try sender.seal(Data("details".utf8), authenticating: Data("req_1".utf8))
            #expect(throws: (any Error).self) {
                try keys.agreement.open(
                    ciphertext: ciphertext, encapsulatedKey: sender.encapsulatedKey, info: Data(),
                    authenticating: Data("req_2".utf8))
            }
        }
    }

    @Test func savedRecordIsListed() async throws {
        try await withTemporaryRoot { root in
            let store = FileKeyStore(root: root)
            let record = Self.record(id: UUID().uuidString)
            _ = try await store.createKeys(for: record.id)
            try await store.save(record)
            #expect(try await store.enrollments() == [record])
        }
    }

    @Test func oneRecordIsReadByItsID() async throws {
        try await withTemporaryRoot { root in
            let store = FileKeyStore(root: root)
            let first = Self.record(id: UUID().uuidString)
            let second = Self.record(id: UUID().uuidString)
            for record in [first, second] {
                _ = try await store.createKeys(for: record.id)
                try await store.save(record)
            }
            #expect(try await store.enrollment(second.id) == second)
            #expect(try await store.enrollment(first.id) == first)
            // Keys without a record, an unknown id, and a path are all not enrolled.
            let unfinished = UUID().uuidString
            _ = try await store.createKeys(for: unfinished)
            for id in [unfinished, UUID().uuidString, "../\(first.id)"] {
                await #expect(throws: CountersignError.notEnrolled) { try await store.enrollment(id) }
            }
        }
    }

    @Test func savingAgainReplacesTheRecord() async throws {
        try await withTemporaryRoot { root in
            let store = FileKeyStore(root: root)
            var record = Self.record(id: UUID().uuidString)
            _ = try await store.createKeys(for: record.id)
            try await store.save(record)
            record.deviceName = "Renamed"
            try await store.save(record)
            #expect(try await store.enrollments() == [record])
        }
    }

    @Test func enrollmentsAreListedOldestFirst() async throws {
        try await withTemporaryRoot { root in
            let store = FileKeyStore(root: root)
            let newer = Self.record(id: UUID().uuidString, enrolledAt: Date(timeIntervalSince1970: 1_790_000_100))
            let older = Self.record(id: UUID().uuidString, enrolledAt: Date(timeIntervalSince1970: 1_790_000_000))
            for record in [newer, older] {
                _ = try await store.createKeys(for: record.id)
                try await store.save(record)
            }
            #expect(try await store.enrollments().map(\.id) == [older.id, newer.id])
        }
    }

    @Test func keysWithoutARecordAreNotListed() async throws {
        try await withTemporaryRoot { root in
            let store = FileKeyStore(root: root)
            _ = try await store.createKeys(for: UUID().uuidString)
            #expect(try await store.enrollments().isEmpty)
        }
    }

    @Test func aMissingRootHasNoEnrollments() async throws {
        try await withTemporaryRoot { root in
            let listed = try await FileKeyStore(root: root).enrollments()
            #expect(listed.isEmpty)
            #expect(!FileManager.default.fileExists(atPath: root.path))
        }
    }

    @Test func directoriesAreOwnerOnlyAndFilesOwnerReadWrite() async throws {
        try await withTemporaryRoot { root in
            let store = FileKeyStore(root: root)
            let record = Self.record(id: UUID().uuidString)
            _ = try await store.createKeys(for: record.id)
            try await store.save(record)

            let directory = root.appendingPathComponent(record.id)
            #expect(try permissions(of: root) == 0o700)
            #expect(try permissions(of: directory) == 0o700)
            for file in ["signing-key", "agreement-key", "enrollment.json"] {
                #expect(try permissions(of: directory.appendingPathComponent(file)) == 0o600, "\(file)")
            }
            #expect(contents(of: root) == [
                record.id, "\(record.id)/agreement-key", "\(record.id)/enrollment.json", "\(record.id)/signing-key",
            ])
        }
    }

    @Test func creatingKeysTwiceForOneEnrollmentIsRefusedAndKeepsTheFirst() async throws {
        try await withTemporaryRoot { root in
            let store = FileKeyStore(root: root)
            let id = UUID().uuidString
            let first = try await store.createKeys(for: id)
            let error = await #expect(throws: CountersignError.self) { try await store.createKeys(for: id) }
            #expect(error.map(Self.isKeyStoreFailure) == true)
            #expect(try await store.keys(for: id).signer.publicKey.rawRepresentation == first.signer.publicKey.rawRepresentation)
        }
    }

    @Test func deleteRemovesKeysAndRecord() async throws {
        try await withTemporaryRoot { root in
            let store = FileKeyStore(root: root)
            let record = Self.record(id: UUID().uuidString)
            _ = try await store.createKeys(for: record.id)
            try await store.save(record)

            try await store.delete(record.id)

            #expect(contents(of: root).isEmpty)
            #expect(try await store.enrollments().isEmpty)
            await #expect(throws: CountersignError.notEnrolled) { try await store.keys(for: record.id) }
        }
    }

    enum Operation: String, CaseIterable, Sendable {
        case keys, save, delete
    }

    @Test(arguments: Operation.allCases)
    func aMissingEnrollmentIsNotEnrolled(_ operation: Operation) async throws {
        try await withTemporaryRoot { root in
            let store = FileKeyStore(root: root)
            _ = try await store.createKeys(for: UUID().uuidString)
            let missing = UUID().uuidString
            await #expect(throws: CountersignError.notEnrolled) {
                switch operation {
                case .keys: _ = try await store.keys(for: missing)
                case .save: try await store.save(Self.record(id: missing))
                case .delete: try await store.delete(missing)
                }
            }
        }
    }

    @Test(arguments: ["..", "../outside", "/etc", "", "not-a-uuid"])
    func anIDThatIsNotAUUIDNamesNothing(_ id: String) async throws {
        try await withTemporaryRoot { root in
            let store = FileKeyStore(root: root)
            _ = try await store.createKeys(for: UUID().uuidString)
            await #expect(throws: CountersignError.notEnrolled) { try await store.delete(id) }
            let error = await #expect(throws: CountersignError.self) { try await store.createKeys(for: id) }
            #expect(error.map(Self.isKeyStoreFailure) == true)
            #expect(contents(of: root).count == 3)
        }
    }

    @Test(arguments: ["signing-key", "agreement-key"])
    func aCorruptKeyFileIsAKeyStoreFailure(_ file: String) async throws {
        try await withTemporaryRoot { root in
            let store = FileKeyStore(root: root)
            let id = UUID().uuidString
            _ = try await store.createKeys(for: id)
            try Data("not a key".utf8).write(to: root.appendingPathComponent(id).appendingPathComponent(file))

            let error = await #expect(throws: CountersignError.self) { try await store.keys(for: id) }
            #expect(error.map(Self.isKeyStoreFailure) == true)
        }
    }

    @Test func aMissingKeyFileIsAKeyStoreFailure() async throws {
        try await withTemporaryRoot { root in
            let store = FileKeyStore(root: root)
            let id = UUID().uuidString
            _ = try await store.createKeys(for: id)
            try FileManager.default.removeItem(at: root.appendingPathComponent(id).appendingPathComponent("signing-key"))

            let error = await #expect(throws: CountersignError.self) { try await store.keys(for: id) }
            #expect(error.map(Self.isKeyStoreFailure) == true)
        }
    }

    @Test func aCorruptRecordIsAKeyStoreFailure() async throws {
        try await withTemporaryRoot { root in
            let store = FileKeyStore(root: root)
            let record = Self.record(id: UUID().uuidString)
            _ = try await store.createKeys(for: record.id)
            try await store.save(record)
            try Data("{\"id\":".utf8).write(
                to: root.appendingPathComponent(record.id).appendingPathComponent("enrollment.json"))

            let error = await #expect(throws: CountersignError.self) { try await store.enrollments() }
            #expect(error.map(Self.isKeyStoreFailure) == true)
            let one = await #expect(throws: CountersignError.self) { try await store.enrollment(record.id) }
            #expect(one.map(Self.isKeyStoreFailure) == true)
        }
    }

    // MARK: - What is kept in memory follows the files

    @Test func aKeyDeletedOnDiskAfterUseIsNeverUsedAgain() async throws {
        try await withTemporaryRoot { root in
            let store = FileKeyStore(root: root)
            let id = UUID().uuidString
            _ = try await store.createKeys(for: id)
            _ = try await store.keys(for: id)  // read once, and kept
            try FileManager.default.removeItem(at: root.appendingPathComponent(id).appendingPathComponent("signing-key"))

            let error = await #expect(throws: CountersignError.self) { try await store.keys(for: id) }
            #expect(error.map(Self.isKeyStoreFailure) == true)
        }
    }

    @Test func aKeyReplacedOnDiskIsReadAgain() async throws {
        try await withTemporaryRoot { root in
            let store = FileKeyStore(root: root)
            let id = UUID().uuidString
            let created = try await store.createKeys(for: id)
            #expect(try await store.keys(for: id).signer.publicKey.rawRepresentation == created.signer.publicKey.rawRepresentation)
            let replacement = P256.Signing.PrivateKey()
            // Written in place, same size: only the file's times tell the change.
            let handle = try FileHandle(forWritingTo: root.appendingPathComponent(id).appendingPathComponent("signing-key"))
            try handle.write(contentsOf: replacement.rawRepresentation)
            try handle.close()

            #expect(try await store.keys(for: id).signer.publicKey.rawRepresentation == replacement.publicKey.rawRepresentation)
        }
    }

    @Test func factorMaterialAndRecordsFollowTheirFiles() async throws {
        try await withTemporaryRoot { root in
            let store = FileKeyStore(root: root)
            let record = Self.record(id: UUID().uuidString)
            _ = try await store.createKeys(for: record.id)
            try await store.save(record)
            try await store.setFactorMaterial(Data([1, 2, 3]), as: .pinSalt, for: record.id)
            #expect(try await store.factorMaterial(.pinSalt, for: record.id) == Data([1, 2, 3]))
            #expect(try await store.enrollment(record.id).deviceName == "Ada's laptop")

            let directory = root.appendingPathComponent(record.id)
            try FileManager.default.removeItem(at: directory.appendingPathComponent("pin-salt"))
            #expect(try await store.factorMaterial(.pinSalt, for: record.id) == nil)
            try await store.setFactorMaterial(Data([4, 5]), as: .pinSalt, for: record.id)
            #expect(try await store.factorMaterial(.pinSalt, for: record.id) == Data([4, 5]))

            var renamed = record
            renamed.deviceName = "Ada's desk"
            try await store.save(renamed)
            #expect(try await store.enrollment(record.id).deviceName == "Ada's desk")
            #expect(try await store.enrollments().map(\.deviceName) == ["Ada's desk"])
            try await store.delete(record.id)
            await #expect(throws: CountersignError.notEnrolled) { try await store.enrollment(record.id) }
        }
    }

    static func isKeyStoreFailure(_ error: CountersignError) -> Bool {
        if case .keyStore = error { return true }
        return false
    }
}
