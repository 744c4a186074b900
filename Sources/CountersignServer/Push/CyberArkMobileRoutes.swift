import Foundation
import Hummingbird

/// `POST /Mobile/SetApnsCertForClientApp` and `POST /Mobile/DeleteApnsCertForClientApp`: the
/// calls, field names and answer envelope (`success`, `Result`, `Message`) that CyberArk
/// Identity tenants already script against, so those scripts move over unchanged. They act on
/// the default tenant at the root and on any tenant under `/t/<slug>`, with an admin key that
/// holds `push-credentials:manage`. Errors keep their HTTP status and also say
/// `"success": false` with the reason in `Message`.
struct CyberArkMobileRoutes: Sendable {
    let services: ServerServices
    let guardian: AdminGuard
    let credentials: PushCredentialService

    init(services: ServerServices, guardian: AdminGuard) {
        self.services = services
        self.guardian = guardian
        self.credentials = PushCredentialService(services: services)
    }

    struct SetFields: Decodable {
        var clientAppKey: String?
        var certificate: String?
        var password: String?
        var topic: String?
        var environment: String?

        enum CodingKeys: String, CodingKey {
            case clientAppKey = "ClientAppKey"
            case certificate = "APNSCert"
            case password = "APNSPass"
            case topic = "APNSTopic"
            case environment = "APNSEnvironment"
        }
    }

    struct DeleteFields: Decodable {
        var clientAppKey: String?

        enum CodingKeys: String, CodingKey {
            case clientAppKey = "ClientAppKey"
        }
    }

    struct Envelope<Result: Encodable & Sendable>: Encodable, Sendable {
        var success: Bool
        var result: Result?
        var message: String?
        var errorCode: String?

        enum CodingKeys: String, CodingKey {
            case success
            case result = "Result"
            case message = "Message"
            case errorCode = "ErrorCode"
        }

        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(success, forKey: .success)
            try container.encode(result, forKey: .result)
            try container.encode(message, forKey: .message)
            try container.encodeIfPresent(errorCode, forKey: .errorCode)
        }
    }

    func register(on router: Router<CountersignRequestContext>) {
        for prefix in ["", "/t/{tenant}"] {
            router.post(RouterPath(prefix + "/Mobile/SetApnsCertForClientApp")) { request, context in
                try await enveloped {
                    let (key, tenant) = try await authorize(request, context)
                    let fields = try await request.decodeJSON(SetFields.self, limit: services.configuration.maximumBodySize)
                    let upload = try PushCredentialService.APNsCertificateUpload(
                        clientAppKey: fields.clientAppKey, certificate: fields.certificate, password: fields.password,
                        topic: fields.topic, environment: fields.environment, names: .cyberArk)
                    let credential = try await credentials.setAPNsCertificate(
                        upload, tenant: tenant, actor: "admin-key:\(key.id)")
                    return PushCredentialRecord(credential: credential, active: true)
                }
            }
            router.post(RouterPath(prefix + "/Mobile/DeleteApnsCertForClientApp")) { request, context in
                try await enveloped { () -> Bool in
                    let (key, tenant) = try await authorize(request, context)
                    let fields = try await request.decodeJSON(DeleteFields.self, limit: services.configuration.maximumBodySize)
                    try await credentials.delete(
                        .apnsCertificate, clientAppKey: try PushCredentialService.clientAppKey(
                            fields.clientAppKey, field: "ClientAppKey"),
                        tenant: tenant, actor: "admin-key:\(key.id)")
                    return true
                }
            }
        }
    }

    /// The key, checked for the right, and the tenant of the path (the default one at the root).
    private func authorize(_ request: Request, _ context: CountersignRequestContext) async throws -> (AdminKey, Tenant) {
        if context.parameters.get("tenant") != nil {
            return try await guardian.tenant(request, context, holding: .pushCredentialsManage)
        }
        let key = try await guardian.key(request, holding: .pushCredentialsManage)
        guard let tenant = try await services.tenantService.resolve(slug: nil) else {
            throw AdminError.notFound("the default tenant")
        }
        guard key.reaches(tenantID: tenant.id) else { throw AdminError.wrongTenant }
        return (key, tenant)
    }

    private func enveloped<Result: Encodable & Sendable>(_ body: () async throws -> Result) async throws -> Response {
        do {
            return try JSON.response(Envelope(success: true, result: try await body(), message: nil, errorCode: nil))
        } catch let error as AdminError {
            return try failure(error.apiError)
        } catch let error as APIError {
            return try failure(error)
        }
    }

    private func failure(_ error: APIError) throws -> Response {
        var response = try JSON.response(
            Envelope<Bool>(success: false, result: nil, message: error.message, errorCode: error.code.rawValue),
            status: error.status)
        for field in error.headers { response.headers.append(field) }
        return response
    }
}
