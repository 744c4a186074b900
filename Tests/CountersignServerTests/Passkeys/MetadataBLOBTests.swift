import CountersignCore
import Foundation
import Testing
@testable import CountersignServer

/// The FIDO metadata BLOB as MDS3 §3.2 says a relying party processes it: the `x5c` chain to a
/// configured root, the signature, `nextUpdate`, the entries; and the status in force of a model.
@Suite("FIDO metadata: verifying a BLOB")
struct MetadataBLOBTests {
    static let yubiKey = "cb69481e-8ff7-4039-93ec-0a2729a154a8"
    static let revoked = "ee882879-721c-4913-9775-3dfcce97072a"

    static func entries() throws -> [[String: Any]] {
        [
            try TestMetadataService.entry(aaguid: yubiKey.uppercased(), description: "YubiKey 5 Series"),
            try TestMetadataService.entry(
                aaguid: revoked, description: "Broken Key",
                statuses: [("FIDO_CERTIFIED_L1", "2023-01-01"), ("ATTESTATION_KEY_COMPROMISE", "2024-06-01")]),
            ["attestationCertificateKeyIdentifiers": ["AABBCCDDEEFF00112233445566778899AABBCCDD"],
             "statusReports": [["status": "FIDO_CERTIFIED"]], "timeOfLastStatusChange": "2022-01-01"],
        ]
    }

    @Test("A BLOB signed under the configured root verifies: its serial, nextUpdate, legal header, and entries by AAGUID and key identifier")
    func goodBLOB() async throws {
        let service = try TestMetadataService()
        let token = try service.blob(TestMetadataService.payload(serial: 7, nextUpdate: TestMetadataService.day(30), entries: try Self.entries()))
        let blob = try await MetadataBLOB.verify(token, roots: [service.root.certificate], at: Date())
        #expect(blob.serial == 7)
        #expect(blob.nextUpdate == TestMetadataService.day(30))
        #expect(blob.legalHeader?.hasPrefix("Retrieval and use") == true)
        #expect(blob.entries.count == 3)
        let snapshot = AuthenticatorMetadataSnapshot(serial: blob.serial, entries: blob.entries)
        let yubiKey = try #require(snapshot.entry(aaguid: Self.yubiKey), "AAGUIDs are kept in lower case")
        #expect(yubiKey.description == "YubiKey 5 Series")
        #expect(yubiKey.latestStatus(at: Date())?.status == "FIDO_CERTIFIED_L1")
        let statement = try #require(yubiKey.statement)
        let object = try #require(try JSONSerialization.jsonObject(with: statement) as? [String: Any])
        #expect(object["frrThreshold"] as? Double == 0.002, "the statement is kept whole, numbers and all")
        #expect(blob.entries[2].keyIdentifiers == ["aabbccddeeff00112233445566778899aabbccdd"])
    }

    @Test("An RS256 BLOB, as the FIDO Alliance signs, verifies too")
    func rs256() async throws {
        let service = try TestMetadataService()
        let token = try service.rs256BLOB(TestMetadataService.payload(serial: 1, nextUpdate: TestMetadataService.day(1), entries: []))
        #expect(try await MetadataBLOB.verify(token, roots: [service.root.certificate], at: Date()).serial == 1)
    }

