import Foundation
import Hummingbird

/// `GET /.well-known/openid-configuration` and `GET /jwks`, for the default tenant at the root
/// and for every tenant below `/t/<slug>`. Both are public and may be cached for
/// `TokenSigningKeys.activationDelay`: a new key signs only after that long in the JWKS.
struct DiscoveryRoutes: Sendable {
    let services: ServerServices

    private static var cacheControl: String { "public, max-age=\(Int(TokenSigningKeys.activationDelay))" }

    func register(on router: Router<CountersignRequestContext>) {
        for prefix in ["", "/t/{tenant}"] {
            router.get("\(prefix)/.well-known/openid-configuration") { _, context in
                let issuer = try await Issuer.of(context, services: services)
                return try Self.publicJSON(ProviderMetadata(issuer))
            }
            router.get("\(prefix)/jwks") { _, context in
                let issuer = try await Issuer.of(context, services: services)
                return try Self.publicJSON(JSONWebKeySet(try await services.tokenSigningKeys.keySet(for: issuer.tenant)))
            }
        }
    }

    private static func publicJSON(_ value: some Encodable) throws -> Response {
        Response(status: .ok, headers: [.contentType: "application/json", .cacheControl: cacheControl],
                 body: .init(byteBuffer: ByteBuffer(data: try JSON.encode(value))))
    }
}
