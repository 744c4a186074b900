import CountersignCore

/// `PublicKeyCredentialCreationOptionsJSON` (WebAuthn Level 3 §5.1.3 `parseCreationOptionsFromJSON`):
/// what a relying party hands the browser's `navigator.credentials.create()` (through
/// `PublicKeyCredential.parseCreationOptionsFromJSON`) or an SDK authenticator. Members the
/// specification gives defaults take them when absent, so options from any relying party decode.
public struct PublicKeyCredentialCreationOptionsJSON: Codable, Sendable, Equatable {
    public var rp: RelyingPartyEntity
    public var user: UserEntity
    public var challenge: Base64URLBytes
    public var pubKeyCredParams: [CredentialParameters]
    public var timeout: UInt32?
    public var excludeCredentials: [CredentialDescriptor]
    public var authenticatorSelection: AuthenticatorSelection?
    public var hints: [String]
    public var attestation: String
    public var attestationFormats: [String]
    public var extensions: [String: JSONValue]?

    public init(
        rp: RelyingPartyEntity, user: UserEntity, challenge: Base64URLBytes, pubKeyCredParams: [CredentialParameters],
        timeout: UInt32? = nil, excludeCredentials: [CredentialDescriptor] = [],
        authenticatorSelection: AuthenticatorSelection? = nil, hints: [String] = [], attestation: String = "none",
        attestationFormats: [String] = [], extensions: [String: JSONValue]? = nil
    ) {
        self.rp = rp
        self.user = user
        self.challenge = challenge
        self.pubKeyCredParams = pubKeyCredParams
        self.timeout = timeout
        self.excludeCredentials = excludeCredentials
        self.authenticatorSelection = authenticatorSelection
        self.hints = hints
        self.attestation = attestation
        self.attestationFormats = attestationFormats
        self.extensions = extensions
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        rp = try container.decode(RelyingPartyEntity.self, forKey: .rp)
        user = try container.decode(UserEntity.self, forKey: .user)
        challenge = try container.decode(Base64URLBytes.self, forKey: .challenge)
        pubKeyCredParams = try container.decode([CredentialParameters].self, forKey: .pubKeyCredParams)
        timeout = try container.decodeIfPresent(UInt32.self, forKey: .timeout)
        excludeCredentials = try container.decodeIfPresent([CredentialDescriptor].self, forKey: .excludeCredentials) ?? []
        authenticatorSelection = try container.decodeIfPresent(AuthenticatorSelection.self, forKey: .authenticatorSelection)
        hints = try container.decodeIfPresent([String].self, forKey: .hints) ?? []
        attestation = try container.decodeIfPresent(String.self, forKey: .attestation) ?? "none"
        attestationFormats = try container.decodeIfPresent([String].self, forKey: .attestationFormats) ?? []
        extensions = try container.decodeIfPresent([String: JSONValue].self, forKey: .extensions)
    }
}

/// `PublicKeyCredentialRequestOptionsJSON` (WebAuthn Level 3 §5.1.4): what `get()` receives.
/// An empty `allowCredentials` asks for a discoverable credential (usernameless sign-in).
public struct PublicKeyCredentialRequestOptionsJSON: Codable, Sendable, Equatable {
    public var challenge: Base64URLBytes
    public var timeout: UInt32?
    public var rpId: String?
    public var allowCredentials: [CredentialDescriptor]
    public var userVerification: String
    public var hints: [String]
    public var extensions: [String: JSONValue]?

    public init(
        challenge: Base64URLBytes, timeout: UInt32? = nil, rpId: String? = nil, allowCredentials: [CredentialDescriptor] = [],
        userVerification: String = "preferred", hints: [String] = [], extensions: [String: JSONValue]? = nil
    ) {
        self.challenge = challenge
        self.timeout = timeout
        self.rpId = rpId
        self.allowCredentials = allowCredentials
        self.userVerification = userVerification
        self.hints = hints
        self.extensions = extensions
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        challenge = try container.decode(Base64URLBytes.self, forKey: .challenge)
        timeout = try container.decodeIfPresent(UInt32.self, forKey: .timeout)
        rpId = try container.decodeIfPresent(String.self, forKey: .rpId)
        allowCredentials = try container.decodeIfPresent([CredentialDescriptor].self, forKey: .allowCredentials) ?? []
        userVerification = try container.decodeIfPresent(String.self, forKey: .userVerification) ?? "preferred"
        hints = try container.decodeIfPresent([String].self, forKey: .hints) ?? []
        extensions = try container.decodeIfPresent([String: JSONValue].self, forKey: .extensions)
    }
}

/// `PublicKeyCredentialRpEntity`: `id` is the RP ID (a registrable domain); absent, the
/// client uses the origin's effective domain.
public struct RelyingPartyEntity: Codable, Sendable, Equatable {
    public var id: String?
    public var name: String

    public init(id: String?, name: String) {
        self.id = id
        self.name = name
    }
}

/// `PublicKeyCredentialUserEntityJSON`: `id` is the user handle, 1 to 64 opaque bytes that
/// carry no personal data.
public struct UserEntity: Codable, Sendable, Equatable {
    public var id: Base64URLBytes
    public var name: String
    public var displayName: String

    public init(id: Base64URLBytes, name: String, displayName: String) {
        self.id = id
        self.name = name
        self.displayName = displayName
    }
}

/// `PublicKeyCredentialParameters`: a credential type and a COSE algorithm the RP accepts.
public struct CredentialParameters: Codable, Sendable, Equatable {
    public var type: String
    public var alg: Int64

    public init(alg: COSEAlgorithm) {
        type = "public-key"
        self.alg = alg.rawValue
    }
}

/// `PublicKeyCredentialDescriptorJSON`: one credential, in `excludeCredentials` or
/// `allowCredentials`.
public struct CredentialDescriptor: Codable, Sendable, Equatable {
    public var type: String
    public var id: Base64URLBytes
    public var transports: [String]?

    public init(id: [UInt8], transports: [String]? = nil) {
        type = "public-key"
        self.id = Base64URLBytes(id)
        self.transports = transports
    }
}

/// `AuthenticatorSelectionCriteria`.
public struct AuthenticatorSelection: Codable, Sendable, Equatable {
    public var authenticatorAttachment: String?
    public var residentKey: String?
    public var requireResidentKey: Bool?
    public var userVerification: String?

    public init(
        authenticatorAttachment: String? = nil, residentKey: String? = nil, requireResidentKey: Bool? = nil,
        userVerification: String? = nil
    ) {
        self.authenticatorAttachment = authenticatorAttachment
        self.residentKey = residentKey
        self.requireResidentKey = requireResidentKey
        self.userVerification = userVerification
    }
}
