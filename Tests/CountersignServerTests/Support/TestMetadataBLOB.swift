import Crypto
import CountersignCBOR
import CountersignCore
import CountersignWebAuthn
import Foundation
import Hummingbird
import NIOCore
import ServiceLifecycle
import SwiftASN1
import Synchronization
import X509
import _CryptoExtras
@testable import CountersignServer

/// A metadata service of the tests' own: a root, a signing certificate it issued, and BLOBs
/// written and signed here (by hand, not with the server's JWT library) as MDS3 §3.1.6 lays them
/// out. What the server does with them is what it would do with the FIDO Alliance's.
struct TestMetadataService {
    let root: TestAttestationCA
    let signingKey = P256.Signing.PrivateKey()
    let signer: Certificate

    init() throws {
        root = try TestAttestationCA()
        signer = try root.issue(
            subject: try DistinguishedName { CommonName("Countersign test metadata signer") },
            key: .init(signingKey.publicKey),
            extensions: [try TestAttestationCA.basicConstraints(isCA: false)])
    }

    /// One entry: the model `aaguid`, its reports (status and effective date, oldest first),
    /// and the roots its attestation certificates chain to.
    static func entry(
        aaguid: String, description: String, statuses: [(String, String)] = [("FIDO_CERTIFIED_L1", "2024-03-01")],
        roots: [Certificate] = []
    ) throws -> [String: Any] {
        [
            "aaguid": aaguid,
            "metadataStatement": [
                "aaguid": aaguid, "description": description, "schema": 3, "protocolFamily": "fido2",
                "authenticatorVersion": 5, "upv": [["major": 1, "minor": 1]], "cryptoStrength": 128,
                "attestationRootCertificates": try roots.map { Data(try TestAttestationCA.encoded($0)).base64EncodedString() },
                "userVerificationDetails": [[["userVerificationMethod": "presence_internal"]]],
                "frrThreshold": 0.002,
            ] as [String: Any],
            "statusReports": statuses.map { ["status": $0.0, "effectiveDate": $0.1] },
            "timeOfLastStatusChange": statuses.last?.1 ?? "2024-03-01",
        ]
    }

    /// A payload of `entries` with serial `serial`, due again on `nextUpdate`.
    static func payload(serial: Int, nextUpdate: String, entries: [[String: Any]]) -> [String: Any] {
        [
            "legalHeader": "Retrieval and use of this BLOB indicates acceptance of the tests' terms.",
            "no": serial, "nextUpdate": nextUpdate, "entries": entries,
        ]
    }

    /// The BLOB: an ES256 JWS with the signing certificate in `x5c` (left out with `x5c: false`).
    func blob(_ payload: [String: Any], x5c: Bool = true) throws -> String {
        var header: [String: Any] = ["alg": "ES256", "typ": "JWT"]
        if x5c { header["x5c"] = [Data(try TestAttestationCA.encoded(signer)).base64EncodedString()] }
        let input = try Self.segment(header) + "." + Self.segment(payload)
        let signature = try signingKey.signature(for: Data(input.utf8)).rawRepresentation
        return input + "." + signature.base64URLEncodedString
    }

    /// The same, signed RS256 by an RSA key this root certifies, as the FIDO Alliance signs.
    func rs256BLOB(_ payload: [String: Any]) throws -> String {
        let key = try _RSA.Signing.PrivateKey(keySize: .bits2048)
        let certificate = try root.issue(
            subject: try DistinguishedName { CommonName("Countersign test metadata signer (RSA)") },
            key: .init(key.publicKey), extensions: [try TestAttestationCA.basicConstraints(isCA: false)])
        let header: [String: Any] = [
            "alg": "RS256", "typ": "JWT", "x5c": [Data(try TestAttestationCA.encoded(certificate)).base64EncodedString()],
        ]
        let input = try Self.segment(header) + "." + Self.segment(payload)
        let signature = try key.signature(for: Data(input.utf8), padding: .insecurePKCS1v1_5).rawRepresentation
        return input + "." + signature.base64URLEncodedString
    }

    static func segment(_ object: [String: Any]) throws -> String {
        try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys]).base64URLEncodedString
    }

    /// Writes `blob` to a file of its own and returns the configuration that loads it.
    func configuration(serving blob: String, in directory: URL) throws -> MetadataConfiguration {
        let file = directory.appendingPathComponent("mds-\(UUID().uuidString).jwt")
        try Data(blob.utf8).write(to: file)
        return MetadataConfiguration(source: file.path, roots: [root.certificate])
    }

    /// The date as MDS writes it, `days` from now.
    static func day(_ days: Int, from date: Date = Date()) -> String {
        MetadataDate.string(date.addingTimeInterval(TimeInterval(days) * 86_400))
    }
}

