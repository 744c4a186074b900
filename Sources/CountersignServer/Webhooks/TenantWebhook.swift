import Foundation

/// What a tenant's webhook is for. A tenant has at most one of each.
public enum WebhookPurpose: String, Codable, Sendable, CaseIterable {
    /// Asked, while a user approves, whether the custom factor's data is acceptable.
    case customVerifier = "custom-verifier"
    /// Told what happened (`approval.not_requested`, …), through the outbox.
    case events = "events"
}

/// A tenant's webhook. The URL may be shown; the secret that signs every call is sealed under
/// the master key, bound to the tenant and purpose, and opened only to sign.
public struct TenantWebhook: Sendable, Equatable {
    public var tenantID: String
    public var purpose: WebhookPurpose
    public var url: String
    public var createdAt: Date
    public var updatedAt: Date

    /// The AAD that binds the sealed secret to this tenant and purpose: a secret copied into
    /// another tenant's row, or into the other purpose's, does not open there.
    var sealingContext: String { Self.sealingContext(tenantID: tenantID, purpose: purpose) }

    static func sealingContext(tenantID: String, purpose: WebhookPurpose) -> String {
        "tenant-webhook:\(tenantID):\(purpose.rawValue)"
    }
}
