import Crypto
import CountersignCore
import Foundation

/// Proof Key for Code Exchange (RFC 7636), which the code flow requires of every client: the
/// authorization request carries `code_challenge` = BASE64URL(SHA-256(`code_verifier`)) with
/// `code_challenge_method=S256`, and the token request proves it holds the verifier. `plain` is
/// refused: it protects nothing once the request is seen (RFC 9700 §2.1.1).
struct CodeChallenge: Sendable, Equatable {
    /// The one method accepted.
    static let method = "S256"

    /// The challenge as the client sent it: 43 base64url characters, the encoding of 32 bytes.
    let value: String

    /// Reads `code_challenge` and `code_challenge_method` from an authorization request. The
    /// method must be given: RFC 7636 §4.3 reads a missing one as `plain`, which is refused.
    init(challenge: String?, method: String?) throws(ProofKeyError) {
        guard let challenge, !challenge.isEmpty else { throw .missingChallenge }
        guard let method, !method.isEmpty else { throw .missingMethod }
        guard method == Self.method else { throw .unsupportedMethod(method) }
        guard challenge.utf8.count == 43, challenge.utf8.allSatisfy(ProofKeyError.isBase64URL) else {
            throw .malformedChallenge
        }
        value = challenge
    }

    /// Whether `verifier` is the one this challenge was made from. The comparison takes the same
    /// time wherever the two differ.
    func isMet(by verifier: CodeVerifier) -> Bool {
        let computed = Data(SHA256.hash(data: Data(verifier.value.utf8))).base64URLEncodedString
        return Secrets.constantTimeEqual(Data(computed.utf8), Data(value.utf8))
    }
}

/// `code_verifier` of a token request (RFC 7636 §4.1): 43 to 128 characters of
/// `A-Z a-z 0-9 - . _ ~`.
struct CodeVerifier: Sendable, Equatable {
    static let lengths = 43...128

    let value: String

    init(_ raw: String?) throws(ProofKeyError) {
        guard let raw, !raw.isEmpty else { throw .missingVerifier }
        guard Self.lengths.contains(raw.utf8.count), raw.utf8.allSatisfy(ProofKeyError.isUnreserved) else {
            throw .malformedVerifier
        }
        value = raw
    }
}

/// Why a request's proof key was refused. At the authorization endpoint a missing or unusable
/// challenge is `invalid_request` (RFC 7636 §4.4.1); at the token endpoint a missing or
/// malformed verifier is `invalid_request`, and a verifier that does not meet the challenge is
/// `invalid_grant` (§4.6).
enum ProofKeyError: Error, Equatable, OAuthFailure {
    case missingChallenge
    case missingMethod
    case unsupportedMethod(String)
    case malformedChallenge
    case missingVerifier
    case malformedVerifier
    case mismatch

    var oauthError: OAuthError {
        switch self {
        case .missingChallenge:
            OAuthError(.invalidRequest, "code_challenge is required: every client uses PKCE with S256")
        case .missingMethod:
            OAuthError(.invalidRequest, "code_challenge_method is required and must be S256")
        case .unsupportedMethod(let method):
            OAuthError(.invalidRequest, "code_challenge_method \(method) is not supported; use S256")
        case .malformedChallenge:
            OAuthError(.invalidRequest, "code_challenge must be the 43-character base64url SHA-256 of the code verifier")
        case .missingVerifier:
            OAuthError(.invalidRequest, "code_verifier is required")
        case .malformedVerifier:
            OAuthError(.invalidRequest, "code_verifier must be 43 to 128 characters of A-Z a-z 0-9 - . _ ~")
        case .mismatch:
            OAuthError(.invalidGrant, "code_verifier does not match the code_challenge of the authorization request")
        }
    }

    static func isBase64URL(_ byte: UInt8) -> Bool {
        (0x30...0x39).contains(byte) || (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte)
            || byte == UInt8(ascii: "-") || byte == UInt8(ascii: "_")
    }

    static func isUnreserved(_ byte: UInt8) -> Bool {
        isBase64URL(byte) || byte == UInt8(ascii: ".") || byte == UInt8(ascii: "~")
    }
}
