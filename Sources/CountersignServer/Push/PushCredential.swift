import CountersignCore
import Foundation

/// A tenant's credential for a push provider. What may be shown is in the clear (`summary`);
/// the secret parts are sealed under the master key and opened only to send.
public struct PushCredential: Sendable, Equatable {
    public enum Kind: String, Codable, Sendable, CaseIterable {
        /// APNs with a TLS client certificate (PKCS#12), one per client app key.
        case apnsCertificate = "apns-certificate"
        /// APNs with an ES256 provider token signed by a .p8 key.
        case apnsToken = "apns-token"
        /// FCM HTTP v1 with a Google service account.
        case fcm = "fcm"

        public var provider: PushRegistration.Provider { self == .fcm ? .fcm : .apns }
    }

    /// APNs has a development (sandbox) and a production service; a device token belongs to one.
    public enum Environment: String, Codable, Sendable {
        case sandbox, production
    }

    public var id: String
    public var tenantID: String
    public var kind: Kind
    /// The CyberArk-style client app key of an APNs certificate; "" for the other kinds.
    public var clientAppKey: String
    public var environment: Environment?
    /// The APNs topic (the app's bundle id).
    public var topic: String?
    public var summary: PushCredentialSummary
    public var createdAt: Date
    public var updatedAt: Date

    /// The AAD that binds the sealed secret to this row.
    var sealingContext: String { "push-credential:\(id)" }
}

/// What an administrator is shown of a credential: never a key, a password or a certificate
/// file, only what tells credentials apart and when they stop working.
public struct PushCredentialSummary: Codable, Sendable, Equatable {
    /// APNs certificate: the subject and validity of the client certificate.
    public var certificateSubject: String?
    public var certificateNotBefore: Date?
    public var certificateNotAfter: Date?
    /// APNs token: the key id and team id.
    public var keyID: String?
    public var teamID: String?
    /// FCM: the project and the service account's address and key id.
    public var projectID: String?
    public var clientEmail: String?
    public var privateKeyID: String?

    public init() {}

    enum CodingKeys: String, CodingKey {
        case certificateSubject = "certificate_subject"
        case certificateNotBefore = "certificate_not_before"
        case certificateNotAfter = "certificate_not_after"
        case keyID = "key_id"
        case teamID = "team_id"
        case projectID = "project_id"
        case clientEmail = "client_email"
        case privateKeyID = "private_key_id"
    }
}

/// The administration API's view of a credential.
public struct PushCredentialRecord: Encodable, Sendable {
    public var credential: PushCredential
    /// Whether this is the credential the tenant sends with (the most recently set one of its
    /// provider).
    public var active: Bool

    enum CodingKeys: String, CodingKey {
        case id, kind, provider, environment, topic, summary, active
        case clientAppKey = "client_app_key"
        case createdAt = "created_at"
        case updatedAt = "updated_at"
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(credential.id, forKey: .id)
        try container.encode(credential.kind, forKey: .kind)
        try container.encode(credential.kind.provider, forKey: .provider)
        if !credential.clientAppKey.isEmpty { try container.encode(credential.clientAppKey, forKey: .clientAppKey) }
        try container.encodeIfPresent(credential.environment, forKey: .environment)
        try container.encodeIfPresent(credential.topic, forKey: .topic)
        try container.encode(credential.summary, forKey: .summary)
        try container.encode(active, forKey: .active)
        try container.encode(credential.createdAt, forKey: .createdAt)
        try container.encode(credential.updatedAt, forKey: .updatedAt)
    }
}

/// The storage of push credentials.
public protocol PushCredentialRepository: Sendable {
    /// The credential of this tenant, kind and client app key, if one is set.
    func find(tenantID: String, kind: PushCredential.Kind, clientAppKey: String, on executor: any SQLExecutor) async throws
        -> PushCredential?
    func insert(_ credential: PushCredential, sealedSecret: Data, on executor: any SQLExecutor) async throws
    /// Replaces the fields and sealed secret of a stored credential (same id).
    func replace(_ credential: PushCredential, sealedSecret: Data, on executor: any SQLExecutor) async throws
    func list(tenantID: String, on executor: any SQLExecutor) async throws -> [PushCredential]
    /// The credential a tenant sends with for `provider`: the most recently set one.
    func active(tenantID: String, provider: PushRegistration.Provider, on executor: any SQLExecutor) async throws
        -> (PushCredential, Data)?
    /// Deletes the credential and returns it; nil if there was none.
    func delete(tenantID: String, kind: PushCredential.Kind, clientAppKey: String, on executor: any SQLExecutor) async throws
        -> PushCredential?
}

