import CountersignCBOR
import CountersignCore
import CountersignKit
import CountersignWebAuthn
import Crypto
import Foundation
import Testing

/// What the SDK's platform authenticator answers, byte by byte where WebAuthn fixes the bytes
/// (standards checklist §4.7), and what it refuses as a browser would.
@Suite struct PasskeyAuthenticatorTests {
    typealias Fixtures = PasskeyFixtures

    static func register(
        _ store: FilePasskeyStore, attestation: PasskeyAttestationFormat = .none, kind: PasskeyKind = .deviceBound,
        verifier: (any PasskeyUserVerifier)? = nil, options: PublicKeyCredentialCreationOptionsJSON = Fixtures.creationOptions(),
        origin: String = Fixtures.origin
    ) async throws -> (RegistrationResponseJSON, AttestationObject) {
        let authenticator = PasskeyAuthenticator(
            store: store, attestation: attestation, credentialKind: kind, userVerifier: verifier)
        let response = try await authenticator.register(options, origin: origin)
        return (response, try AttestationObject(parsing: response.response.attestationObject.bytes))
    }

    // MARK: - Registration

    @Test func registrationClientDataIsSerialisedInTheSpecificationsOrder() async throws {
        try await withPasskeyStore { store in
            let (response, _) = try await Self.register(store)
            let expected = #"{"type":"webauthn.create","challenge":"YSBjaGFsbGVuZ2Ugb2YgdGhpcnR5LXR3byBieXRlcyE","origin":"https://example.org","crossOrigin":false}"#
            #expect(response.response.clientDataJSON.bytes == Array(expected.utf8))
        }
    }

    @Test func registrationAuthenticatorDataHasTheRPIDHashUPATAndACounterOfZero() async throws {
        try await withPasskeyStore { store in
            let (response, object) = try await Self.register(store)
            let data = object.authenticatorData
            #expect(data.rpIDHash == Array(SHA256.hash(data: Data("example.org".utf8))))
            #expect(data.flags == [.userPresent, .attestedCredentialData])
            #expect(data.bytes[32] == 0x41)
            #expect(data.signCount == 0)
            #expect(response.response.authenticatorData?.bytes == data.bytes)
            let attested = try #require(data.attestedCredentialData)
            #expect(attested.credentialID == response.rawId.bytes)
            #expect(attested.credentialID.count == 32)
            // 37 fixed bytes, the AAGUID (16), the ID's length (2), the ID (32), the key (77).
            #expect(data.bytes.count == 164)
            #expect(Array(data.bytes[53..<55]) == [0x00, 0x20])
        }
    }

