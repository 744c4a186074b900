import Foundation
import X509

/// One status report of an authenticator model in FIDO metadata (MDS3 §3.1.3): what the FIDO
/// Alliance or the vendor said of it, and from when.
struct MetadataStatusReport: Codable, Sendable, Equatable {
    /// An `AuthenticatorStatus` (MDS3 §3.1.4), such as `FIDO_CERTIFIED_L1` or `REVOKED`.
    var status: String
    /// From when the status holds (`YYYY-MM-DD`); nil: as long as the report is there.
    var effectiveDate: String?
    var authenticatorVersion: UInt64?
    var url: String?
    var certificationDescriptor: String?
    var certificateNumber: String?

    /// The statuses under which no new credential of the model is registered: the model is
    /// withdrawn, or something it promises (its attestation key, its users' keys, its user
    /// verification) is known to be broken.
    static let refusing: Set<String> = [
        "REVOKED", "USER_VERIFICATION_BYPASS", "ATTESTATION_KEY_COMPROMISE", "USER_KEY_REMOTE_COMPROMISE",
        "USER_KEY_PHYSICAL_COMPROMISE",
    ]

    var refusesRegistration: Bool { Self.refusing.contains(status) }
}

/// What Countersign keeps of one entry of the FIDO metadata BLOB (MDS3 §3.1.1): the model it
/// names (by AAGUID for FIDO2 authenticators, by the key identifiers of its attestation
/// certificates for U2F ones), its status reports, the roots its attestation certificates chain
/// to, and the metadata statement as the BLOB had it.
struct AuthenticatorMetadataEntry: Sendable, Equatable {
    /// The AAGUID in lower-case 8-4-4-4-12 form.
    var aaguid: String?
    /// U2F authenticators: the hex SHA-1 of each attestation certificate's public key.
    var keyIdentifiers: [String]
    var description: String?
    var statusReports: [MetadataStatusReport]
    var timeOfLastStatusChange: String?
    /// `attestationRootCertificates` of the statement, DER.
    var attestationRoots: [[UInt8]]
    /// The metadata statement, as JSON with sorted keys; nil if the entry had none.
    var statement: Data?

    /// The report in force at `date`: of those whose effective date has come (or that have
    /// none), the one with the latest date, the last of equals as the BLOB lists them.
    func latestStatus(at date: Date) -> MetadataStatusReport? {
        let today = MetadataDate.string(date)
        return statusReports.enumerated()
            .filter { ($0.element.effectiveDate ?? "") <= today }
            .max { ($0.element.effectiveDate ?? "", $0.offset) < ($1.element.effectiveDate ?? "", $1.offset) }?.element
    }

    /// How refusals and findings name a model: its description with its AAGUID, or the AAGUID
    /// alone when the metadata has no entry for it.
    static func modelName(_ entry: AuthenticatorMetadataEntry?, aaguid: String) -> String {
        entry?.description.map { "\($0) (\(aaguid))" } ?? aaguid
    }

    /// The attestation roots that parse as certificates.
    var rootCertificates: [Certificate] { attestationRoots.compactMap { try? Certificate(derEncoded: $0) } }
}

/// The entries of the loaded BLOB, looked up the way a registration needs them. Immutable; the
/// service swaps in a new one when another BLOB is loaded.
struct AuthenticatorMetadataSnapshot: Sendable {
    static let empty = AuthenticatorMetadataSnapshot(serial: nil, entries: [])

    /// The BLOB's `no`; nil: no BLOB loaded.
    let serial: Int64?
    private let byAAGUID: [String: AuthenticatorMetadataEntry]
    private let byKeyIdentifier: [String: AuthenticatorMetadataEntry]

    init(serial: Int64?, entries: [AuthenticatorMetadataEntry]) {
        self.serial = serial
        var byAAGUID: [String: AuthenticatorMetadataEntry] = [:]
        var byKeyIdentifier: [String: AuthenticatorMetadataEntry] = [:]
        for entry in entries {
            if let aaguid = entry.aaguid { byAAGUID[aaguid] = entry }
            for identifier in entry.keyIdentifiers { byKeyIdentifier[identifier] = entry }
        }
        self.byAAGUID = byAAGUID
        self.byKeyIdentifier = byKeyIdentifier
    }

    func entry(aaguid: String) -> AuthenticatorMetadataEntry? { byAAGUID[aaguid] }

    /// The entry for a credential: by its AAGUID, or for a U2F authenticator (whose AAGUID is
    /// all zeros) by the key identifier of its attestation certificate.
    func entry(aaguid: [UInt8], attestationCertificate: [UInt8]?) -> AuthenticatorMetadataEntry? {
        if aaguid.contains(where: { $0 != 0 }) { return byAAGUID[MetadataDate.aaguidString(aaguid)] }
        guard let der = attestationCertificate, let identifier = MetadataKeyIdentifier.of(certificate: der) else { return nil }
        return byKeyIdentifier[identifier]
    }
}

/// The spellings FIDO metadata uses: dates as `YYYY-MM-DD` in UTC, AAGUIDs as UUID strings.
enum MetadataDate {
    private static let calendar: Calendar = {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        return calendar
    }()

    static func string(_ date: Date) -> String {
        let parts = calendar.dateComponents([.year, .month, .day], from: date)
        return String(format: "%04d-%02d-%02d", parts.year ?? 0, parts.month ?? 0, parts.day ?? 0)
    }

    /// The start of the day a `YYYY-MM-DD` string names, in UTC; nil if it names none.
    static func date(_ text: String) -> Date? {
        let parts = text.split(separator: "-", omittingEmptySubsequences: false)
        guard parts.count == 3, parts[0].count == 4, parts[1].count == 2, parts[2].count == 2,
            parts.allSatisfy({ $0.allSatisfy(\.isASCII) && $0.allSatisfy(\.isNumber) }),
            let year = Int(parts[0]), let month = Int(parts[1]), let day = Int(parts[2]),
            let date = calendar.date(from: DateComponents(year: year, month: month, day: day)),
            string(date) == text
        else { return nil }
        return date
    }

    static func aaguidString(_ bytes: [UInt8]) -> String {
        let hex = bytes.map { String(format: "%02x", $0) }.joined()
        guard hex.count == 32 else { return hex }
        var text = hex
        for offset in [20, 16, 12, 8] { text.insert("-", at: text.index(text.startIndex, offsetBy: offset)) }
        return text
    }

    /// A UUID string in the lower-case form entries are kept by; nil if `text` is none.
    static func normalizedAAGUID(_ text: String) -> String? {
        let lower = text.lowercased()
        let groups = lower.split(separator: "-", omittingEmptySubsequences: false).map(\.count)
        guard groups == [8, 4, 4, 4, 12], lower.allSatisfy({ $0 == "-" || $0.isHexDigit }) else { return nil }
        return lower
    }
}

/// The key identifier MDS3 names U2F authenticators by: the hex SHA-1 of the attestation
/// certificate's `subjectPublicKey` bit string (RFC 5280 §4.2.1.2, method 1).
enum MetadataKeyIdentifier {
    static func of(certificate der: [UInt8]) -> String? {
        guard let certificate = try? Certificate(derEncoded: der) else { return nil }
        return of(publicKey: certificate.publicKey)
    }

    static func of(publicKey: Certificate.PublicKey) -> String? {
        let identifier = SubjectKeyIdentifier(hash: publicKey)
        return identifier.keyIdentifier.map { String(format: "%02x", $0) }.joined()
    }
}
