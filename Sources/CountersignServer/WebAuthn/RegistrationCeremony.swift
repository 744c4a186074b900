import CountersignCBOR
import CountersignWebAuthn
import Foundation

/// A credential that passed registration (§7.1), ready to be stored (step 29).
struct RegisteredCredential: Sendable, Equatable {
    var credentialID: [UInt8]
    var publicKey: COSEKey
    /// The COSE key as the authenticator encoded it.
    var publicKeyBytes: [UInt8]
    var signCount: UInt32
    var aaguid: [UInt8]
    var userVerified: Bool
    var backupEligible: Bool
    var backupState: Bool
    var transports: [String]
    var attestation: VerifiedAttestation
    /// Whether the attestation's certificate path ends at a trusted root.
    var attestationTrusted: Bool
    var attestationObject: [UInt8]
    var clientDataJSON: [UInt8]
    /// The FIDO metadata of the authenticator's model, if the loaded BLOB has it.
    var metadata: AuthenticatorMetadataEntry?
}

/// The registration ceremony's verification (WebAuthn Level 3 §7.1), steps in the
/// specification's order. What needs the database — the challenge (taken before this runs, so
/// that a failure still uses it) and "not registered yet" (step 28) — is the caller's.
struct RegistrationCeremony: Sendable {
    /// What the options of this ceremony asked for.
    struct Expectation: Sendable {
        var challenge: [UInt8]
        var algorithms: [COSEAlgorithm]
        var userVerification: UserVerificationRequirement
    }

    static let maximumCredentialIDLength = 1023

    let relyingParty: RelyingParty
    /// The FIDO metadata loaded: an authenticator model it reports revoked or compromised is
    /// refused, and a model's attestation roots are trusted for that model.
    var metadata: AuthenticatorMetadataSnapshot = .empty
    var formats: [String: any AttestationStatementFormat] = AttestationFormats.all

    func verify(_ response: RegistrationResponseJSON, expecting expected: Expectation, at date: Date) async throws(WebAuthnError)
        -> RegisteredCredential
    {
        try Self.isPublicKeyCredential(type: response.type, id: response.id, rawID: response.rawId.bytes)
        let clientDataJSON = response.response.clientDataJSON.bytes
        let clientData = try CeremonyChecks.clientData(clientDataJSON)
        try CeremonyChecks.type(clientData, is: CollectedClientData.createType)
        try CeremonyChecks.challenge(clientData, is: expected.challenge)
        try CeremonyChecks.origin(clientData, allowedBy: relyingParty)
        try CeremonyChecks.frame(clientData, allowedBy: relyingParty)
        let clientDataHash = CeremonyChecks.hash(clientDataJSON)
        let object = try Self.attestationObject(response.response.attestationObject.bytes)
        let authenticatorData = object.authenticatorData
        try CeremonyChecks.rpIDHash(authenticatorData, of: relyingParty)
        try CeremonyChecks.userPresent(authenticatorData)
        try CeremonyChecks.userVerified(authenticatorData, requirement: expected.userVerification)
        try CeremonyChecks.backupFlags(authenticatorData)
        let credential = try Self.attestedCredential(authenticatorData)
        try Self.algorithm(of: credential, offeredIn: expected.algorithms)
        let attestation = try verifyStatement(of: object, clientDataHash: clientDataHash, at: date)
        let entry = metadata.entry(aaguid: credential.aaguid, attestationCertificate: attestation.certificateChain.first)
        try Self.status(of: entry, aaguid: credential.aaguid, at: date)
        let roots = relyingParty.attestationRoots + (entry?.rootCertificates ?? [])
        let trusted = await AttestationTrust(roots: roots).isTrusted(attestation, at: date)
        try acceptable(attestation, trusted: trusted)
        try Self.credentialIDLength(credential.credentialID)
        try Self.credentialID(credential.credentialID, is: response.rawId.bytes)
        return RegisteredCredential(
            credentialID: credential.credentialID, publicKey: credential.publicKey, publicKeyBytes: credential.publicKeyBytes,
            signCount: authenticatorData.signCount, aaguid: credential.aaguid,
            userVerified: authenticatorData.flags.contains(.userVerified),
            backupEligible: authenticatorData.flags.contains(.backupEligible),
            backupState: authenticatorData.flags.contains(.backupState),
            transports: Self.knownTransports(response.response.transports ?? []), attestation: attestation,
            attestationTrusted: trusted, attestationObject: response.response.attestationObject.bytes,
            clientDataJSON: clientDataJSON, metadata: entry)
    }