    @Test func theCredentialPublicKeyIsCanonicalCOSEES256() async throws {
        try await withPasskeyStore { store in
            let (response, object) = try await Self.register(store)
            let key = try #require(object.authenticatorData.attestedCredentialData).publicKeyBytes
            #expect(Array(key.prefix(10)) == [0xA5, 0x01, 0x02, 0x03, 0x26, 0x20, 0x01, 0x21, 0x58, 0x20])
            #expect(Array(key[42..<45]) == [0x22, 0x58, 0x20])
            #expect(key.count == 77)
            let spki = try P256.Signing.PublicKey(derRepresentation: try #require(response.response.publicKey).bytes)
            #expect(Array(spki.x963Representation) == [0x04] + Array(key[10..<42]) + Array(key[45..<77]))
        }
    }

    @Test func noneAttestationHasAnEmptyStatementAndAnAllZeroAAGUID() async throws {
        try await withPasskeyStore { store in
            let (response, object) = try await Self.register(store)
            #expect(object.format == "none")
            #expect(CBOREncoder.encode(.map(object.statement)) == [0xA0])
            #expect(try #require(object.authenticatorData.attestedCredentialData).aaguid == [UInt8](repeating: 0, count: 16))
            // A CBOR map of exactly fmt, attStmt, authData, in CTAP2 canonical order.
            let bytes = response.response.attestationObject.bytes
            #expect(Array(bytes.prefix(5)) == [0xA3, 0x63] + Array("fmt".utf8))
        }
    }

    @Test func packedSelfAttestationSignsWithTheNewKeyAndCarriesTheCountersignAAGUID() async throws {
        try await withPasskeyStore { store in
            let (response, object) = try await Self.register(
                store, attestation: .packed, options: Fixtures.creationOptions(attestation: "direct"))
            #expect(object.format == "packed")
            #expect(object.statement.count == 2)
            #expect(object.statement[text: "alg"]?.int == -7)
            #expect(object.statement[text: "x5c"] == nil)
            let signature = try #require(object.statement[text: "sig"]?.bytes)
            #expect(signature.first == 0x30, "ASN.1 DER, not raw r‖s")
            let attested = try #require(object.authenticatorData.attestedCredentialData)
            let signed = object.authenticatorData.bytes + Array(SHA256.hash(data: response.response.clientDataJSON.bytes))
            #expect(attested.publicKey.isValidSignature(signature, for: signed))
            #expect(attested.aaguid == withUnsafeBytes(of: PasskeyAuthenticator.countersignAAGUID.uuid) { Array($0) })
            #expect(PasskeyAuthenticator.countersignAAGUID.uuidString == "B9691D63-0755-41A4-A4B7-3014AA41C895")
        }
    }

    @Test(arguments: [("none", [String]()), ("direct", ["tpm", "none"])])
    func packedIsReplacedByNoneWhenTheRelyingPartyDoesNotWantIt(_ conveyance: String, _ formats: [String]) async throws {
        try await withPasskeyStore { store in
            var options = Fixtures.creationOptions(attestation: conveyance)
            options.attestationFormats = formats
            let (_, object) = try await Self.register(store, attestation: .packed, options: options)
            #expect(object.format == "none")
            #expect(try #require(object.authenticatorData.attestedCredentialData).aaguid == [UInt8](repeating: 0, count: 16))
        }
    }

    @Test func theRegistrationResponseNamesAPlatformES256CredentialWithInternalTransport() async throws {
        try await withPasskeyStore { store in
            let (response, _) = try await Self.register(store)
            #expect(response.type == "public-key")
            #expect(response.id == response.rawId.base64URL)
            #expect(response.authenticatorAttachment == "platform")
            #expect(response.clientExtensionResults.isEmpty)
            #expect(response.response.transports == ["internal"])
            #expect(response.response.publicKeyAlgorithm == -7)
        }
    }

    @Test func credPropsReportsADiscoverableCredentialWhenAsked() async throws {
        try await withPasskeyStore { store in
            let (response, _) = try await Self.register(store, options: Fixtures.creationOptions(extensions: ["credProps": .bool(true)]))
            #expect(response.clientExtensionResults == ["credProps": .object(["rk": .bool(true)])])
        }
    }

    @Test func aSyncedStyleRegistrationIsBackupEligibleAndBackedUp() async throws {
        try await withPasskeyStore { store in
            let (_, object) = try await Self.register(store, kind: .synced)
            #expect(object.authenticatorData.flags == [.userPresent, .backupEligible, .backupState, .attestedCredentialData])
        }
    }

    @Test func theStoredCredentialKeepsTheUserAndTheRPID() async throws {
        try await withPasskeyStore { store in
            let (response, _) = try await Self.register(store)
            let credential = try #require(try await store.credentials(rpID: "example.org").first)
            #expect(credential.id == response.rawId.bytes)
            #expect(credential.user == PasskeyUser(handle: [0xA1, 0xB2, 0xC3, 0xD4], name: "alice", displayName: "Alice Liddell"))
            #expect(credential.kind == .deviceBound)
            #expect(credential.signCount == 0)
        }
    }

    @Test func aNewRegistrationReplacesTheRPsCredentialForTheSameUserHandle() async throws {
        try await withPasskeyStore { store in
            let (first, _) = try await Self.register(store)
            _ = try await Self.register(store, options: Fixtures.creationOptions(rpID: "other.example"), origin: "https://other.example")
            let (second, _) = try await Self.register(store)
            #expect(try await store.credentials(rpID: "example.org").map(\.id) == [second.rawId.bytes])
            #expect(first.rawId != second.rawId)
            #expect(try await store.credentials(rpID: nil).count == 2)
        }
    }

    // MARK: - Assertions

    @Test func anAssertionHasNoAttestedDataAndACounterThatGrowsAcrossAuthenticators() async throws {
        try await withPasskeyStore { store in
            let (registration, _) = try await Self.register(store)
            var counts: [UInt32] = []
            for _ in 0..<3 {
                // A new authenticator each time: the counter is the store's, not the instance's.
                let assertion = try await PasskeyAuthenticator(store: store).signIn(Fixtures.requestOptions(), origin: Fixtures.origin)
                let data = try AuthenticatorData(parsing: assertion.response.authenticatorData.bytes)
                #expect(data.bytes.count == 37)
                #expect(data.flags == [.userPresent])
                #expect(data.attestedCredentialData == nil)
                counts.append(data.signCount)
                #expect(assertion.id == registration.id)
                #expect(assertion.response.userHandle?.bytes == [0xA1, 0xB2, 0xC3, 0xD4])
            }
            #expect(counts == [1, 2, 3])
            #expect(try await store.credentials(rpID: "example.org").first?.signCount == 3)
        }
    }

    @Test func anAssertionIsSignedOverAuthenticatorDataAndTheClientDataHash() async throws {
        try await withPasskeyStore { store in
            let (_, object) = try await Self.register(store)
            let assertion = try await PasskeyAuthenticator(store: store).signIn(Fixtures.requestOptions(), origin: Fixtures.origin)
            let expected = #"{"type":"webauthn.get","challenge":"YSBjaGFsbGVuZ2Ugb2YgdGhpcnR5LXR3byBieXRlcyE","origin":"https://example.org","crossOrigin":false}"#
            #expect(assertion.response.clientDataJSON.bytes == Array(expected.utf8))
            let key = try #require(object.authenticatorData.attestedCredentialData).publicKey
            let signed = assertion.response.authenticatorData.bytes + Array(SHA256.hash(data: assertion.response.clientDataJSON.bytes))
            #expect(key.isValidSignature(assertion.response.signature.bytes, for: signed))
            #expect(assertion.authenticatorAttachment == "platform")
            #expect(assertion.clientExtensionResults.isEmpty)
        }
    }

    @Test func aSyncedStyleCredentialAlwaysCountsZeroAndReportsBackup() async throws {
        try await withPasskeyStore { store in
            _ = try await Self.register(store, kind: .synced)
            for _ in 0..<2 {
                let assertion = try await PasskeyAuthenticator(store: store).signIn(Fixtures.requestOptions(), origin: Fixtures.origin)
                let data = try AuthenticatorData(parsing: assertion.response.authenticatorData.bytes)
                #expect(data.signCount == 0)
                #expect(data.flags == [.userPresent, .backupEligible, .backupState])
            }
            #expect(try await store.credentials(rpID: "example.org").first?.signCount == 0)
        }
    }

    @Test func theRPIDDefaultsToTheOriginsHost() async throws {
        try await withPasskeyStore { store in
            let (_, object) = try await Self.register(store, options: Fixtures.creationOptions(rpID: nil))
            #expect(object.authenticatorData.rpIDHash == Array(SHA256.hash(data: Data("example.org".utf8))))
            _ = try await PasskeyAuthenticator(store: store).signIn(Fixtures.requestOptions(rpID: nil), origin: Fixtures.origin)
        }
    }

    // MARK: - Refusals

    @Test func aCredentialInExcludeCredentialsRefusesTheRegistrationAndStoresNothing() async throws {
        try await withPasskeyStore { store in
            let (first, _) = try await Self.register(store)
            await #expect(throws: PasskeyAuthenticatorError.credentialExcluded) {
                _ = try await Self.register(store, options: Fixtures.creationOptions(userHandle: [9], exclude: [first.rawId.bytes]))
            }
            #expect(try await store.credentials(rpID: nil).count == 1)
        }
    }

