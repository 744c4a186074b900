import Foundation
import Hummingbird

/// `GET /.well-known/openid-configuration`, `GET /jwks` and `GET /jwks/archive` (every key the
/// tenant has had, for receipts and device certificates signed before a rotation), for the default tenant at the root
/// and for every tenant below `/t/<slug>`. Both are public and may be cached for
/// `TokenSigningKeys.activationDelay`: a new key signs only after that long in the JWKS.
struct DiscoveryRoutes: Sendable {
    let signingKeys: TokenSigningKeys

    private static var cacheControl: String { "public, max-age=\(Int(TokenSigningKeys.activationDelay))" }

    func register(on routes: TenantRoutes) {
        let discovery = routes.group(surface: .api)
        discovery.get("/.well-known/openid-configuration") { _, context in
            let issuer = try context.tenantIssuer()
            // OpenID Connect Discovery §4.3: the document's issuer must be the URL it was
            // fetched below. The default tenant's issuer is the root, so it has no
            // document below /t/<slug>: a client configured with that URL is told where.
            if context.parameters.get("tenant") != nil, issuer.tenant.isDefault {
                throw APIError.notFound(
                    "the default tenant's issuer is \(issuer.identifier); its metadata is at \(issuer.identifier)/.well-known/openid-configuration")
            }
            return try Self.publicJSON(ProviderMetadata(issuer))
        }
        discovery.get("/jwks") { _, context in
            let issuer = try context.tenantIssuer()
            return try Self.publicJSON(JSONWebKeySet(try await signingKeys.keySet(for: issuer.tenant)))
        }
        discovery.get("/jwks/archive") { _, context in
            let issuer = try context.tenantIssuer()
            return try Self.publicJSON(JSONWebKeySet(archive: try await signingKeys.archive(for: issuer.tenant)))
        }
    }

    private static func publicJSON(_ value: some Encodable) throws -> Response {
        Response(status: .ok, headers: [.contentType: "application/json", .cacheControl: cacheControl],
                 body: .init(byteBuffer: ByteBuffer(data: try JSON.encode(value))))
    }
}
