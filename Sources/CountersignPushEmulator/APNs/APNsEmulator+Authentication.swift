import Crypto

extension APNsEmulator {
    /// How senders must prove who they are, one of the two ways Apple offers.
    public enum ClientAuthentication: Sendable {
        /// Provider tokens (ES256 JWTs in `authorization: bearer …`) checked against these keys,
        /// as for a `.p8` key downloaded from the developer portal.
        case token([APNsProviderKey])
        /// TLS client certificates issued by the CA at this PEM path are required; a handshake
        /// without one fails, as with an uploaded push certificate.
        case certificate(trustedCAPath: String)
    }

    /// The public half of an APNs auth key (`.p8`): the emulator knows it under its key id and
    /// team id, as Apple does.
    ///
    /// ```swift
    /// let signingKey = P256.Signing.PrivateKey()
    /// let key = APNsEmulator.APNsProviderKey(keyID: "ABC123DEFG", teamID: "DEF123GHIJ",
    ///                                        publicKey: signingKey.publicKey)
    /// ```
    public struct APNsProviderKey: Sendable {
        /// The 10-character key id a provider token names in its `kid` header.
        public var keyID: String
        /// The team id a provider token must name as its issuer (`iss`).
        public var teamID: String
        /// The key its signatures must verify with.
        public var publicKey: P256.Signing.PublicKey

        /// A key known under `keyID` for team `teamID`.
        public init(keyID: String, teamID: String, publicKey: P256.Signing.PublicKey) {
            self.keyID = keyID
            self.teamID = teamID
            self.publicKey = publicKey
        }
    }
}
