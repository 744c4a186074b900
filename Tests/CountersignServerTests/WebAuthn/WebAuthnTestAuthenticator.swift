import CountersignCBOR
import CountersignWebAuthn
import Crypto
import Foundation
@testable import CountersignServer

/// An authenticator and client in one, for the relying party's rejection tests: it makes a
/// valid registration or assertion, after letting the test change any part of it (the client
/// data, the flags, the RP ID hash, the counter, the statement) and signs what results, so
/// that each test breaks exactly one rule.
struct WebAuthnTestAuthenticator {
    static let rpID = "example.org"
    static let origin = "https://example.org"

    var key = P256.Signing.PrivateKey()
    var credentialID = Array(Secrets.randomBytes(32))
    var userHandle = Array(Secrets.randomBytes(16))

    struct Parts {
        var type: String
        var challenge: [UInt8]
        var origin = WebAuthnTestAuthenticator.origin
        var crossOrigin: Bool? = false
        var topOrigin: String?
        /// Replaces the serialised client data when set.
        var clientDataJSON: [UInt8]?
        var rpIDHash = Array(SHA256.hash(data: Array(WebAuthnTestAuthenticator.rpID.utf8)))
        var flags: AuthenticatorFlags = [.userPresent, .userVerified]
        var signCount: UInt32 = 0
        var credentialID: [UInt8]
        var rawID: [UInt8]
        var id: String?
        var credentialType = "public-key"
        var publicKey: COSEKey
        /// The authenticator model the attested credential data names.
        var aaguid: [UInt8] = Array(repeating: 0, count: 16)
        var format = "none"
        /// Builds the attestation statement from the authenticator data and the client data hash.
        var statement: (@Sendable ([UInt8], [UInt8]) -> CBORMap)?
        /// Replaces the authenticator data bytes when set.
        var authenticatorData: [UInt8]?
        var userHandle: [UInt8]?
        /// Changes the signature after it is made.
        var signature: (@Sendable ([UInt8]) -> [UInt8])?
        /// Replaces the attestation object bytes when set.
        var attestationObject: [UInt8]?
    }

    func parts(type: String, challenge: [UInt8]) -> Parts {
        Parts(
            type: type, challenge: challenge, credentialID: credentialID, rawID: credentialID,
            publicKey: COSEKey(p256: key.publicKey), userHandle: userHandle)
    }

    func registration(challenge: [UInt8], _ change: (inout Parts) -> Void = { _ in }) -> RegistrationResponseJSON {
        var parts = parts(type: CollectedClientData.createType, challenge: challenge)
        parts.flags.insert(.attestedCredentialData)
        change(&parts)
        let clientDataJSON = parts.clientDataJSON ?? CollectedClientData(
            type: parts.type, challenge: parts.challenge, origin: parts.origin, crossOrigin: parts.crossOrigin,
            topOrigin: parts.topOrigin).serialized
        let attested = parts.flags.contains(.attestedCredentialData)
            ? AttestedCredentialData(aaguid: parts.aaguid, credentialID: parts.credentialID, publicKey: parts.publicKey)
            : nil
        let authenticatorData = parts.authenticatorData ?? Self.authenticatorData(
            rpIDHash: parts.rpIDHash, flags: parts.flags, signCount: parts.signCount, attested: attested)
        let clientDataHash = Array(SHA256.hash(data: clientDataJSON))
        let statement = parts.statement?(authenticatorData, clientDataHash) ?? CBORMap()
        let object = parts.attestationObject ?? CBOREncoder.encode(.map(CBORMap([
            .init(key: .text("fmt"), value: .text(parts.format)),
            .init(key: .text("attStmt"), value: .map(statement)),
            .init(key: .text("authData"), value: .bytes(authenticatorData)),
        ])))
        var response = RegistrationResponseJSON(
            rawId: parts.rawID,
            response: .init(clientDataJSON: Base64URLBytes(clientDataJSON), attestationObject: Base64URLBytes(object)))
        response.type = parts.credentialType
        if let id = parts.id { response.id = id }
        return response
    }

    func assertion(challenge: [UInt8], _ change: (inout Parts) -> Void = { _ in }) -> AuthenticationResponseJSON {
        var parts = parts(type: CollectedClientData.getType, challenge: challenge)
        change(&parts)
        let clientDataJSON = parts.clientDataJSON ?? CollectedClientData(
            type: parts.type, challenge: parts.challenge, origin: parts.origin, crossOrigin: parts.crossOrigin,
            topOrigin: parts.topOrigin).serialized
        let authenticatorData = parts.authenticatorData ?? Self.authenticatorData(
            rpIDHash: parts.rpIDHash, flags: parts.flags, signCount: parts.signCount, attested: nil)
        var signature = sign(authenticatorData + Array(SHA256.hash(data: clientDataJSON)))
        if let change = parts.signature { signature = change(signature) }
        var response = AuthenticationResponseJSON(
            rawId: parts.rawID,
            response: .init(
                clientDataJSON: Base64URLBytes(clientDataJSON), authenticatorData: Base64URLBytes(authenticatorData),
                signature: Base64URLBytes(signature), userHandle: parts.userHandle.map(Base64URLBytes.init)))
        response.type = parts.credentialType
        if let id = parts.id { response.id = id }
        return response
    }

    /// A packed self-attestation statement signed with this authenticator's key.
    var packedSelf: @Sendable ([UInt8], [UInt8]) -> CBORMap {
        let key = key
        return { authenticatorData, clientDataHash in
            let signature = try! key.signature(for: authenticatorData + clientDataHash).derRepresentation
            return CBORMap([
                .init(key: .text("alg"), value: .init(COSEAlgorithm.es256.rawValue)),
                .init(key: .text("sig"), value: .bytes(Array(signature))),
            ])
        }
    }

    func sign(_ data: [UInt8]) -> [UInt8] {
        Array(try! key.signature(for: data).derRepresentation)
    }

    /// The record the relying party would have stored for this authenticator's credential.
    func record(signCount: UInt32 = 0, backupEligible: Bool = false) -> CredentialRecord {
        CredentialRecord(
            credentialID: credentialID, userHandle: userHandle, publicKey: COSEKey(p256: key.publicKey), signCount: signCount,
            backupEligible: backupEligible)
    }

    static func authenticatorData(
        rpIDHash: [UInt8], flags: AuthenticatorFlags, signCount: UInt32, attested: AttestedCredentialData?
    ) -> [UInt8] {
        var bytes = rpIDHash
        bytes.append(flags.rawValue)
        bytes += withUnsafeBytes(of: signCount.bigEndian, Array.init)
        if let attested {
            bytes += attested.aaguid
            bytes += [UInt8(attested.credentialID.count >> 8), UInt8(attested.credentialID.count & 0xFF)]
            bytes += attested.credentialID
            bytes += attested.publicKeyBytes
        }
        return bytes
    }

    /// The relying party the tests verify against: `example.org` at `https://example.org`.
    static func relyingParty(
        userVerification: UserVerificationRequirement = .preferred, allowUnattested: Bool = true,
        signCountRegression: SignCountRegressionAction = .reject, topOrigins: Set<String> = []
    ) -> RelyingParty {
        RelyingParty(
            id: rpID, name: "Example", origins: [origin], topOrigins: topOrigins, userVerification: userVerification,
            attestation: .none, allowUnattested: allowUnattested, signCountRegression: signCountRegression)
    }
}
