import CountersignCore
import CountersignWebAuthn
import Foundation

extension PasskeyAuthenticator {
    /// Creates a discoverable credential for the relying party's creation options, as
    /// `navigator.credentials.create()` would on the page at `origin`, and returns what
    /// `PublicKeyCredential.toJSON()` would: the JSON the relying party's server verifies.
    ///
    /// A credential for the same RP ID and user handle made earlier is replaced, as WebAuthn's
    /// authenticator model says of discoverable credentials; one named in `excludeCredentials`
    /// is not, and refuses the registration (`.credentialExcluded`).
    ///
    /// ```swift
    /// let options = try JSONDecoder().decode(PublicKeyCredentialCreationOptionsJSON.self, from: optionsFromServer)
    /// let response = try await authenticator.register(options, origin: "https://example.org")
    /// let body = try JSONEncoder().encode(response)   // POST it back to the relying party
    /// ```
    public func register(
        _ options: PublicKeyCredentialCreationOptionsJSON, origin: String
    ) async throws(PasskeyAuthenticatorError) -> RegistrationResponseJSON {
        let origin = try WebOrigin(origin)
        let rpID = try origin.relyingPartyID(options.rp.id)
        let handle = options.user.id.bytes
        guard (1...64).contains(handle.count) else { throw .invalidUserHandle(length: handle.count) }
        guard Self.offersES256(options.pubKeyCredParams) else { throw .noSupportedAlgorithm }
        let existing = try await store.credentials(rpID: rpID)
        let excluded = options.excludeCredentials.filter { $0.type == "public-key" }.map(\.id.bytes)
        guard !existing.contains(where: { excluded.contains($0.id) }) else { throw .credentialExcluded }

        let user = PasskeyUser(handle: handle, name: options.user.name, displayName: options.user.displayName)
        let verified = try await verifyUser(
            options.authenticatorSelection?.userVerification ?? "preferred",
            PasskeyVerificationRequest(ceremony: .registration, rpID: rpID, userName: user.name))
        let credential = try await store.createCredential(
            id: Self.newCredentialID(), rpID: rpID, user: user, kind: credentialKind, createdAt: now())
        let response: RegistrationResponseJSON
        do {
            response = try await registrationResponse(
                for: credential, options: options, origin: origin, verified: verified)
        } catch {
            try? await store.deleteCredential(id: credential.id)
            throw error
        }
        // Replaced only once the new one is complete, so a failure leaves the old one usable.
        // A credential that cannot be deleted is left for the user to remove: the
        // registration itself succeeded.
        for earlier in existing where earlier.user.handle == handle {
            try? await store.deleteCredential(id: earlier.id)
        }
        return response
    }

    private func registrationResponse(
        for credential: PasskeyCredential, options: PublicKeyCredentialCreationOptionsJSON, origin: WebOrigin, verified: Bool
    ) async throws(PasskeyAuthenticatorError) -> RegistrationResponseJSON {
        let format = attestation.effective(for: options)
        let aaguidBytes = format == .none ? [UInt8](repeating: 0, count: 16) : withUnsafeBytes(of: aaguid.uuid) { Array($0) }
        let authenticatorData = AuthenticatorData(
            rpIDHash: Self.rpIDHash(credential.rpID), flags: Self.flags(verified: verified, kind: credential.kind),
            signCount: 0,
            attestedCredentialData: AttestedCredentialData(
                aaguid: aaguidBytes, credentialID: credential.id, publicKey: COSEKey(p256: credential.publicKey)))
        let clientDataJSON = CollectedClientData(
            type: CollectedClientData.createType, challenge: options.challenge.bytes, origin: origin.serialized,
            crossOrigin: false
        ).serialized
        let attestationObject: AttestationObject = switch format {
        case .none:
            .none(authenticatorData)
        case .packed:
            .packedSelf(
                algorithm: .es256,
                signature: try await store.signature(
                    for: Self.signedData(authenticatorData, clientDataJSON), credentialID: credential.id),
                authenticatorData: authenticatorData)
        }
        var extensionResults: [String: JSONValue] = [:]
        if options.extensions?["credProps"] == .bool(true) {
            // Every credential made here is discoverable.
            extensionResults["credProps"] = .object(["rk": .bool(true)])
        }
        return RegistrationResponseJSON(
            rawId: credential.id,
            response: .init(
                clientDataJSON: Base64URLBytes(clientDataJSON), authenticatorData: Base64URLBytes(authenticatorData.bytes),
                transports: ["internal"], publicKey: Base64URLBytes(credential.publicKey.derRepresentation),
                publicKeyAlgorithm: COSEAlgorithm.es256.rawValue, attestationObject: Base64URLBytes(attestationObject.encoded)),
            authenticatorAttachment: "platform", clientExtensionResults: extensionResults)
    }

    /// An empty list means the relying party accepts the defaults, ES256 among them
    /// (WebAuthn §5.1.3 step 10); entries of another type than `public-key` are skipped.
    static func offersES256(_ parameters: [CredentialParameters]) -> Bool {
        parameters.isEmpty || parameters.contains { $0.type == "public-key" && $0.alg == COSEAlgorithm.es256.rawValue }
    }

    /// 32 bytes from the system's CSPRNG: far beyond the 100 bits of entropy WebAuthn asks of
    /// credential IDs that are not encrypted credential sources.
    static func newCredentialID() -> [UInt8] {
        var generator = SystemRandomNumberGenerator()
        return (0..<32).map { _ in generator.next() as UInt8 }
    }
}
