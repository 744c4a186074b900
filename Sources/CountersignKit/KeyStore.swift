import Foundation

/// Where an authenticator keeps its private keys and enrollment records, one set per
/// enrollment, under the enrollment's local id.
///
/// `FileKeyStore` works everywhere; `KeychainKeyStore` (Apple platforms) keeps keys in the
/// Secure Enclave when there is one.
///
/// ```swift
/// let store = FileKeyStore(root: appSupport.appending(path: "countersign"))
/// let keys = try await store.createKeys(for: UUID().uuidString)
/// ```
///
/// Every method reports a missing enrollment as `CountersignError.notEnrolled` and any other
/// failure as `CountersignError.keyStore(_:)`.
public protocol KeyStore: Sendable {
    /// Generates a new signing key and agreement key on the device for a new enrollment.
    func createKeys(for enrollmentID: String) async throws(CountersignError) -> DeviceKeys
    /// The keys of an enrollment.
    func keys(for enrollmentID: String) async throws(CountersignError) -> DeviceKeys
    /// Stores (or replaces) the record of an enrollment whose keys this store holds.
    func save(_ enrollment: Enrollment) async throws(CountersignError)
    /// Every enrollment that has a record, oldest first. Keys without a record (an enrollment
    /// that never completed) are not listed.
    func enrollments() async throws(CountersignError) -> [Enrollment]
    /// The record of one enrollment; `.notEnrolled` when it has none. Every request a device
    /// signs reads it, so a store that can read one record directly should.
    func enrollment(_ enrollmentID: String) async throws(CountersignError) -> Enrollment
    /// Deletes the keys, the factor material and the record of an enrollment.
    func delete(_ enrollmentID: String) async throws(CountersignError)
    /// The enrollment's material for one factor, or nil when it has none.
    func factorMaterial(_ kind: FactorMaterial, for enrollmentID: String) async throws(CountersignError) -> Data?
    /// Stores (or replaces) the enrollment's material for one factor; nil removes it.
    func setFactorMaterial(
        _ material: Data?, as kind: FactorMaterial, for enrollmentID: String
    ) async throws(CountersignError)
}

/// What an enrollment keeps for the factors beyond its device key, each as opaque bytes in the
/// `KeyStore`. None of them lets a PIN be checked on the device.
///
/// ```swift
/// let hasPIN = try await keyStore.factorMaterial(.pinSalt, for: enrollment.id) != nil
/// ```
public enum FactorMaterial: String, Sendable, CaseIterable {
    /// The 32 random bytes the PIN key is derived with (`PINKey`): not the key, nor its public
    /// half, nor anything else a guess could be compared with.
    case pinSalt = "pin-salt"
    /// The TOTP seed with its parameters, as the server sent them at enrollment.
    case totpSeed = "totp-seed"
    /// What the `BiometricKeys` provider needs to use its key again: a Secure Enclave key's
    /// handle, or a stand-in's software key.
    case biometricKey = "biometric-key"
    /// The 32-byte seed of the enrollment's X-Wing key (`HPKESuite.xwing`), which opens details
    /// the server sealed with the post-quantum hybrid suite.
    case xwingSeed = "xwing-seed"
}

extension KeyStore {
    /// The record of one enrollment, found in `enrollments()`.
    public func enrollment(_ enrollmentID: String) async throws(CountersignError) -> Enrollment {
        guard let enrollment = try await enrollments().first(where: { $0.id == enrollmentID }) else {
            throw .notEnrolled
        }
        return enrollment
    }
}