public struct SQLPushCredentialRepository: PushCredentialRepository {
    public init() {}

    private typealias Row = PushCredentialRow

    public func find(tenantID: String, kind: PushCredential.Kind, clientAppKey: String, on executor: any SQLExecutor)
        async throws -> PushCredential? {
        try await executor.first(
            """
            SELECT \(raw: Row.columns) FROM push_credentials
            WHERE tenant_id = \(tenantID) AND kind = \(kind) AND client_app_key = \(clientAppKey)
            """, as: Row.self
        )?.credential()
    }

    public func insert(_ credential: PushCredential, sealedSecret: Data, on executor: any SQLExecutor) async throws {
        try await executor.run(
            """
            INSERT INTO push_credentials (id, tenant_id, provider, kind, client_app_key, environment, topic, summary,
                sealed_secret, created_at, updated_at)
            VALUES (\(credential.id), \(credential.tenantID), \(credential.kind.provider), \(credential.kind),
                \(credential.clientAppKey), \(credential.environment), \(credential.topic),
                \(try Self.summaryText(credential)), \(sealedSecret), \(credential.createdAt), \(credential.updatedAt))
            """)
    }

    public func replace(_ credential: PushCredential, sealedSecret: Data, on executor: any SQLExecutor) async throws {
        try await executor.run(
            """
            UPDATE push_credentials
            SET environment = \(credential.environment), topic = \(credential.topic),
                summary = \(try Self.summaryText(credential)), sealed_secret = \(sealedSecret),
                updated_at = \(credential.updatedAt)
            WHERE id = \(credential.id)
            """)
    }

    private static func summaryText(_ credential: PushCredential) throws -> String {
        String(decoding: try JSON.encode(credential.summary), as: UTF8.self)
    }

    public func list(tenantID: String, on executor: any SQLExecutor) async throws -> [PushCredential] {
        try await executor.all(
            """
            SELECT \(raw: Row.columns) FROM push_credentials
            WHERE tenant_id = \(tenantID) ORDER BY provider, updated_at DESC, id DESC
            """, as: Row.self
        ).map { try $0.credential() }
    }

    public func active(tenantID: String, provider: PushRegistration.Provider, on executor: any SQLExecutor) async throws
        -> (PushCredential, Data)? {
        guard let row = try await executor.run(
            """
            SELECT \(raw: Row.columns), sealed_secret FROM push_credentials
            WHERE tenant_id = \(tenantID) AND provider = \(provider)
            ORDER BY updated_at DESC, id DESC LIMIT 1
            """).first else { return nil }
        return (try row.decode(Row.self).credential(), try row.decode(column: "sealed_secret", as: Data.self))
    }

    public func delete(tenantID: String, kind: PushCredential.Kind, clientAppKey: String, on executor: any SQLExecutor)
        async throws -> PushCredential? {
        try await executor.first(
            """
            DELETE FROM push_credentials
            WHERE tenant_id = \(tenantID) AND kind = \(kind) AND client_app_key = \(clientAppKey)
            RETURNING \(raw: Row.columns)
            """, as: Row.self
        )?.credential()
    }
}

/// A row of `push_credentials` as stored, without its sealed secret (which only `active`
/// reads): decoded by column name, then turned into a `PushCredential` (the summary parsed).
struct PushCredentialRow: Decodable {
    /// The columns `CodingKeys` names, for `SELECT` and `RETURNING`.
    static let columns = CodingKeys.allCases.map(\.rawValue).joined(separator: ", ")

    var id: String
    var tenantID: String
    var kind: PushCredential.Kind
    var clientAppKey: String
    var environment: PushCredential.Environment?
    var topic: String?
    var summary: String
    var createdAt: Date
    var updatedAt: Date

    enum CodingKeys: String, CodingKey, CaseIterable {
        case id
        case tenantID = "tenant_id"
        case kind
        case clientAppKey = "client_app_key"
        case environment, topic, summary
        case createdAt = "created_at"
        case updatedAt = "updated_at"
    }

    func credential() throws -> PushCredential {
        guard let parsed = try? JSON.decode(PushCredentialSummary.self, from: Data(summary.utf8)) else {
            throw StorageError.corrupt("push credential")
        }
        return PushCredential(
            id: id, tenantID: tenantID, kind: kind, clientAppKey: clientAppKey, environment: environment,
            topic: topic, summary: parsed, createdAt: createdAt, updatedAt: updatedAt)
    }
}
