import CountersignCore
import Foundation

/// A tenant: its own OpenID issuer and device-protocol key, served below `/t/<slug>` (and at
/// the root for the default tenant).
public struct Tenant: Sendable, Equatable {
    public var id: String
    public var slug: String
    public var displayName: String
    public var isDefault: Bool
    /// The public half of the tenant's device-protocol signing key.
    public var signingKey: ECPublicJWK
    public var createdAt: Date
    public var updatedAt: Date
    /// How the tenant's users approve (`AuthenticationPolicy`).
    public var policy = AuthenticationPolicy()
    /// The authorization detail types (RFC 9396) its clients may be registered for.
    public var authorizationDetailTypes = AuthorizationDetailTypes.none
}

/// A tenant slug: lower-case letters, digits and hyphens, 2–40 characters, starting with a
/// letter — safe in a URL path and unambiguous.
public struct TenantSlug: Sendable, Hashable, CustomStringConvertible {
    public let value: String
    public var description: String { value }

    public init(_ raw: String) throws(AdminError) {
        let allowed = Set("abcdefghijklmnopqrstuvwxyz0123456789-")
        guard (2...40).contains(raw.count), raw.first?.isLetter == true, raw.allSatisfy({ allowed.contains($0) }),
              !raw.hasSuffix("-") else {
            throw .invalidField("slug", "2 to 40 lower-case letters, digits and hyphens, starting with a letter")
        }
        value = raw
    }
}
