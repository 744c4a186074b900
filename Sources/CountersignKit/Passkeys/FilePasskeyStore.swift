import CountersignCore
import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A `PasskeyKeyStore` in plain files, for Linux and any platform without a better place:
///
/// ```
/// <root>/                          0700
///   <credential id>.json           0600  one per credential (id in base64url): the record
///                                        and its P-256 private key, 32 raw bytes
///   pin.json                       0600  the `PINPasskeyVerifier` record, once a PIN is set
///   .lock                          0600  taken while a counter or the set of credentials changes
/// ```
///
/// The keys are software keys protected only by file permissions: anyone who can read the files
/// as this user can sign in as any of these passkeys. On Apple platforms prefer
/// `KeychainPasskeyStore`.
///
/// Files are written as `PrivateFiles` writes them: 0600 from the first system call, replaced
/// atomically. A counter is changed under an exclusive `flock(2)` on `.lock`, so two processes
/// (or two authenticators in one) never hand out the same value.
///
/// ```swift
/// let store = FilePasskeyStore(root: URL(filePath: NSHomeDirectory()).appending(path: ".countersign/passkeys"))
/// let authenticator = PasskeyAuthenticator(store: store)
/// ```
public struct FilePasskeyStore: PasskeyKeyStore, PasskeyPINRecordStore {
    /// The directory of the credential files; created with mode 0700 when first needed.
    public let root: URL

    public init(root: URL) {
        self.root = root
    }

    private static let pinFile = "pin.json"
    private static let lockFile = ".lock"
    private static let recordSuffix = ".json"

    public func createCredential(
        id: [UInt8], rpID: String, user: PasskeyUser, kind: PasskeyKind, createdAt: Date
    ) async throws(PasskeyAuthenticatorError) -> PasskeyCredential {
        try makeRoot()
        let stored = StoredPasskey.software(id: id, rpID: rpID, user: user, kind: kind, createdAt: createdAt)
        try withLock { () throws(PasskeyAuthenticatorError) in
            guard !FileManager.default.fileExists(atPath: path(of: id)) else {
                throw .keyStore("a passkey with this credential ID already exists")
            }
            try write(stored.encoded(), to: path(of: id))
        }
        return try stored.credential()
    }

    /// One corrupt record fails the whole listing rather than hiding a passkey the user has.
    public func credentials(rpID: String?) async throws(PasskeyAuthenticatorError) -> [PasskeyCredential] {
        guard FileManager.default.fileExists(atPath: root.path) else { return [] }
        let names: [String]
        do { names = try FileManager.default.contentsOfDirectory(atPath: root.path) } catch {
            throw .keyStore("cannot list \(root.path): \(error.localizedDescription)")
        }
        var found: [PasskeyCredential] = []
        for name in names where Self.credentialID(ofFile: name) != nil {
            let credential = try read(root.appendingPathComponent(name).path).credential()
            if rpID == nil || credential.rpID == rpID { found.append(credential) }
        }
        return found.sorted { ($0.createdAt, Data($0.id).base64URLEncodedString) < ($1.createdAt, Data($1.id).base64URLEncodedString) }
    }

    public func signature(for message: [UInt8], credentialID: [UInt8]) async throws(PasskeyAuthenticatorError) -> [UInt8] {
        try existing(credentialID).softwareSignature(for: message)
    }

    public func incrementSignCount(credentialID: [UInt8]) async throws(PasskeyAuthenticatorError) -> UInt32 {
        try withLock { () throws(PasskeyAuthenticatorError) -> UInt32 in
            var stored = try existing(credentialID)
            let count = try stored.incrementSignCount()
            try write(stored.encoded(), to: path(of: credentialID))
            return count
        }
    }

