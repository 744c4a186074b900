import CountersignCore
import Foundation
import JWTKit
import X509

/// Why a metadata BLOB was not loaded. The entries loaded before stay in use.
enum MetadataBLOBError: Error, Sendable, Equatable, CustomStringConvertible {
    /// Not a JWS, or its payload is not an MDS3 payload.
    case malformed(String)
    /// The signature, or the certificate path of `x5c` to a configured root, does not verify.
    case untrusted(String)
    /// `nextUpdate` has passed: a newer BLOB should exist, and this one may hide a revocation.
    case stale(nextUpdate: String)
    /// `no` is not above the serial of the BLOB loaded already.
    case notNewer(serial: Int64, loaded: Int64)
    /// The source could not be read.
    case unreachable(String)

    var description: String {
        switch self {
        case .malformed(let reason): "the metadata BLOB is malformed: \(reason)"
        case .untrusted(let reason): "the metadata BLOB's signature does not verify to a configured root: \(reason)"
        case .stale(let nextUpdate): "the metadata BLOB is stale: its nextUpdate, \(nextUpdate), has passed"
        case .notNewer(let serial, let loaded): "the metadata BLOB's serial number \(serial) is not above the loaded one, \(loaded)"
        case .unreachable(let reason): "the metadata BLOB could not be read: \(reason)"
        }
    }
}

extension MetadataBLOBError: WireFailure {
    /// A load an operator asked for that failed: 502, as the source's fault.
    var wireError: WireError { WireError(.badGateway, code: "metadata_not_loaded", description: description) }
}

/// A verified metadata BLOB (MDS3 §3.1.6): its serial number, when the next one is due, its
/// legal header, and its entries.
struct MetadataBLOB: Sendable {
    var serial: Int64
    /// `YYYY-MM-DD`.
    var nextUpdate: String
    var legalHeader: String?
    var entries: [AuthenticatorMetadataEntry]

    /// The largest BLOB read: the FIDO Alliance's is about 5 MB.
    static let maximumSize = 64 * 1024 * 1024

    /// Verifies `token` as MDS3 §3.2 says, at `date`: a JWS whose `x5c` chain ends at one of
    /// `roots` (RFC 5280, at `date`), signed by the first certificate of it; a payload with a
    /// serial number, a `nextUpdate` that has not passed, and entries. Whether the serial is
    /// newer than the loaded one is the caller's to judge.
    static func verify(_ token: String, roots: [Certificate], at date: Date) async throws(MetadataBLOBError) -> MetadataBLOB {
        let text = token.trimmingCharacters(in: .whitespacesAndNewlines)
        let segments = text.split(separator: ".", omittingEmptySubsequences: false)
        guard segments.count == 3, let payloadBytes = Data(base64URLEncoded: segments[1]) else {
            throw .malformed("not a compact JWS of three base64url segments")
        }
        do {
            let verifier = try X5CVerifier(rootCertificates: roots)
            _ = try await verifier.verifyJWS(text, as: Signed.self, validationTime: .fixed(date))
        } catch let error as JWTError where error.errorType == .missingX5CHeader {
            throw .untrusted("the header has no x5c certificate chain")
        } catch {
            throw .untrusted(Self.describe(error))
        }
        let payload: Payload
        do {
            payload = try JSONDecoder().decode(Payload.self, from: payloadBytes)
        } catch let error as DecodingError {
            throw .malformed(Self.describe(error))
        } catch {
            throw .malformed("\(error)")
        }
        guard MetadataDate.date(payload.nextUpdate) != nil else {
            throw .malformed("nextUpdate \"\(payload.nextUpdate)\" is not a YYYY-MM-DD date")
        }
        guard payload.nextUpdate >= MetadataDate.string(date) else { throw .stale(nextUpdate: payload.nextUpdate) }
        guard payload.no >= 0 else { throw .malformed("the serial number no is negative") }
        let statements = try Self.statements(payloadBytes, count: payload.entries.count)
        var entries: [AuthenticatorMetadataEntry] = []
        entries.reserveCapacity(payload.entries.count)
        for (index, entry) in payload.entries.enumerated() {
            entries.append(try entry.entry(index: index, statement: statements[index]))
        }
        return MetadataBLOB(serial: payload.no, nextUpdate: payload.nextUpdate, legalHeader: payload.legalHeader, entries: entries)
    }

