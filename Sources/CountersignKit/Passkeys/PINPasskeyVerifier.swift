import CountersignCore
import Crypto
import Foundation

/// Where `PINPasskeyVerifier` keeps its record (the PIN's salt and check value, and the count
/// of wrong PINs), as opaque bytes. `FilePasskeyStore` and `KeychainPasskeyStore` implement it.
public protocol PasskeyPINRecordStore: Sendable {
    func pinRecord() async throws(PasskeyAuthenticatorError) -> Data?
    /// Stores (or replaces) the record; nil removes it.
    func setPINRecord(_ record: Data?) async throws(PasskeyAuthenticatorError)
}

/// User verification by a PIN the user chose for passkeys, checked on the device.
///
/// This is not the push PIN. The push PIN (`PINKey`) is checked only by the server, which holds
/// its public key and counts wrong PINs, so the device keeps nothing a guess could be tested
/// against. A passkey is used with relying parties that know nothing of a PIN, so the device
/// must check it itself: it keeps a salt and the public key of the same scrypt-stretched
/// derivation (`PINKey`), and a copy of its store lets guesses be tested offline at scrypt's
/// cost. Prefer `BiometricPasskeyVerifier` where the device has biometry.
///
/// Wrong PINs are limited here: the first `freeAttempts` in a row cost nothing; after that each
/// further try waits `30 s × 2^(wrong − freeAttempts)`, at most an hour. The count and the time
/// of the last wrong PIN are stored, so closing the app does not reset them; a right PIN does.
/// While a wait lasts, the verifier answers `.unavailable` without asking.
///
/// ```swift
/// let pins = PINPasskeyVerifier(store: store) { prompt in
///     await askForPIN(prompt.request.prompt, wrongSoFar: prompt.failedAttempts)   // nil cancels
/// }
/// try await pins.setPIN("480613", current: nil)
/// let authenticator = PasskeyAuthenticator(store: store, userVerifier: pins)
/// ```
public actor PINPasskeyVerifier: PasskeyUserVerifier {
    /// What the app is asked to show when the PIN is needed.
    public struct Prompt: Sendable, Equatable {
        public let request: PasskeyVerificationRequest
        /// Wrong PINs entered since the last right one.
        public let failedAttempts: Int
    }

    /// Wrong PINs in a row that cost no wait.
    public static let freeAttempts = 3
    /// The longest wait between tries.
    public static let maximumDelay: TimeInterval = 3600

    private struct Record: Codable {
        var salt: Data
        var publicKey: Data
        var failedAttempts: Int
        var lastFailure: Date?
    }

    private let store: any PasskeyPINRecordStore
    private let now: @Sendable () -> Date
    private let enterPIN: @Sendable (Prompt) async -> String?

    /// - Parameters:
    ///   - store: where the record is kept.
    ///   - now: the clock the waits are measured with.
    ///   - enterPIN: asks the user for the PIN; nil cancels.
    public init(
        store: any PasskeyPINRecordStore, now: @escaping @Sendable () -> Date = { Date() },
        enterPIN: @escaping @Sendable (Prompt) async -> String?
    ) {
        self.store = store
        self.now = now
        self.enterPIN = enterPIN
    }

    /// Whether a PIN has been set.
    public var hasPIN: Bool {
        get async throws(PasskeyAuthenticatorError) { try await record() != nil }
    }

    /// Sets the PIN (4 to 12 digits, else `.invalidPIN`). Replacing one needs the current PIN,
    /// checked with the same limits as a verification: a wrong one counts and throws
    /// `.userVerificationFailed`; during a wait, `.userVerificationUnavailable`.
    public func setPIN(_ pin: String, current: String?) async throws(PasskeyAuthenticatorError) {
        if var existing = try await record() {
            guard delay(after: existing) == nil else { throw .userVerificationUnavailable }
            guard let current, matches(current, existing) else {
                existing.failedAttempts += 1
                existing.lastFailure = now()
                try await save(existing)
                throw .userVerificationFailed
            }
        }
        let salt = PINKey.newSalt()
        let key: PINKey
        do { key = try PINKey(pin: pin, salt: salt) } catch { throw .invalidPIN }
        try await save(Record(salt: salt, publicKey: key.publicKey.x963Representation, failedAttempts: 0, lastFailure: nil))
    }

    public func verifyUser(_ request: PasskeyVerificationRequest) async -> PasskeyUserVerification {
        var enteredWrong = false
        while true {
            guard let current = try? await record(), delay(after: current) == nil else {
                return enteredWrong ? .failed : .unavailable
            }
            guard let pin = await enterPIN(Prompt(request: request, failedAttempts: current.failedAttempts)) else {
                return .cancelled
            }
            // Read again: another verification may have counted a wrong PIN meanwhile.
            guard var latest = try? await record(), delay(after: latest) == nil else { return .failed }
            if matches(pin, latest) {
                if latest.failedAttempts > 0 {
                    latest.failedAttempts = 0
                    latest.lastFailure = nil
                    guard (try? await save(latest)) != nil else { return .unavailable }
                }
                return .verified
            }
            enteredWrong = true
            latest.failedAttempts += 1
            latest.lastFailure = now()
            guard (try? await save(latest)) != nil else { return .failed }
        }
    }

    /// How long the next try must still wait, or nil when it may go ahead.
    private func delay(after record: Record) -> TimeInterval? {
        guard record.failedAttempts >= Self.freeAttempts, let lastFailure = record.lastFailure else { return nil }
        let doublings = min(record.failedAttempts - Self.freeAttempts, 16)
        let wait = min(30 * Double(1 << doublings), Self.maximumDelay)
        let remaining = lastFailure.addingTimeInterval(wait).timeIntervalSince(now())
        return remaining > 0 ? remaining : nil
    }

    private func matches(_ pin: String, _ record: Record) -> Bool {
        guard let key = try? PINKey(pin: pin, salt: record.salt) else { return false }
        let derived = Array(key.publicKey.x963Representation)
        let stored = Array(record.publicKey)
        guard derived.count == stored.count else { return false }
        return zip(derived, stored).reduce(UInt8(0)) { $0 | ($1.0 ^ $1.1) } == 0
    }

    private func record() async throws(PasskeyAuthenticatorError) -> Record? {
        guard let data = try await store.pinRecord() else { return nil }
        guard let record = try? Timestamps.decoder().decode(Record.self, from: data) else {
            throw .keyStore("the passkey PIN record is corrupt")
        }
        return record
    }

    private func save(_ record: Record) async throws(PasskeyAuthenticatorError) {
        let data: Data
        do { data = try Timestamps.encoder().encode(record) } catch { throw .keyStore("cannot encode the passkey PIN record") }
        try await store.setPINRecord(data)
    }
}