    public func deleteCredential(id: [UInt8]) async throws(PasskeyAuthenticatorError) {
        try withLock { () throws(PasskeyAuthenticatorError) in
            guard FileManager.default.fileExists(atPath: path(of: id)) else { throw .noCredentials }
            guard unlink(path(of: id)) == 0 else { throw .keyStore("cannot delete a passkey: \(String(cString: strerror(errno)))") }
        }
    }

    public func pinRecord() async throws(PasskeyAuthenticatorError) -> Data? {
        let path = root.appendingPathComponent(Self.pinFile).path
        guard FileManager.default.fileExists(atPath: path) else { return nil }
        do { return try Data(contentsOf: URL(fileURLWithPath: path)) } catch { throw .keyStore("cannot read the passkey PIN record") }
    }

    public func setPINRecord(_ record: Data?) async throws(PasskeyAuthenticatorError) {
        let path = root.appendingPathComponent(Self.pinFile).path
        guard let record else {
            guard FileManager.default.fileExists(atPath: path) else { return }
            guard unlink(path) == 0 else { throw .keyStore("cannot delete the passkey PIN record") }
            return
        }
        try makeRoot()
        try write(record, to: path)
    }

    // MARK: - Files

    /// Only base64url names of at least 16 bytes are credential files, so no id reaches outside
    /// the root and `pin.json` is never taken for one.
    private static func credentialID(ofFile name: String) -> [UInt8]? {
        guard name.hasSuffix(recordSuffix), let id = Data(base64URLEncoded: name.dropLast(recordSuffix.count)),
              id.count >= 16 else { return nil }
        return Array(id)
    }

    private func path(of credentialID: [UInt8]) -> String {
        root.appendingPathComponent(Data(credentialID).base64URLEncodedString + Self.recordSuffix).path
    }

    private func existing(_ credentialID: [UInt8]) throws(PasskeyAuthenticatorError) -> StoredPasskey {
        let path = path(of: credentialID)
        guard FileManager.default.fileExists(atPath: path) else { throw .noCredentials }
        return try read(path)
    }

    private func read(_ path: String) throws(PasskeyAuthenticatorError) -> StoredPasskey {
        let data: Data
        do { data = try Data(contentsOf: URL(fileURLWithPath: path)) } catch { throw .keyStore("cannot read a passkey record") }
        return try StoredPasskey(decoding: data)
    }

    private func write(_ data: Data, to path: String) throws(PasskeyAuthenticatorError) {
        do { try PrivateFiles.write(data, toPath: path) } catch { throw .keyStore(Self.reason(error)) }
    }

    private static func reason(_ error: CountersignError) -> String {
        if case .keyStore(let text) = error { return text }
        return error.description
    }

    private func makeRoot() throws(PasskeyAuthenticatorError) {
        let parent = root.deletingLastPathComponent().path
        do { try FileManager.default.createDirectory(atPath: parent, withIntermediateDirectories: true) } catch {
            throw .keyStore("cannot create \(parent): \(error.localizedDescription)")
        }
        do { try PrivateFiles.makeDirectory(atPath: root.path) } catch { throw .keyStore(Self.reason(error)) }
    }

    /// Runs `body` holding an exclusive lock on `.lock`. The lock belongs to the open file, so
    /// it also excludes another `FilePasskeyStore` of the same root in this process.
    private func withLock<Result>(_ body: () throws(PasskeyAuthenticatorError) -> Result) throws(PasskeyAuthenticatorError) -> Result {
        try makeRoot()
        let descriptor = open(root.appendingPathComponent(Self.lockFile).path, O_RDWR | O_CREAT | O_CLOEXEC, PrivateFiles.fileMode)
        guard descriptor >= 0 else { throw .keyStore("cannot open the passkey store's lock: \(String(cString: strerror(errno)))") }
        defer { close(descriptor) }
        while flock(descriptor, LOCK_EX) != 0 {
            guard errno == EINTR else { throw .keyStore("cannot lock the passkey store: \(String(cString: strerror(errno)))") }
        }
        return try body()
    }
}
