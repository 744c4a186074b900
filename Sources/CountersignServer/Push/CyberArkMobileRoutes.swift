import Foundation
import Hummingbird

/// `POST /Mobile/SetApnsCertForClientApp` and `POST /Mobile/DeleteApnsCertForClientApp`: the
/// calls, field names and answer envelope (`success`, `Result`, `Message`) that CyberArk
/// Identity tenants already script against, so those scripts move over unchanged. They act on
/// the default tenant at the root and on any tenant under `/t/<slug>`, with an admin key that
/// holds `push-credentials:manage`. Errors keep their HTTP status and also say
/// `"success": false` with the reason in `Message`.
struct CyberArkMobileRoutes: Sendable {
    let credentials: PushCredentialService
    let guardian: AdminGuard
    let maximumBodySize: Int

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

    func register(on routes: TenantRoutes) {
        let mobile = routes.group("/Mobile", surface: .mobileEnvelope, takesSecret: true)
        mobile.post("/SetApnsCertForClientApp") { request, context in
            let (key, tenant) = try await authorize(request, context)
            let fields = try await request.decodeJSON(SetFields.self, limit: maximumBodySize)
            let upload = try PushCredentialService.APNsCertificateUpload(
                clientAppKey: fields.clientAppKey, certificate: fields.certificate, password: fields.password,
                topic: fields.topic, environment: fields.environment, names: .cyberArk)
            let credential = try await credentials.setAPNsCertificate(upload, tenant: tenant, actor: "admin-key:\(key.id)")
            return try Self.succeeded(PushCredentialRecord(credential: credential, active: true))
        }
        mobile.post("/DeleteApnsCertForClientApp") { request, context in
            let (key, tenant) = try await authorize(request, context)
            let fields = try await request.decodeJSON(DeleteFields.self, limit: maximumBodySize)
            try await credentials.delete(
                .apnsCertificate, clientAppKey: try PushCredentialService.clientAppKey(fields.clientAppKey, field: "ClientAppKey"),
                tenant: tenant, actor: "admin-key:\(key.id)")
            return try Self.succeeded(true)
        }
    }

    /// The key, checked for the right, and the tenant of the path (the default one at the root).
    private func authorize(_ request: Request, _ context: CountersignRequestContext) async throws -> (AdminKey, Tenant) {
        let key = try await guardian.key(request, holding: .pushCredentialsManage)
        let tenant = try context.tenantIssuer().tenant
        guard key.reaches(tenantID: tenant.id) else { throw AdminError.wrongTenant }
        return (key, tenant)
    }

    private static func succeeded(_ result: some Encodable & Sendable) throws -> Response {
        try JSON.response(Envelope(success: true, result: result, message: nil, errorCode: nil))
    }

    /// A failure in the envelope: its status, `"success": false`, the description in `Message`.
    static func failure(_ error: WireError) -> Response {
        var fields = error.headers
        fields[.contentType] = "application/json"
        fields[.cacheControl] = "no-store"
        if let retryAfter = error.retryAfter { fields[.retryAfter] = String(retryAfter) }
        let envelope = Envelope<Bool>(success: false, result: nil, message: error.description, errorCode: error.code)
        let body = (try? JSON.encode(envelope)) ?? Data(#"{"success":false}"#.utf8)
        return Response(status: error.status, headers: fields, body: .init(byteBuffer: ByteBuffer(data: body)))
    }
}
