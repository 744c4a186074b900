import CountersignCore
import Crypto
#if canImport(CryptoKit)
// CryptoKit does not declare its types Sendable in the iOS 17 and 18 SDKs (docs/sdk.md).
@preconcurrency import CryptoKit
#endif
import Foundation

/// A `KeyStore` in plain files, for Linux and for any platform without a better place:
///
/// ```
/// <root>/                       0700
///   <enrollment id>/            0700
///     signing-key               0600  P-256 signing key, 32 raw bytes
///     agreement-key             0600  P-256 HPKE key, 32 raw bytes
///     enrollment.json           0600  the `Enrollment` record
///     pin-salt                  0600  `FactorMaterial`, each when the enrollment has it
///     totp-seed                 0600
///     biometric-key             0600
///     xwing-seed                0600
/// ```
///
/// The keys are software keys protected only by file permissions: anyone who can read the
/// files as this user can act as the device. On Apple platforms prefer `KeychainKeyStore`.
///
/// What it reads is kept decoded in memory while each file stays as it was (`FileSnapshots`,
/// checked with `stat` on every use), so an approval does not read and parse every file
/// again; a file deleted or replaced on disk is never served from memory.
///
/// ```swift
/// let store = FileKeyStore(root: URL(filePath: NSHomeDirectory()).appending(path: ".countersign"))
/// let authenticator = CountersignAuthenticator(keyStore: store)
/// ```
public struct FileKeyStore: KeyStore {
    /// The directory holding one directory per enrollment; created with mode 0700 if missing.
    public let root: URL

    private let snapshots = FileSnapshots()

    public init(root: URL) {
        self.root = root
    }

    private static let signingKeyFile = "signing-key"
    private static let agreementKeyFile = "agreement-key"
    private static let recordFile = "enrollment.json"

    public func createKeys(for enrollmentID: String) async throws(CountersignError) -> DeviceKeys {
        guard Self.isEnrollmentID(enrollmentID) else {
            throw .keyStore("enrollment ids must be UUIDs")
        }
        try makeRoot()
        let directory = directoryPath(for: enrollmentID)
        guard try PrivateFiles.makeDirectory(atPath: directory) else {
            throw .keyStore("keys for enrollment \(enrollmentID) already exist")
        }
        let signing = P256.Signing.PrivateKey()
        let agreement = P256.KeyAgreement.PrivateKey()
        do {
            try PrivateFiles.write(signing.rawRepresentation, toPath: directory + "/" + Self.signingKeyFile)
            try PrivateFiles.write(agreement.rawRepresentation, toPath: directory + "/" + Self.agreementKeyFile)
        } catch {
            try? FileManager.default.removeItem(atPath: directory)
            throw error
        }
        return DeviceKeys(signer: signing, agreement: agreement)
    }

    public func keys(for enrollmentID: String) async throws(CountersignError) -> DeviceKeys {
        let directory = try existingDirectory(for: enrollmentID)
        let signing = try kept(directory + "/" + Self.signingKeyFile, what: "signing key", of: enrollmentID) {
            (bytes) throws(CountersignError) in
            guard let key = try? P256.Signing.PrivateKey(rawRepresentation: bytes) else {
                throw .keyStore("the signing key of enrollment \(enrollmentID) is corrupt")
            }
            return key
        }
        let agreement = try kept(directory + "/" + Self.agreementKeyFile, what: "agreement key", of: enrollmentID) {
            (bytes) throws(CountersignError) in
            guard let key = try? P256.KeyAgreement.PrivateKey(rawRepresentation: bytes) else {
                throw .keyStore("the agreement key of enrollment \(enrollmentID) is corrupt")
            }
            return key
        }
        return DeviceKeys(signer: signing, agreement: agreement)
    }

    public func save(_ enrollment: Enrollment) async throws(CountersignError) {
        let directory = try existingDirectory(for: enrollment.id)
        let record: Data
        do { record = try Timestamps.encoder().encode(enrollment) } catch {
            throw .keyStore("cannot encode the record of enrollment \(enrollment.id)")
        }
        defer { snapshots.forget(directory + "/" + Self.recordFile) }
        try PrivateFiles.write(record, toPath: directory + "/" + Self.recordFile)
    }

    /// Every enrollment with a record, oldest first. One corrupt record fails the whole listing
    /// rather than hiding an enrollment the user still has.
    public func enrollments() async throws(CountersignError) -> [Enrollment] {
        guard FileManager.default.fileExists(atPath: root.path) else { return [] }
        let names: [String]
        do { names = try FileManager.default.contentsOfDirectory(atPath: root.path) } catch {
            throw .keyStore("cannot list \(root.path): \(error.localizedDescription)")
        }
        var found: [Enrollment] = []
        for name in names where Self.isEnrollmentID(name) {
            guard let enrollment = try record(at: directoryPath(for: name) + "/" + Self.recordFile, of: name) else { continue }
            found.append(enrollment)
        }
        return found.sorted { ($0.enrolledAt, $0.id) < ($1.enrolledAt, $1.id) }
    }

