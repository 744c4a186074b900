import CountersignCore
import Crypto
import _CryptoExtras
import Foundation
import NIOSSL
import X509

/// The secret part of a push credential, as sealed at rest.
enum PushSecret: Codable, Sendable {
    case apnsCertificate(pkcs12: Data, password: String)
    case apnsToken(privateKeyPEM: String)
    case fcm(serviceAccountJSON: String)
}

/// An APNs client certificate opened from its PKCS#12 file: the certificate chain and key for
/// mutual TLS, and what an administrator is shown of it.
struct APNsCertificateFile: Sendable {
    let bundle: NIOSSLPKCS12Bundle
    let subject: String
    let notBefore: Date
    let notAfter: Date

    /// Opens and checks the file: a PKCS#12 structure, the right password, a private key, a
    /// certificate that is valid at `date`. Each failure names its cause.
    static func open(_ pkcs12: Data, password: String, at date: Date, field: String = "certificate",
                     passwordField: String = "password") throws(AdminError) -> APNsCertificateFile {
        let bytes = Array(pkcs12)
        guard !bytes.isEmpty, let contents = PKCS12Contents(bytes) else {
            throw .invalidField(field, "is not a PKCS#12 (.p12) file")
        }
        guard contents.hasVisibleKeyBag else {
            throw .invalidField(field, contents.hasEncryptedContent
                ? "holds no private key outside encrypted content; export the certificate together with its private key"
                : "holds no private key; export the certificate together with its private key")
        }
        let bundle: NIOSSLPKCS12Bundle
        do {
            bundle = try NIOSSLPKCS12Bundle(buffer: bytes, passphrase: Array(password.utf8))
        } catch {
            // BoringSSL names a wrong password INCORRECT_PASSWORD (the MAC check of the file).
            if "\(error)".contains("INCORRECT_PASSWORD") {
                throw .invalidField(passwordField, "does not open the PKCS#12 file")
            }
            throw .invalidField(field, "cannot be read with this password (the file is damaged or uses an unsupported cipher)")
        }
        guard let leaf = bundle.certificateChain.first,
              let certificate = try? Certificate(derEncoded: try leaf.toDERBytes()) else {
            throw .invalidField(field, "holds no certificate for its private key")
        }
        guard certificate.notValidAfter > date else {
            throw .invalidField(field, "the certificate expired on \(Timestamps.format(certificate.notValidAfter))")
        }
        guard certificate.notValidBefore <= date else {
            throw .invalidField(field, "the certificate is not valid before \(Timestamps.format(certificate.notValidBefore))")
        }
        return APNsCertificateFile(
            bundle: bundle, subject: certificate.subject.description, notBefore: certificate.notValidBefore,
            notAfter: certificate.notValidAfter)
    }
}

/// An APNs token-signing key (.p8): a P-256 key with Apple's 10-character key id and team id.
struct APNsSigningKey: Sendable {
    let keyID: String
    let teamID: String
    let key: P256.Signing.PrivateKey

    init(keyID: String, teamID: String, pem: String) throws(AdminError) {
        guard Self.isAppleIdentifier(keyID) else { throw .invalidField("key_id", "must be the 10-character key id Apple shows") }
        guard Self.isAppleIdentifier(teamID) else { throw .invalidField("team_id", "must be the 10-character team id") }
        guard let key = try? P256.Signing.PrivateKey(pemRepresentation: pem) else {
            throw .invalidField("private_key", "must be the P-256 private key of the .p8 file, in PEM")
        }
        self.keyID = keyID
        self.teamID = teamID
        self.key = key
    }

    private static func isAppleIdentifier(_ text: String) -> Bool {
        text.utf8.count == 10 && text.utf8.allSatisfy { (0x30...0x39).contains($0) || (0x41...0x5A).contains($0) }
    }
}

/// A Google service account, as its JSON key file: enough to get FCM access tokens.
struct FCMServiceAccount: Sendable {
    let projectID: String
    let clientEmail: String
    let privateKeyID: String?
    let key: _RSA.Signing.PrivateKey

    private struct File: Decodable {
        var type: String?
        var projectID: String?
        var privateKeyID: String?
        var privateKey: String?
        var clientEmail: String?

        enum CodingKeys: String, CodingKey {
            case type
            case projectID = "project_id"
            case privateKeyID = "private_key_id"
            case privateKey = "private_key"
            case clientEmail = "client_email"
        }
    }

    init(json: String) throws(AdminError) {
        let file: File
        do {
            file = try JSONDecoder().decode(File.self, from: Data(json.utf8))
        } catch {
            throw .invalidField("service_account", "is not a service-account JSON key file")
        }
        guard file.type == "service_account" else { throw .invalidField("service_account", "type must be service_account") }
        guard let projectID = file.projectID, !projectID.isEmpty, projectID.utf8.count <= 100,
              projectID.utf8.allSatisfy({ (0x61...0x7A).contains($0) || (0x30...0x39).contains($0) || $0 == 0x2D }) else {
            throw .invalidField("service_account", "project_id must be a Google Cloud project id")
        }
        guard let clientEmail = file.clientEmail, clientEmail.contains("@"), clientEmail.utf8.count <= 320 else {
            throw .invalidField("service_account", "client_email is required")
        }
        guard let pem = file.privateKey, let key = try? _RSA.Signing.PrivateKey(pemRepresentation: pem) else {
            throw .invalidField("service_account", "private_key must be an RSA private key in PEM")
        }
        guard key.keySizeInBits >= 2048 else {
            throw .invalidField("service_account", "private_key must be at least 2048 bits")
        }
        self.projectID = projectID
        self.clientEmail = clientEmail
        self.privateKeyID = file.privateKeyID
        self.key = key
    }
}

/// An APNs topic: the app's bundle id (alerts and background pushes, the only types sent, use
/// the bare bundle id).
enum APNsTopic {
    static func parse(_ raw: String?, field: String = "topic") throws(AdminError) -> String {
        guard let raw, !raw.isEmpty else { throw .missingField(field) }
        guard raw.utf8.count <= 255,
              raw.utf8.allSatisfy({ $0.isASCIIAlphanumeric || $0 == 0x2E || $0 == 0x2D || $0 == 0x5F }),
              raw.contains("."), !raw.hasPrefix("."), !raw.hasSuffix(".") else {
            throw .invalidField(field, "must be the app's bundle id, e.g. com.example.bank")
        }
        return raw
    }
}

extension UInt8 {
    fileprivate var isASCIIAlphanumeric: Bool {
        (0x30...0x39).contains(self) || (0x41...0x5A).contains(self) || (0x61...0x7A).contains(self)
    }
}