    @Test func anExcludedCredentialOfAnotherRPDoesNotRefuse() async throws {
        try await withPasskeyStore { store in
            let (first, _) = try await Self.register(store)
            _ = try await Self.register(
                store, options: Fixtures.creationOptions(rpID: "login.example.org", exclude: [first.rawId.bytes]),
                origin: "https://login.example.org")
        }
    }

    @Test func withoutES256TheRegistrationIsNotSupported() async throws {
        try await withPasskeyStore { store in
            await #expect(throws: PasskeyAuthenticatorError.noSupportedAlgorithm) {
                _ = try await Self.register(store, options: Fixtures.creationOptions(algorithms: [.edDSA, .rs256]))
            }
            _ = try await Self.register(store, options: Fixtures.creationOptions(algorithms: []))
        }
    }

    @Test(arguments: [0, 65])
    func aUserHandleOutsideOneToSixtyFourBytesIsRefused(_ length: Int) async throws {
        try await withPasskeyStore { store in
            await #expect(throws: PasskeyAuthenticatorError.invalidUserHandle(length: length)) {
                _ = try await Self.register(store, options: Fixtures.creationOptions(userHandle: [UInt8](repeating: 7, count: length)))
            }
        }
    }

    @Test(arguments: [
        ("http://example.org", "example.org", PasskeyAuthenticatorError.invalidOrigin("http://example.org")),
        ("https://example.org/sign-in", "example.org", .invalidOrigin("https://example.org/sign-in")),
        ("https://user@example.org", "example.org", .invalidOrigin("https://user@example.org")),
        ("https://evil.example", "example.org", .relyingPartyIDMismatch(rpID: "example.org", origin: "https://evil.example")),
        ("https://notexample.org", "example.org", .relyingPartyIDMismatch(rpID: "example.org", origin: "https://notexample.org")),
        ("https://example.org", "login.example.org", .relyingPartyIDMismatch(rpID: "login.example.org", origin: "https://example.org")),
        ("https://login.example.org", "org", .relyingPartyIDMismatch(rpID: "org", origin: "https://login.example.org")),
    ])
    func aWrongOriginOrRPIDIsASecurityError(_ origin: String, _ rpID: String, _ expected: PasskeyAuthenticatorError) async throws {
        try await withPasskeyStore { store in
            let authenticator = PasskeyAuthenticator(store: store)
            await #expect(throws: expected) {
                _ = try await authenticator.register(Fixtures.creationOptions(rpID: rpID), origin: origin)
            }
            await #expect(throws: expected) {
                _ = try await authenticator.signIn(Fixtures.requestOptions(rpID: rpID), origin: origin)
            }
            #expect(expected.domExceptionName == "SecurityError")
        }
    }

    @Test(arguments: [
        ("https://login.example.org", "example.org", "https://login.example.org"),
        ("https://EXAMPLE.org:443/", "example.org", "https://example.org"),
        ("https://example.org:8443", "example.org", "https://example.org:8443"),
        ("http://localhost:8080", "localhost", "http://localhost:8080"),
    ])
    func anOriginAtOrBelowTheRPIDIsAccepted(_ origin: String, _ rpID: String, _ serialized: String) async throws {
        try await withPasskeyStore { store in
            let response = try await PasskeyAuthenticator(store: store).register(Fixtures.creationOptions(rpID: rpID), origin: origin)
            let clientData = try CollectedClientData(parsing: response.response.clientDataJSON.bytes)
            #expect(clientData.origin == serialized)
        }
    }

    @Test func requiredVerificationWithoutAVerifierIsRefused() async throws {
        try await withPasskeyStore { store in
            await #expect(throws: PasskeyAuthenticatorError.userVerificationUnavailable) {
                _ = try await Self.register(store, options: Fixtures.creationOptions(userVerification: "required"))
            }
            #expect(try await store.credentials(rpID: nil).isEmpty)
            _ = try await Self.register(store)
            await #expect(throws: PasskeyAuthenticatorError.userVerificationUnavailable) {
                _ = try await PasskeyAuthenticator(store: store).signIn(
                    Fixtures.requestOptions(userVerification: "required"), origin: Fixtures.origin)
            }
            #expect(try await store.credentials(rpID: nil).first?.signCount == 0)
        }
    }

    @Test func noStoredCredentialIsNotAllowed() async throws {
        try await withPasskeyStore { store in
            let error = await #expect(throws: PasskeyAuthenticatorError.noCredentials) {
                _ = try await PasskeyAuthenticator(store: store).signIn(Fixtures.requestOptions(), origin: Fixtures.origin)
            }
            #expect(error?.domExceptionName == "NotAllowedError")
        }
    }

    @Test func theStoreKeepsEachCredentialInAPrivateFile() async throws {
        try await withTemporaryRoot { root in
            let store = FilePasskeyStore(root: root)
            let (response, _) = try await Self.register(store)
            #expect(try permissions(of: root) == 0o700)
            let file = root.appendingPathComponent(response.id + ".json")
            #expect(try permissions(of: file) == 0o600)
            let credential = try #require(try await store.credentials(rpID: nil).first)
            try await PasskeyAuthenticator(store: store).delete(credential)
            #expect(!FileManager.default.fileExists(atPath: file.path))
            await #expect(throws: PasskeyAuthenticatorError.noCredentials) {
                try await store.deleteCredential(id: credential.id)
            }
        }
    }
}
