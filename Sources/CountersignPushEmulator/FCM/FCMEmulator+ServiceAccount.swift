import CountersignCore
import Crypto
import Foundation
import _CryptoExtras

extension FCMEmulator {
    /// A service account as the Google Cloud console issues it: the JSON key file an operator
    /// gives the server, and the public key the emulator checks its assertions with.
    ///
    /// ```swift
    /// let account = try FCMEmulator.ServiceAccount.make(
    ///     projectID: "countersign-test", clientEmail: "push@countersign-test.iam.gserviceaccount.com",
    ///     tokenURI: "https://oauth2.googleapis.com/token")
    /// let fcm = try await FCMEmulator.start(pki: pki, account: account)
    /// let keyFile = account.withTokenURI(fcm.tokenURL).json   // what the sender is configured with
    /// ```
    public struct ServiceAccount: Sendable {
        /// The key file: `type`, `project_id`, `private_key_id`, `private_key` (PKCS#8 PEM),
        /// `client_email`, `client_id`, `token_uri` and Google's other fields.
        public var json: String
        /// The project messages are sent to.
        public var projectID: String
        /// The account's address: the `iss` of its assertions.
        public var clientEmail: String
        /// The key id of `private_key`; an assertion's `kid`, when present, must name it.
        public var privateKeyID: String
        /// Where the key file says tokens are obtained (`token_uri`).
        public var tokenURI: String
        /// The key that checks the account's assertions.
        public var publicKey: _RSA.Signing.PublicKey
        private let privateKey: _RSA.Signing.PrivateKey
        private let clientID: String

        /// A new RSA-2048 service account whose `token_uri` is `tokenURI`.
        public static func make(projectID: String, clientEmail: String, tokenURI: String) throws -> ServiceAccount {
            let key = try _RSA.Signing.PrivateKey(keySize: .bits2048)
            let keyID = (0..<20).map { _ in String(UInt8.random(in: .min ... .max), radix: 16).leftPadded(to: 2) }.joined()
            let clientID = "1" + (0..<20).map { _ in String(Int.random(in: 0...9)) }.joined()
            return ServiceAccount(projectID: projectID, clientEmail: clientEmail, privateKeyID: keyID,
                                  tokenURI: tokenURI, privateKey: key, clientID: clientID)
        }

        private init(projectID: String, clientEmail: String, privateKeyID: String, tokenURI: String,
                     privateKey: _RSA.Signing.PrivateKey, clientID: String) {
            self.projectID = projectID
            self.clientEmail = clientEmail
            self.privateKeyID = privateKeyID
            self.tokenURI = tokenURI
            self.publicKey = privateKey.publicKey
            self.privateKey = privateKey
            self.clientID = clientID
            self.json = Self.keyFile(projectID: projectID, clientEmail: clientEmail, privateKeyID: privateKeyID,
                                     privateKey: privateKey, clientID: clientID, tokenURI: tokenURI)
        }

        /// The same account (same key) with its key file pointing `token_uri` at `tokenURI`:
        /// an emulator's port is known only once it has started.
        public func withTokenURI(_ tokenURI: String) -> ServiceAccount {
            ServiceAccount(projectID: projectID, clientEmail: clientEmail, privateKeyID: privateKeyID,
                           tokenURI: tokenURI, privateKey: privateKey, clientID: clientID)
        }

        /// A JWT-bearer assertion (RFC 7523) signed with the account's key, as Google's client
        /// libraries make it: for tests of the emulator itself, and for benchmarks that need
        /// a token without the server's sender.
        public func signedAssertion(audience: String,
                                    scope: String = "https://www.googleapis.com/auth/firebase.messaging",
                                    issuedAt: Date = Date(), lifetime: Int = 3600) throws -> String {
            let iat = Int64(issuedAt.timeIntervalSince1970.rounded(.down))
            let header = JSONValue.object(["alg": .string("RS256"), "typ": .string("JWT"), "kid": .string(privateKeyID)])
            let claims = JSONValue.object([
                "iss": .string(clientEmail), "scope": .string(scope), "aud": .string(audience),
                "iat": .integer(iat), "exp": .integer(iat + Int64(lifetime)),
            ])
            let input = header.canonicalData.base64URLEncodedString + "." + claims.canonicalData.base64URLEncodedString
            let signature = try privateKey.signature(for: Data(input.utf8), padding: .insecurePKCS1v1_5)
            return input + "." + signature.rawRepresentation.base64URLEncodedString
        }

        private static func keyFile(projectID: String, clientEmail: String, privateKeyID: String,
                                    privateKey: _RSA.Signing.PrivateKey, clientID: String, tokenURI: String) -> String {
            let fields: KeyValuePairs<String, String> = [
                "type": "service_account",
                "project_id": projectID,
                "private_key_id": privateKeyID,
                "private_key": privateKey.pkcs8PEMRepresentation + "\n",
                "client_email": clientEmail,
                "client_id": clientID,
                "auth_uri": "https://accounts.google.com/o/oauth2/auth",
                "token_uri": tokenURI,
                "auth_provider_x509_cert_url": "https://www.googleapis.com/oauth2/v1/certs",
                "client_x509_cert_url": "https://www.googleapis.com/robot/v1/metadata/x509/"
                    + (clientEmail.addingPercentEncoding(withAllowedCharacters: .urlPathAllowed) ?? clientEmail),
                "universe_domain": "googleapis.com",
            ]
            // In Google's order and layout, which a hand-written parser might depend on.
            let lines = fields.map { "  " + JSONValue.string($0.key).canonicalString + ": " + JSONValue.string($0.value).canonicalString }
            return "{\n" + lines.joined(separator: ",\n") + "\n}\n"
        }
    }
}

extension String {
    fileprivate func leftPadded(to length: Int) -> String {
        count >= length ? self : String(repeating: "0", count: length - count) + self
    }
}