    @Test("A BLOB whose nextUpdate has passed is stale and refused")
    func staleBLOB() async throws {
        let service = try TestMetadataService()
        let yesterday = TestMetadataService.day(-1)
        let token = try service.blob(TestMetadataService.payload(serial: 8, nextUpdate: yesterday, entries: []))
        await #expect(throws: MetadataBLOBError.stale(nextUpdate: yesterday)) {
            try await MetadataBLOB.verify(token, roots: [service.root.certificate], at: Date())
        }
        let today = TestMetadataService.payload(serial: 8, nextUpdate: TestMetadataService.day(0), entries: [])
        #expect(try await MetadataBLOB.verify(try service.blob(today), roots: [service.root.certificate], at: Date()).serial == 8,
                "a nextUpdate of today has not passed")
    }

    @Test("A BLOB whose payload was changed after signing does not verify")
    func tamperedBLOB() async throws {
        let service = try TestMetadataService()
        let token = try service.blob(TestMetadataService.payload(serial: 9, nextUpdate: TestMetadataService.day(30), entries: try Self.entries()))
        var parts = token.split(separator: ".").map(String.init)
        let payloadBytes = try #require(Data(base64URLEncoded: parts[1]))
        var payload = try #require(try JSONSerialization.jsonObject(with: payloadBytes) as? [String: Any])
        var entries = try #require(payload["entries"] as? [[String: Any]])
        entries.remove(at: 1)  // the revoked model quietly gone
        payload["entries"] = entries
        parts[1] = try TestMetadataService.segment(payload)
        await #expect {
            try await MetadataBLOB.verify(parts.joined(separator: "."), roots: [service.root.certificate], at: Date())
        } throws: { error in
            guard case .untrusted = error as? MetadataBLOBError else { return false }
            return true
        }
    }

    @Test("A BLOB signed under another root, or without x5c, is untrusted")
    func wrongRoot() async throws {
        let service = try TestMetadataService()
        let other = try TestMetadataService()
        let payload = TestMetadataService.payload(serial: 3, nextUpdate: TestMetadataService.day(30), entries: [])
        await #expect {
            try await MetadataBLOB.verify(try other.blob(payload), roots: [service.root.certificate], at: Date())
        } throws: { error in
            guard case .untrusted = error as? MetadataBLOBError else { return false }
            return true
        }
        await #expect(throws: MetadataBLOBError.untrusted("the header has no x5c certificate chain")) {
            try await MetadataBLOB.verify(try service.blob(payload, x5c: false), roots: [service.root.certificate], at: Date())
        }
    }

    /// A payload member replaced (or removed), and the reason the refusal gives.
    enum Flaw: String, CaseIterable, Sendable {
        case noSerial, notADate, notAnAAGUID

        func apply(to payload: inout [String: Any]) {
            switch self {
            case .noSerial: payload["no"] = nil
            case .notADate: payload["nextUpdate"] = "2026-13-01"
            case .notAnAAGUID: payload["entries"] = [["aaguid": "not-a-uuid", "statusReports": [] as [Any]]]
            }
        }

        var reason: String {
            switch self {
            case .noSerial: "no is missing"
            case .notADate: "nextUpdate \"2026-13-01\" is not a YYYY-MM-DD date"
            case .notAnAAGUID: "entries[0].aaguid \"not-a-uuid\" is not a UUID"
            }
        }
    }

    @Test("A payload without a serial number, with a date that is none, or an AAGUID that is none, is malformed, naming the member",
          arguments: Flaw.allCases)
    func malformedPayload(flaw: Flaw) async throws {
        let service = try TestMetadataService()
        var payload = TestMetadataService.payload(serial: 4, nextUpdate: TestMetadataService.day(30), entries: [])
        flaw.apply(to: &payload)
        await #expect {
            try await MetadataBLOB.verify(try service.blob(payload), roots: [service.root.certificate], at: Date())
        } throws: { error in
            guard case .malformed(let text) = error as? MetadataBLOBError else { return false }
            return text.contains(flaw.reason)
        }
    }

    @Test("The status in force is the latest whose effective date has come; revocations and compromises refuse registration")
    func statusInForce() throws {
        func entry(_ reports: [(String, String?)]) -> AuthenticatorMetadataEntry {
            AuthenticatorMetadataEntry(
                aaguid: Self.yubiKey, keyIdentifiers: [], description: nil,
                statusReports: reports.map { MetadataStatusReport(status: $0.0, effectiveDate: $0.1) },
                timeOfLastStatusChange: nil, attestationRoots: [], statement: nil)
        }
        let now = try #require(MetadataDate.date("2026-06-15"))
        #expect(entry([("FIDO_CERTIFIED", "2024-01-01"), ("REVOKED", "2026-06-01")]).latestStatus(at: now)?.refusesRegistration == true)
        #expect(entry([("REVOKED", "2026-07-01"), ("FIDO_CERTIFIED", "2024-01-01")]).latestStatus(at: now)?.status == "FIDO_CERTIFIED",
                "a report effective only later is not in force yet, in whatever order the BLOB lists it")
        #expect(entry([("USER_VERIFICATION_BYPASS", "2025-01-01"), ("UPDATE_AVAILABLE", "2025-03-01")]).latestStatus(at: now)?.status
                == "UPDATE_AVAILABLE")
        for status in ["REVOKED", "USER_VERIFICATION_BYPASS", "ATTESTATION_KEY_COMPROMISE", "USER_KEY_REMOTE_COMPROMISE", "USER_KEY_PHYSICAL_COMPROMISE"] {
            #expect(MetadataStatusReport(status: status).refusesRegistration, "\(status)")
        }
        for status in ["FIDO_CERTIFIED_L2", "NOT_FIDO_CERTIFIED", "UPDATE_AVAILABLE", "SELF_ASSERTION_SUBMITTED"] {
            #expect(!MetadataStatusReport(status: status).refusesRegistration, "\(status)")
        }
    }
}
