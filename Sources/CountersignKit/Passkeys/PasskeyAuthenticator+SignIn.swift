import CountersignWebAuthn
import Foundation

extension PasskeyAuthenticator {
    /// Signs in with a stored credential for the relying party's request options, as
    /// `navigator.credentials.get()` would on the page at `origin`, and returns what
    /// `PublicKeyCredential.toJSON()` would.
    ///
    /// Only credentials of the request's RP ID are candidates, and only those `allowCredentials`
    /// names when it names any; none → `.noCredentials`. With a selector, the selector chooses
    /// among the candidates by key name, even when there is only one, so that the user sees
    /// which account signs in (and may cancel); without one, the most recently created
    /// candidate signs.
    ///
    /// The answer always carries the credential's user handle. A device-bound credential's
    /// counter is stored before the answer is returned.
    ///
    /// ```swift
    /// let options = try JSONDecoder().decode(PublicKeyCredentialRequestOptionsJSON.self, from: optionsFromServer)
    /// let response = try await authenticator.signIn(options, origin: "https://example.org")
    /// ```
    public func signIn(
        _ options: PublicKeyCredentialRequestOptionsJSON, origin: String
    ) async throws(PasskeyAuthenticatorError) -> AuthenticationResponseJSON {
        let origin = try WebOrigin(origin)
        let rpID = try origin.relyingPartyID(options.rpId)
        let stored = try await store.credentials(rpID: rpID)
        let allowed = options.allowCredentials.filter { $0.type == "public-key" }.map(\.id.bytes)
        let candidates = zip(stored, PasskeyKeyName.names(for: stored))
            .filter { allowed.isEmpty || allowed.contains($0.0.id) }
            .map { (credential: $0.0, keyName: $0.1) }
        guard let newest = candidates.last else { throw .noCredentials }

        let credential: PasskeyCredential
        if let selector {
            guard let answer = await selector.selectCredential(keyNames: candidates.map(\.keyName)) else { throw .cancelled }
            guard let chosen = candidates.first(where: { $0.keyName == answer }) else { throw .unknownKeyName }
            credential = chosen.credential
        } else {
            credential = newest.credential
        }

        let verified = try await verifyUser(
            options.userVerification, PasskeyVerificationRequest(ceremony: .signIn, rpID: rpID, userName: credential.user.name))
        let signCount: UInt32 = switch credential.kind {
        case .deviceBound: try await store.incrementSignCount(credentialID: credential.id)
        case .synced: 0
        }
        let authenticatorData = AuthenticatorData(
            rpIDHash: Self.rpIDHash(rpID), flags: Self.flags(verified: verified, kind: credential.kind), signCount: signCount)
        let clientDataJSON = CollectedClientData(
            type: CollectedClientData.getType, challenge: options.challenge.bytes, origin: origin.serialized, crossOrigin: false
        ).serialized
        let signature = try await store.signature(
            for: Self.signedData(authenticatorData, clientDataJSON), credentialID: credential.id)
        return AuthenticationResponseJSON(
            rawId: credential.id,
            response: .init(
                clientDataJSON: Base64URLBytes(clientDataJSON), authenticatorData: Base64URLBytes(authenticatorData.bytes),
                signature: Base64URLBytes(signature), userHandle: Base64URLBytes(credential.user.handle)),
            authenticatorAttachment: "platform")
    }
}