/// An authenticator model of the tests': its AAGUID, an attestation CA, and a packed statement
/// by an attestation certificate that CA issued for the model.
struct TestAuthenticatorModel: Sendable {
    let aaguid: [UInt8]
    let ca: TestAttestationCA
    let key = P256.Signing.PrivateKey()
    let certificate: [UInt8]

    init(aaguid: String) throws {
        guard let uuid = UUID(uuidString: aaguid) else { throw MetadataBLOBError.malformed("\(aaguid) is not a UUID") }
        self.aaguid = uuid.uuidBytes
        ca = try TestAttestationCA()
        certificate = try TestAttestationCA.encoded(try ca.issue(
            subject: try TestAttestationCA.packedSubject(), key: .init(key.publicKey),
            extensions: [try TestAttestationCA.basicConstraints(isCA: false), try TestAttestationCA.aaguid(self.aaguid)]))
    }

    var aaguidString: String { MetadataDate.aaguidString(aaguid) }

    /// Makes `parts` this model's: its AAGUID, and a packed statement by its attestation key.
    func attest(_ parts: inout WebAuthnTestAuthenticator.Parts) {
        parts.aaguid = aaguid
        parts.format = "packed"
        let (key, certificate) = (key, certificate)
        parts.statement = { authenticatorData, clientDataHash in
            Self.statement(key: key, certificate: certificate, signing: authenticatorData + clientDataHash)
        }
    }

    /// A packed statement (§8.2) signing `data` with `key`, whose certificate is `certificate`.
    static func statement(key: P256.Signing.PrivateKey, certificate: [UInt8], signing data: [UInt8]) -> CBORMap {
        CBORMap([
            .init(key: .text("alg"), value: .init(COSEAlgorithm.es256.rawValue)),
            .init(key: .text("sig"), value: .bytes(Array((try? key.signature(for: data).derRepresentation) ?? Data()))),
            .init(key: .text("x5c"), value: .array([.bytes(certificate)])),
        ])
    }
}

extension UUID {
    var uuidBytes: [UInt8] {
        withUnsafeBytes(of: uuid) { Array($0) }
    }
}

/// The metadata service's web server, as `https://mds3.fidoalliance.org/` is one: answers
/// `GET /` with the BLOB it is given, or with another status.
final class TestMetadataSource: Sendable {
    private let answer = Mutex<(status: Int, body: String)>((404, ""))
    private let group = Mutex<ServiceGroup?>(nil)
    private let task = Mutex<Task<Void, any Error>?>(nil)
    private let boundPort = Mutex(0)
    private let requests = Mutex(0)

    var url: String { "http://127.0.0.1:\(boundPort.withLock { $0 })/" }
    var requestCount: Int { requests.withLock { $0 } }

    func serve(_ body: String, status: Int = 200) {
        answer.withLock { $0 = (status, body) }
    }

    static func start() async throws -> TestMetadataSource {
        let source = TestMetadataSource()
        let router = Router(context: BasicRequestContext.self)
        router.get("/") { _, _ in
            source.requests.withLock { $0 += 1 }
            let (status, body) = source.answer.withLock { $0 }
            return Response(
                status: .init(code: status), headers: [.contentType: "application/jwt"],
                body: .init(byteBuffer: ByteBuffer(string: body)))
        }
        let (ports, continuation) = AsyncStream.makeStream(of: Int.self, bufferingPolicy: .bufferingNewest(1))
        let application = Application(
            router: router, configuration: .init(address: .hostname("127.0.0.1", port: 0), serverName: "mds"),
            onServerRunning: { channel in continuation.yield(channel.localAddress?.port ?? 0) }, logger: testLogger)
        let group = ServiceGroup(configuration: .init(services: [application], gracefulShutdownSignals: [], logger: testLogger))
        source.group.withLock { $0 = group }
        source.task.withLock { $0 = Task { try await group.run() } }
        for await port in ports {
            source.boundPort.withLock { $0 = port }
            break
        }
        return source
    }

    func stop() async throws {
        await group.withLock { $0 }?.triggerGracefulShutdown()
        try await task.withLock { $0 }?.value
    }
}
