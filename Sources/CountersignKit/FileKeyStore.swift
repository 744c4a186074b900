import CountersignCore
import Crypto
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
/// ```swift
/// let store = FileKeyStore(root: URL(filePath: NSHomeDirectory()).appending(path: ".countersign"))
/// let authenticator = CountersignAuthenticator(keyStore: store)
/// ```
public struct FileKeyStore: KeyStore {
    /// The directory holding one directory per enrollment; created with mode 0700 if missing.
    public let root: URL

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
        let signingBytes = try read(directory + "/" + Self.signingKeyFile, what: "signing key", of: enrollmentID)
        let agreementBytes = try read(directory + "/" + Self.agreementKeyFile, what: "agreement key", of: enrollmentID)
        guard let signing = try? P256.Signing.PrivateKey(rawRepresentation: signingBytes) else {
            throw .keyStore("the signing key of enrollment \(enrollmentID) is corrupt")
        }
        guard let agreement = try? P256.KeyAgreement.PrivateKey(rawRepresentation: agreementBytes) else {
            throw .keyStore("the agreement key of enrollment \(enrollmentID) is corrupt")
        }
        return DeviceKeys(signer: signing, agreement: agreement)
    }

    public func save(_ enrollment: Enrollment) async throws(CountersignError) {
        let directory = try existingDirectory(for: enrollment.id)
        let record: Data
        do { record = try Timestamps.encoder().encode(enrollment) } catch {
            throw .keyStore("cannot encode the record of enrollment \(enrollment.id)")
        }
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
            let path = directoryPath(for: name) + "/" + Self.recordFile
            guard FileManager.default.fileExists(atPath: path) else { continue }
            let data = try read(path, what: "record", of: name)
            guard let enrollment = try? Timestamps.decoder().decode(Enrollment.self, from: data), enrollment.id == name else {
                throw .keyStore("the record of enrollment \(name) is corrupt")
            }
            found.append(enrollment)
        }
        return found.sorted { ($0.enrolledAt, $0.id) < ($1.enrolledAt, $1.id) }
    }

    /// One record, read directly rather than found among all of them.
    public func enrollment(_ enrollmentID: String) async throws(CountersignError) -> Enrollment {
        let path = try existingDirectory(for: enrollmentID) + "/" + Self.recordFile
        guard FileManager.default.fileExists(atPath: path) else { throw .notEnrolled }
        let data = try read(path, what: "record", of: enrollmentID)
        guard let enrollment = try? Timestamps.decoder().decode(Enrollment.self, from: data), enrollment.id == enrollmentID else {
            throw .keyStore("the record of enrollment \(enrollmentID) is corrupt")
        }
        return enrollment
    }

    public func delete(_ enrollmentID: String) async throws(CountersignError) {
        let directory = try existingDirectory(for: enrollmentID)
        do { try FileManager.default.removeItem(atPath: directory) } catch {
            throw .keyStore("cannot delete enrollment \(enrollmentID): \(error.localizedDescription)")
        }
    }

    public func factorMaterial(_ kind: FactorMaterial, for enrollmentID: String) async throws(CountersignError) -> Data? {
        let path = try existingDirectory(for: enrollmentID) + "/" + kind.rawValue
        guard FileManager.default.fileExists(atPath: path) else { return nil }
        return try read(path, what: kind.rawValue, of: enrollmentID)
    }

    public func setFactorMaterial(
        _ material: Data?, as kind: FactorMaterial, for enrollmentID: String
    ) async throws(CountersignError) {
        let path = try existingDirectory(for: enrollmentID) + "/" + kind.rawValue
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

    private func read(_ path: String, what: String, of enrollmentID: String) throws(CountersignError) -> Data {
        do { return try Data(contentsOf: URL(fileURLWithPath: path)) } catch {
            throw .keyStore("cannot read the \(what) of enrollment \(enrollmentID)")
        }
    }
}
