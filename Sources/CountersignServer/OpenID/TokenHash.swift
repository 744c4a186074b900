import Crypto
import Foundation

/// The hash an ID token carries of a token issued beside it (`at_hash`, OpenID Connect Core
/// §3.1.3.6; `rt_hash`, CIBA §10.3.1): base64url of the left half of the SHA-256 of the token's
/// ASCII text, SHA-256 being the hash of both ES256 and RS256, whichever signs the ID token. A
/// client that receives tokens it did not ask for at that moment (push mode) checks with it that
/// they belong to the ID token.
enum TokenHash {
    static func of(_ token: String) -> String {
        Data(SHA256.hash(data: Data(token.utf8)).prefix(16)).base64URLEncodedString
    }
}
