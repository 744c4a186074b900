import CountersignCore
import Foundation
import _CryptoExtras

/// Google's token endpoint for service accounts: the JWT-bearer grant of RFC 7523, with the
/// checks Google applies to the assertion.
struct JWTBearerGrant {
    static let grantType = "urn:ietf:params:oauth:grant-type:jwt-bearer"
    /// Either of these in `scope` lets the token send FCM messages.
    static let sufficientScopes: Set<String> = [
        "https://www.googleapis.com/auth/firebase.messaging",
        "https://www.googleapis.com/auth/cloud-platform",
    ]
    /// How far `iat` may be from the emulator's clock.
    static let clockSkew: Int64 = 300
    static let maximumLifetime: Int64 = 3600

    /// Why a token request was refused: OAuth's `error` code (RFC 6749 §5.2) and a description
    /// in Google's words.
    enum Failure: Error, Sendable {
        case invalidRequest(String)
        case unsupportedGrantType
        case invalidGrant(String)

        var response: EmulatorResponse {
            let (error, description) = switch self {
            case .invalidRequest(let description): ("invalid_request", description)
            case .unsupportedGrantType: ("unsupported_grant_type", "Invalid grant_type: expected \(JWTBearerGrant.grantType)")
            case .invalidGrant(let description): ("invalid_grant", description)
            }
            let body = JSONValue.object(["error": .string(error), "error_description": .string(description)])
            return .json(status: 400, body.canonicalString)
        }
    }

    let account: FCMEmulator.ServiceAccount
    /// The `aud` values accepted: the emulator's own token URL, and the key file's
    /// `token_uri`, which is what Google's client libraries put there.
    let audiences: Set<String>

    /// The assertion of an `application/x-www-form-urlencoded` token request.
    static func assertion(contentType: String?, body: Data) throws(Failure) -> String {
        guard let contentType, contentType.lowercased().hasPrefix("application/x-www-form-urlencoded") else {
            throw .invalidRequest("the request body must be application/x-www-form-urlencoded")
        }
        var parameters: [String: String] = [:]
        for pair in String(decoding: body, as: UTF8.self).split(separator: "&") {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            guard let name = formDecoded(parts[0]), let value = formDecoded(parts.count == 2 ? parts[1] : "") else {
                throw .invalidRequest("the request body is not form-encoded")
            }
            guard parameters.updateValue(value, forKey: name) == nil else {
                throw .invalidRequest("Duplicate parameter: \(name)")
            }
        }
        guard let grantType = parameters["grant_type"] else { throw .invalidRequest("Missing required parameter: grant_type") }
        guard grantType == Self.grantType else { throw .unsupportedGrantType }
        guard let assertion = parameters["assertion"] else { throw .invalidRequest("Missing required parameter: assertion") }
        return assertion
    }

    /// Checks the assertion's form, signature and claims at `now`.
    func check(_ assertion: String, now: Date) throws(Failure) {
        let parts = assertion.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3,
              let headerBytes = Data(base64URLEncoded: parts[0]), let header = try? JSONValue(parsing: headerBytes),
              let claimBytes = Data(base64URLEncoded: parts[1]), let claims = try? JSONValue(parsing: claimBytes),
              case .object = header, case .object = claims,
              let signature = Data(base64URLEncoded: parts[2]) else {
            throw .invalidGrant("Invalid JWT: the assertion is not a compact JWS with JSON header and claims.")
        }
        guard header["alg"]?.stringValue == "RS256" else { throw .invalidGrant("Invalid JWT: alg must be RS256.") }
        if let type = header["typ"], type.stringValue != "JWT" { throw .invalidGrant("Invalid JWT: typ must be JWT.") }
        if let keyID = header["kid"], keyID.stringValue != account.privateKeyID { throw .invalidGrant("Invalid JWT Signature.") }
        let signingInput = Data(assertion.utf8.prefix(parts[0].utf8.count + 1 + parts[1].utf8.count))
        guard account.publicKey.isValidSignature(
            _RSA.Signing.RSASignature(rawRepresentation: signature), for: signingInput, padding: .insecurePKCS1v1_5) else {
            throw .invalidGrant("Invalid JWT Signature.")
        }
        guard claims["iss"]?.stringValue == account.clientEmail else { throw .invalidGrant("Invalid email or User ID") }
        guard let audience = claims["aud"]?.stringValue, audiences.contains(audience) else {
            throw .invalidGrant("Invalid JWT: Failed audience check. The right audience is \(audiences.sorted().joined(separator: " or ")).")
        }
        let scopes = (claims["scope"]?.stringValue ?? "").split(separator: " ").map(String.init)
        guard scopes.contains(where: Self.sufficientScopes.contains) else {
            throw .invalidGrant("Invalid JWT: scope must include https://www.googleapis.com/auth/firebase.messaging.")
        }
        let clock = Int64(now.timeIntervalSince1970.rounded(.down))
        guard let issuedAt = claims["iat"]?.integerValue, let expiry = claims["exp"]?.integerValue,
              abs(issuedAt - clock) <= Self.clockSkew, expiry > clock, expiry > issuedAt,
              expiry - issuedAt <= Self.maximumLifetime else {
            throw .invalidGrant("Invalid JWT: Token must be a short-lived token (60 minutes) and in a reasonable timeframe. "
                + "Check your iat and exp values in the JWT claim.")
        }
    }

    /// `application/x-www-form-urlencoded` decoding: `+` is a space, then percent-escapes.
    private static func formDecoded(_ text: Substring) -> String? {
        text.replacingOccurrences(of: "+", with: " ").removingPercentEncoding
    }
}
