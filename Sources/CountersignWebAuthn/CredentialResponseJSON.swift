import CountersignCore

/// `RegistrationResponseJSON` (WebAuthn Level 3 §5.1, `PublicKeyCredential.toJSON()` after
/// `create()`). Only `attestationObject` and `clientDataJSON` carry what a relying party
/// verifies; the other response members are conveniences it may ignore.
public typealias RegistrationResponseJSON = PublicKeyCredentialJSON<AuthenticatorAttestationResponseJSON>

/// `AuthenticationResponseJSON` (WebAuthn Level 3 §5.1, `toJSON()` after `get()`).
/// `userHandle` is required for a usernameless sign-in and optional otherwise.
public typealias AuthenticationResponseJSON = PublicKeyCredentialJSON<AuthenticatorAssertionResponseJSON>

/// A `PublicKeyCredential` in its JSON form: the members both ceremonies share around the
/// authenticator's response. `clientExtensionResults` defaults to empty when absent.
public struct PublicKeyCredentialJSON<Response: Codable & Sendable & Equatable>: Codable, Sendable, Equatable {
    public var id: String
    public var rawId: Base64URLBytes
    public var response: Response
    public var authenticatorAttachment: String?
    public var clientExtensionResults: [String: JSONValue]
    public var type: String

    public init(
        rawId: [UInt8], response: Response, authenticatorAttachment: String? = nil,
        clientExtensionResults: [String: JSONValue] = [:]
    ) {
        id = Base64URLBytes(rawId).base64URL
        self.rawId = Base64URLBytes(rawId)
        self.response = response
        self.authenticatorAttachment = authenticatorAttachment
        self.clientExtensionResults = clientExtensionResults
        type = "public-key"
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        id = try container.decode(String.self, forKey: .id)
        rawId = try container.decode(Base64URLBytes.self, forKey: .rawId)
        response = try container.decode(Response.self, forKey: .response)
        authenticatorAttachment = try container.decodeIfPresent(String.self, forKey: .authenticatorAttachment)
        clientExtensionResults = try container.decodeIfPresent([String: JSONValue].self, forKey: .clientExtensionResults) ?? [:]
        type = try container.decode(String.self, forKey: .type)
    }
}

/// `AuthenticatorAttestationResponseJSON`: what `create()` returns.
public struct AuthenticatorAttestationResponseJSON: Codable, Sendable, Equatable {
    public var clientDataJSON: Base64URLBytes
    public var authenticatorData: Base64URLBytes?
    public var transports: [String]?
    public var publicKey: Base64URLBytes?
    public var publicKeyAlgorithm: Int64?
    public var attestationObject: Base64URLBytes

    public init(
        clientDataJSON: Base64URLBytes, authenticatorData: Base64URLBytes? = nil, transports: [String]? = nil,
        publicKey: Base64URLBytes? = nil, publicKeyAlgorithm: Int64? = nil, attestationObject: Base64URLBytes
    ) {
        self.clientDataJSON = clientDataJSON
        self.authenticatorData = authenticatorData
        self.transports = transports
        self.publicKey = publicKey
        self.publicKeyAlgorithm = publicKeyAlgorithm
        self.attestationObject = attestationObject
    }
}

/// `AuthenticatorAssertionResponseJSON`: what `get()` returns.
public struct AuthenticatorAssertionResponseJSON: Codable, Sendable, Equatable {
    public var clientDataJSON: Base64URLBytes
    public var authenticatorData: Base64URLBytes
    public var signature: Base64URLBytes
    public var userHandle: Base64URLBytes?

    public init(
        clientDataJSON: Base64URLBytes, authenticatorData: Base64URLBytes, signature: Base64URLBytes, userHandle: Base64URLBytes?
    ) {
        self.clientDataJSON = clientDataJSON
        self.authenticatorData = authenticatorData
        self.signature = signature
        self.userHandle = userHandle
    }
}