    /// MDS3 §3.1.4 and WebAuthn §7.1 step 25: no new credential of a model whose latest status
    /// is one the metadata refuses (revoked, or a compromise). Whether the model is the one it
    /// claims is the attestation's to prove; a claim alone is enough to refuse.
    static func status(of entry: AuthenticatorMetadataEntry?, aaguid: [UInt8], at date: Date) throws(WebAuthnError) {
        guard let entry, let report = entry.latestStatus(at: date), report.refusesRegistration else { return }
        throw .authenticatorStatusRefused(
            status: report.status, model: AuthenticatorMetadataEntry.modelName(entry, aaguid: MetadataDate.aaguidString(aaguid)))
    }

    /// §7.1 step 5 (and §5.1 `id`): a public-key credential whose `id` is its raw ID in base64url.
    static func isPublicKeyCredential(type: String, id: String, rawID: [UInt8]) throws(WebAuthnError) {
        guard type == "public-key" else { throw .malformedResponse("type must be \"public-key\"") }
        guard !rawID.isEmpty else { throw .malformedResponse("rawId is empty") }
        guard id == Base64URLBytes(rawID).base64URL else { throw .malformedResponse("id is not the base64url of rawId") }
    }

    /// §7.1 step 14: the attestation object is a CBOR map of `fmt`, `attStmt` and `authData`.
    static func attestationObject(_ bytes: [UInt8]) throws(WebAuthnError) -> AttestationObject {
        do {
            return try AttestationObject(parsing: bytes)
        } catch {
            throw .format(error)
        }
    }

    /// §7.1 step 19 (the AT flag): a registration carries the new credential.
    static func attestedCredential(_ data: AuthenticatorData) throws(WebAuthnError) -> AttestedCredentialData {
        guard data.flags.contains(.attestedCredentialData), let credential = data.attestedCredentialData else {
            throw .attestedCredentialData("the AT flag is clear: no credential was attested")
        }
        return credential
    }

    /// §7.1 step 21: the credential's algorithm is one the options offered.
    static func algorithm(of credential: AttestedCredentialData, offeredIn algorithms: [COSEAlgorithm]) throws(WebAuthnError) {
        guard algorithms.contains(credential.publicKey.algorithm) else {
            throw .algorithmNotAllowed(credential.publicKey.algorithm.rawValue)
        }
    }

    /// §7.1 steps 22 and 24: `fmt` is a format Countersign verifies (compared case-sensitively),
    /// and its statement verifies.
    func verifyStatement(of object: AttestationObject, clientDataHash: [UInt8], at date: Date) throws(WebAuthnError)
        -> VerifiedAttestation
    {
        guard let format = formats[object.format] else { throw .unsupportedAttestationFormat(object.format) }
        do {
            return try format.verify(
                statement: object.statement, authenticatorData: object.authenticatorData, clientDataHash: clientDataHash,
                at: date)
        } catch {
            throw .invalidAttestation(error.reason)
        }
    }

    /// §7.1 steps 25–26: attestation that ends at a trusted root is always acceptable; `none`,
    /// self attestation and paths to no trusted root only when the tenant accepts unattested
    /// authenticators.
    func acceptable(_ attestation: VerifiedAttestation, trusted: Bool) throws(WebAuthnError) {
        guard trusted || relyingParty.allowUnattested else {
            switch attestation.kind {
            case .none: throw .attestationNotTrusted("the authenticator sent no attestation")
            case .self: throw .attestationNotTrusted("the authenticator attested only with its own key")
            default: throw .attestationNotTrusted("the certificate path ends at no trusted root")
            }
        }
    }

    /// §7.1 step 27: credential IDs longer than 1023 bytes are refused.
    static func credentialIDLength(_ id: [UInt8]) throws(WebAuthnError) {
        guard id.count <= maximumCredentialIDLength else { throw .credentialIDTooLong }
    }

    /// The attested credential is the one the response names.
    static func credentialID(_ id: [UInt8], is rawID: [UInt8]) throws(WebAuthnError) {
        guard id == rawID else { throw .credentialIDMismatch }
    }

    /// The transports worth keeping for `excludeCredentials` / `allowCredentials` hints
    /// (§5.8.4); unknown values are dropped, as clients ignore them.
    static func knownTransports(_ transports: [String]) -> [String] {
        let known: Set = ["usb", "nfc", "ble", "smart-card", "hybrid", "internal"]
        return Array(Set(transports.filter(known.contains))).sorted()
    }
}
