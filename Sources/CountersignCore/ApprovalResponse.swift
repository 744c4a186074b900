import Crypto
import Foundation

/// The user's decision on one request, as a compact JWS signed by the device key
/// (`typ` `countersign-response+jwt`, `kid` the device id). It signs the decision together with
/// the SHA-256 of the exact details the device opened and showed, and the server's challenge.
/// The server keeps it as the approval receipt.
///
/// ```swift
/// let response = ApprovalResponse(requestID: details.requestID, decision: .approve,
///                                 detailsDigest: digest, challenge: details.challenge,
///                                 factors: ["confirm"], issuedAt: now)
/// let jws = try response.sign(deviceID: enrollment.deviceID, signer: keys.signer)
/// ```
public struct ApprovalResponse: Codable, Sendable, Equatable {
    public static let type = "countersign-response+jwt"

    public enum Decision: String, Codable, Sendable, CaseIterable {
        case approve, deny
    }

    public var requestID: String
    public var decision: Decision
    /// Base64url SHA-256 of the canonical details the device opened (`TransactionDetails.digest`).
    public var detailsDigest: String
    /// The `challenge` of those details.
    public var challenge: String
    /// How the user was verified on the device: `Factor` raw values (`confirm`, `pin`, …), in
    /// the order the user went through them.
    public var factors: [String]
    /// Where the details offer alternatives (`Verification.alternatives`): the index of the one
    /// used, whose factors `factors` lists. The device key signs it with the rest, and the PIN
    /// and biometric keys sign over that signature, so one answer proves the whole alternative.
    public var alternative: Int64?
    /// Seconds since 1970.
    public var issuedAt: Int64
    /// For a denial: why (`DenyReason.fromDevice`); absent means `declined`.
    public var reason: DenyReason?
    /// For number matching: the number the user picked or typed.
    public var number: Int64?
    /// For a custom authenticator: the app's data for the tenant's verifier (at most 4096 bytes).
    public var customData: String?
    /// For a biometric check, what kind the platform used: `face`, `fingerprint` or `other`.
    public var biometry: String?

    public init(requestID: String, decision: Decision, detailsDigest: String, challenge: String, factors: [String],
                issuedAt: Int64, reason: DenyReason? = nil, number: Int64? = nil, customData: String? = nil,
                biometry: String? = nil, alternative: Int64? = nil) {
        self.requestID = requestID
        self.decision = decision
        self.detailsDigest = detailsDigest
        self.challenge = challenge
        self.factors = factors
        self.issuedAt = issuedAt
        self.reason = reason
        self.number = number
        self.customData = customData
        self.biometry = biometry
        self.alternative = alternative
    }

    /// The longest `customData` accepted.
    public static let maximumCustomDataLength = 4096

    enum CodingKeys: String, CodingKey {
        case decision, challenge, factors, reason, number, biometry, alternative
        case requestID = "request_id"
        case detailsDigest = "details_sha256"
        case issuedAt = "iat"
        case customData = "custom_data"
    }

    /// Signs the response: canonical JSON payload, `typ` and `kid` in the header.
    public func sign(deviceID: String, signer: some ES256Signer) throws -> CompactJWS {
        try CompactJWS.sign(
            header: ["typ": .string(Self.type), "kid": .string(deviceID)],
            payload: JSONValue(encoding: self).canonicalData, signer: signer)
    }

    private static func claimPath(_ path: [any CodingKey]) -> String {
        path.map { $0.intValue.map { "[\($0)]" } ?? $0.stringValue }.joined(separator: ".")
    }

    /// Parses a signed response and checks it was signed by `key` for `deviceID`. The caller
    /// then compares the request, digest and challenge with what it sealed.
    public static func verified(
        _ text: String, key: P256.Signing.PublicKey, deviceID: String
    ) throws(ApprovalMessageError) -> (response: ApprovalResponse, jws: CompactJWS) {
        let jws: CompactJWS
        do { jws = try CompactJWS(parsing: text) } catch { throw .malformed("the response is not an ES256 JWS: \(error)") }
        guard jws.type == type else { throw .malformed("the response's typ must be \(type)") }
        guard jws.keyID == deviceID else { throw .malformed("the response's kid is not this device") }
        guard jws.isValid(for: key) else { throw .malformed("the response is not signed by this device's key") }
        let payload: JSONValue
        do { payload = try JSONValue(parsing: jws.payload) } catch {
            throw .malformed("the response's payload is not acceptable JSON: \(error)")
        }
        do {
            return (try payload.decode(as: ApprovalResponse.self), jws)
        } catch let DecodingError.keyNotFound(key, _) {
            throw .malformed("the response's payload lacks the claim \(key.stringValue)")
        } catch let DecodingError.typeMismatch(_, context), let DecodingError.valueNotFound(_, context) {
            throw .malformed("the response's claim \(Self.claimPath(context.codingPath)) has the wrong type")
        } catch let DecodingError.dataCorrupted(context) {
            throw .malformed("the response's claim \(Self.claimPath(context.codingPath)) is invalid")
        } catch {
            throw .malformed("the response's payload is not an object of claims")
        }
    }
}

/// `POST /device/v1/requests/{id}/response`: the signed decision, and for the PIN and
/// biometric factors the second key's signature over it (`FactorProof`).
public struct ApprovalSubmission: Codable, Sendable, Equatable {
    /// An `ApprovalResponse` JWS.
    public var response: String
    /// base64url raw ES256 signature by the PIN key over `FactorProof.message(factor: .pin, …)`.
    public var pinSignature: String?
    /// The same by the biometric key, with `factor: .biometric`.
    public var biometricSignature: String?

    public init(response: String, pinSignature: String? = nil, biometricSignature: String? = nil) {
        self.response = response
        self.pinSignature = pinSignature
        self.biometricSignature = biometricSignature
    }

    enum CodingKeys: String, CodingKey {
        case response
        case pinSignature = "pin_signature"
        case biometricSignature = "biometric_signature"
    }
}

/// The server's answer to an accepted decision.
public struct ApprovalAcknowledgement: Codable, Sendable, Equatable {
    public var requestID: String
    /// `approved` or `denied`.
    public var status: String
    public var decidedAt: Date
    /// For a denial, why: the device's reason, or the server's (`wrong_number`, `custom_rejected`).
    public var reason: DenyReason?

    public init(requestID: String, status: String, decidedAt: Date, reason: DenyReason? = nil) {
        self.requestID = requestID
        self.status = status
        self.decidedAt = decidedAt
        self.reason = reason
    }

    enum CodingKeys: String, CodingKey {
        case status, reason
        case requestID = "request_id"
        case decidedAt = "decided_at"
    }
}
