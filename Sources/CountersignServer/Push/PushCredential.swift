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
