import Crypto
import Foundation

/// A user's `user_code` (CIBA §7.1): a secret the user chose and tells the relying party, so
/// that a request started by someone who only knows their username is refused before it
/// reaches a phone. Set by an administrator: 4 to 64 characters, no control characters, not
/// only spaces; compared after Unicode NFC normalisation, so the same text typed on two
/// keyboards matches.
///
/// A code is short and guessable, so an unsalted hash would fall to a dictionary in seconds.
/// The stored form is HMAC-SHA-256 under a key derived from the master key (which never
/// touches the database), over the user's id and the code: a stolen database alone reveals
/// no code, and one user's hash is worthless for another.
struct UserCode: Sendable {
    static let lengths = 4...64

    let text: String

    init(_ raw: String) throws(AdminError) {
        let normalised = raw.precomposedStringWithCanonicalMapping
        guard Self.lengths.contains(normalised.count),
              !normalised.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }),
              normalised.contains(where: { !$0.isWhitespace }) else {
            throw .invalidField("user_code", "4 to 64 characters without control characters, not only spaces")
        }
        text = normalised
    }

    /// The stored form of `code` for the user `userID`.
    static func hash(_ code: String, userID: String, masterKey: MasterKey) -> Data {
        let key = HKDF<SHA256>.deriveKey(
            inputKeyMaterial: masterKey.key, info: Data("countersign user_code v1".utf8), outputByteCount: 32)
        let message = Data(userID.utf8) + Data([0]) + Data(code.precomposedStringWithCanonicalMapping.utf8)
        return Data(HMAC<SHA256>.authenticationCode(for: message, using: key))
    }
}