    /// Each entry's `metadataStatement` as JSON with sorted keys, read from the payload again as
    /// a whole (the typed decoding keeps only what registrations use).
    private static func statements(_ payload: Data, count: Int) throws(MetadataBLOBError) -> [Data?] {
        guard let object = try? JSONSerialization.jsonObject(with: payload) as? [String: Any],
            let entries = object["entries"] as? [Any], entries.count == count
        else { throw .malformed("the payload's entries are not an array") }
        return entries.map { entry in
            guard let statement = (entry as? [String: Any])?["metadataStatement"] else { return nil }
            return try? JSONSerialization.data(withJSONObject: statement, options: [.sortedKeys])
        }
    }

    private static func describe(_ error: any Error) -> String {
        if let error = error as? JWTError { return error.reason ?? error.errorType.description }
        if let error = error as? DecodingError {
            switch error {
            case .keyNotFound(let key, let context):
                return "\(Self.path(context.codingPath + [key])) is missing"
            case .typeMismatch(_, let context), .valueNotFound(_, let context), .dataCorrupted(let context):
                return "\(Self.path(context.codingPath)): \(context.debugDescription)"
            @unknown default:
                return "\(error)"
            }
        }
        return "\(error)"
    }

    private static func path(_ keys: [any CodingKey]) -> String {
        keys.map { $0.intValue.map { "[\($0)]" } ?? ".\($0.stringValue)" }.joined().trimmingPrefix(".").description
    }

    /// What the signature check decodes: nothing (the payload is read once it verified).
    struct Signed: JWTPayload {
        func verify(using algorithm: some JWTAlgorithm) async throws {}
    }

    /// The members of the payload registrations use (MDS3 §3.1.6, §3.1.1).
    struct Payload: Decodable {
        var legalHeader: String?
        var no: Int64
        var nextUpdate: String
        var entries: [Entry]

        struct Entry: Decodable, Sendable {
            var aaid: String?
            var aaguid: String?
            var attestationCertificateKeyIdentifiers: [String]?
            var metadataStatement: Statement?
            var statusReports: [MetadataStatusReport]
            var timeOfLastStatusChange: String?

            struct Statement: Decodable, Sendable {
                var description: String?
                var attestationRootCertificates: [String]?
            }

            func entry(index: Int, statement: Data?) throws(MetadataBLOBError) -> AuthenticatorMetadataEntry {
                var aaguidText: String?
                if let aaguid {
                    guard let normalized = MetadataDate.normalizedAAGUID(aaguid) else {
                        throw .malformed("entries[\(index)].aaguid \"\(aaguid)\" is not a UUID")
                    }
                    aaguidText = normalized
                }
                let identifiers = try (attestationCertificateKeyIdentifiers ?? []).map { identifier throws(MetadataBLOBError) in
                    let lower = identifier.lowercased()
                    guard !lower.isEmpty, lower.count.isMultiple(of: 2), lower.allSatisfy(\.isHexDigit) else {
                        throw .malformed("entries[\(index)].attestationCertificateKeyIdentifiers has \"\(identifier)\", not hex")
                    }
                    return lower
                }
                var roots: [[UInt8]] = []
                for (rootIndex, root) in (metadataStatement?.attestationRootCertificates ?? []).enumerated() {
                    guard let der = Data(base64Encoded: root), (try? Certificate(derEncoded: Array(der))) != nil else {
                        throw .malformed("entries[\(index)].metadataStatement.attestationRootCertificates[\(rootIndex)] is not a base64 DER certificate")
                    }
                    roots.append(Array(der))
                }
                for (reportIndex, report) in statusReports.enumerated() {
                    if let date = report.effectiveDate, MetadataDate.date(date) == nil {
                        throw .malformed("entries[\(index)].statusReports[\(reportIndex)].effectiveDate \"\(date)\" is not a YYYY-MM-DD date")
                    }
                }
                return AuthenticatorMetadataEntry(
                    aaguid: aaguidText, keyIdentifiers: identifiers, description: metadataStatement?.description,
                    statusReports: statusReports, timeOfLastStatusChange: timeOfLastStatusChange, attestationRoots: roots,
                    statement: statement)
            }
        }
    }
}