    /// One record, read directly rather than found among all of them.
    public func enrollment(_ enrollmentID: String) async throws(CountersignError) -> Enrollment {
        guard let enrollment = try record(at: try existingDirectory(for: enrollmentID) + "/" + Self.recordFile, of: enrollmentID)
        else { throw .notEnrolled }
        return enrollment
    }

    public func delete(_ enrollmentID: String) async throws(CountersignError) {
        let directory = try existingDirectory(for: enrollmentID)
        defer { snapshots.forget(directory) }
        do { try FileManager.default.removeItem(atPath: directory) } catch {
            throw .keyStore("cannot delete enrollment \(enrollmentID): \(error.localizedDescription)")
        }
    }

    public func factorMaterial(_ kind: FactorMaterial, for enrollmentID: String) async throws(CountersignError) -> Data? {
        let path = try existingDirectory(for: enrollmentID) + "/" + kind.rawValue
        return try snapshots.value(at: path, read: { (path) throws(CountersignError) in
            try read(path, what: kind.rawValue, of: enrollmentID)
        }, decode: { $0 })
    }

    public func setFactorMaterial(
        _ material: Data?, as kind: FactorMaterial, for enrollmentID: String
    ) async throws(CountersignError) {
        let path = try existingDirectory(for: enrollmentID) + "/" + kind.rawValue
        defer { snapshots.forget(path) }
        guard let material else {
            guard FileManager.default.fileExists(atPath: path) else { return }
            do { try FileManager.default.removeItem(atPath: path) } catch {
                throw .keyStore("cannot delete the \(kind.rawValue) of enrollment \(enrollmentID): \(error.localizedDescription)")
            }
            return
        }
        try PrivateFiles.write(material, toPath: path)
    }

    // MARK: - Paths

    /// Only UUIDs name enrollment directories, so no id can reach outside the root.
    private static func isEnrollmentID(_ text: String) -> Bool {
        UUID(uuidString: text) != nil
    }

    private func directoryPath(for enrollmentID: String) -> String {
        root.appendingPathComponent(enrollmentID, isDirectory: true).path
    }

    private func existingDirectory(for enrollmentID: String) throws(CountersignError) -> String {
        guard Self.isEnrollmentID(enrollmentID) else { throw .notEnrolled }
        let path = directoryPath(for: enrollmentID)
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), isDirectory.boolValue else {
            throw .notEnrolled
        }
        return path
    }

    private func makeRoot() throws(CountersignError) {
        let parent = root.deletingLastPathComponent().path
        do { try FileManager.default.createDirectory(atPath: parent, withIntermediateDirectories: true) } catch {
            throw .keyStore("cannot create \(parent): \(error.localizedDescription)")
        }
        try PrivateFiles.makeDirectory(atPath: root.path)
    }

    /// The enrollment record at `path`, decoded (and kept while the file is unchanged); nil
    /// when there is none.
    private func record(at path: String, of enrollmentID: String) throws(CountersignError) -> Enrollment? {
        try snapshots.value(at: path, read: { (path) throws(CountersignError) in
            try read(path, what: "record", of: enrollmentID)
        }, decode: { (data) throws(CountersignError) in
            guard let enrollment = try? Timestamps.decoder().decode(Enrollment.self, from: data), enrollment.id == enrollmentID else {
                throw .keyStore("the record of enrollment \(enrollmentID) is corrupt")
            }
            return enrollment
        })
    }

    /// The key in the file at `path`, decoded (and kept while the file is unchanged).
    private func kept<Key: Sendable>(
        _ path: String, what: String, of enrollmentID: String, decode: (Data) throws(CountersignError) -> Key
    ) throws(CountersignError) -> Key {
        guard let key = try snapshots.value(at: path, read: { (path) throws(CountersignError) in
            try read(path, what: what, of: enrollmentID)
        }, decode: decode) else { throw .keyStore("cannot read the \(what) of enrollment \(enrollmentID)") }
        return key
    }

    private func read(_ path: String, what: String, of enrollmentID: String) throws(CountersignError) -> Data {
        do { return try Data(contentsOf: URL(fileURLWithPath: path)) } catch {
            throw .keyStore("cannot read the \(what) of enrollment \(enrollmentID)")
        }
    }
}
