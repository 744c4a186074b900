import Foundation
import Hummingbird

/// `/admin/v1/authenticator-metadata`: which FIDO metadata BLOB is loaded, an authenticator
/// model's entry, and loading it now; `/admin/v1/tenants/{tenant}/passkey-findings`: the
/// tenant's passkeys its rules or the metadata would refuse today.
struct MetadataAdminRoutes: Sendable {
    let metadata: AuthenticatorMetadataService
    let findings: PasskeyFindings
    let guardian: AdminGuard

    /// What `GET /admin/v1/authenticator-metadata` answers.
    struct Status: Encodable, Sendable {
        let configured: Bool
        let source: String?
        let state: MetadataSourceState
        /// Whether the loaded BLOB's `nextUpdate` has passed (a newer one could not be loaded).
        let stale: Bool

        enum CodingKeys: String, CodingKey {
            case configured, source, stale
        }

        func encode(to encoder: any Encoder) throws {
            try state.encode(to: encoder)
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(configured, forKey: .configured)
            try container.encode(source, forKey: .source)
            try container.encode(stale, forKey: .stale)
        }
    }

    /// An entry as `GET /admin/v1/authenticator-metadata/{aaguid}` answers it.
    struct EntryView: Encodable, Sendable {
        let aaguid: String
        let description: String?
        let status: String?
        let statusReports: [MetadataStatusReport]
        let timeOfLastStatusChange: String?
        let attestationRootCount: Int
        let refused: Bool
        let statement: JSONText?

        enum CodingKeys: String, CodingKey {
            case aaguid, description, status, refused, statement
            case statusReports = "status_reports"
            case timeOfLastStatusChange = "time_of_last_status_change"
            case attestationRootCount = "attestation_root_count"
        }
    }

    /// A metadata statement, written into the answer as the BLOB had it.
    struct JSONText: Encodable, Sendable {
        let data: Data

        func encode(to encoder: any Encoder) throws {
            try Self.encode(try JSONSerialization.jsonObject(with: data, options: [.fragmentsAllowed]), to: encoder)
        }

        private struct Key: CodingKey {
            var stringValue: String
            var intValue: Int? { nil }
            init(stringValue: String) { self.stringValue = stringValue }
            init?(intValue: Int) { nil }
        }

        private struct Element: Encodable {
            let value: Any
            func encode(to encoder: any Encoder) throws { try JSONText.encode(value, to: encoder) }
        }

        private static func encode(_ value: Any, to encoder: any Encoder) throws {
            switch value {
            case let object as [String: Any]:
                var container = encoder.container(keyedBy: Key.self)
                for (key, member) in object { try container.encode(Element(value: member), forKey: Key(stringValue: key)) }
            case let array as [Any]:
                var container = encoder.unkeyedContainer()
                for member in array { try container.encode(Element(value: member)) }
            case let text as String:
                var container = encoder.singleValueContainer()
                try container.encode(text)
            case let number as NSNumber:
                var container = encoder.singleValueContainer()
                if String(cString: number.objCType) == "c" {  // how JSONSerialization gives true and false
                    try container.encode(number.boolValue)
                } else if let integer = Int64(exactly: number) {
                    try container.encode(integer)
                } else {
                    try container.encode(number.doubleValue)
                }
            default:
                var container = encoder.singleValueContainer()
                try container.encodeNil()
            }
        }
    }

    struct Loaded: Encodable, Sendable {
        let outcome: MetadataLoadOutcome
        let state: MetadataSourceState
    }

    func register(on router: some RouterMethods<CountersignRequestContext>) {
        let base = "/admin/v1/authenticator-metadata"
        router.get(RouterPath(base)) { request, _ in
            _ = try await guardian.key(request, holding: .authenticationPolicyManage)
            return try JSON.response(try await status())
        }
        router.post(RouterPath(base + "/refresh")) { request, _ in
            _ = try await guardian.systemKey(request, holding: .tenantsManage)
            guard metadata.configuration != nil else {
                throw AdminError.conflict("no FIDO metadata source is configured: start the server with --fido-metadata")
            }
            let outcome = try await metadata.load()
            return try JSON.response(Loaded(outcome: outcome, state: try await metadata.state()))
        }
        router.get(RouterPath(base + "/{aaguid}")) { request, context in
            _ = try await guardian.key(request, holding: .authenticationPolicyManage)
            let text = try context.parameters.require("aaguid")
            guard let aaguid = MetadataDate.normalizedAAGUID(text) else {
                throw APIError.badRequest("\(text) is not an AAGUID")
            }
            guard let entry = try await metadata.snapshot().entry(aaguid: aaguid) else {
                throw AdminError.notFound("authenticator model \(aaguid)")
            }
            let latest = entry.latestStatus(at: metadata.now())
            return try JSON.response(EntryView(
                aaguid: aaguid, description: entry.description, status: latest?.status, statusReports: entry.statusReports,
                timeOfLastStatusChange: entry.timeOfLastStatusChange, attestationRootCount: entry.attestationRoots.count,
                refused: latest?.refusesRegistration ?? false, statement: entry.statement.map(JSONText.init)))
        }
        router.get("/admin/v1/tenants/{tenant}/passkey-findings") { request, context in
            let (_, tenant) = try await guardian.tenant(request, context, holding: .devicesRead)
            return try JSON.response(try await findings.list(tenant: tenant, page: try PageRequest(request)))
        }
    }

    func status() async throws -> Status {
        let state = try await metadata.state()
        let stale = state.nextUpdate.map { $0 < MetadataDate.string(metadata.now()) } ?? false
        return Status(configured: metadata.configuration != nil, source: metadata.configuration?.source, state: state, stale: stale)
    }
}
