import Foundation
import Hummingbird

/// `/admin/v1/tenants/{tenant}/push-credentials`: a tenant's APNs and FCM credentials, under the
/// right `push-credentials:manage`. Reading them needs the same right: even the summary tells
/// which apps a tenant can reach.
struct PushAdminRoutes: Sendable {
    let credentials: PushCredentialService
    let guardian: AdminGuard
    let maximumBodySize: Int

    struct APNsCertificateFields: Decodable {
        var certificate: String?
        var password: String?
        var topic: String?
        var environment: String?
    }

    struct APNsTokenFields: Decodable {
        var keyID: String?
        var teamID: String?
        var privateKey: String?
        var topic: String?
        var environment: String?

        enum CodingKeys: String, CodingKey {
            case topic, environment
            case keyID = "key_id"
            case teamID = "team_id"
            case privateKey = "private_key"
        }
    }

    struct FCMFields: Decodable {
        /// The service account's JSON key file: as a JSON object, or as a string holding it.
        var serviceAccount: String?

        enum CodingKeys: String, CodingKey {
            case serviceAccount = "service_account"
        }

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            if let text = try? container.decodeIfPresent(String.self, forKey: .serviceAccount) {
                serviceAccount = text
            } else if let object = try container.decodeIfPresent(JSONObjectText.self, forKey: .serviceAccount) {
                serviceAccount = object.text
            }
        }
    }

    func register(on router: some RouterMethods<CountersignRequestContext>) {
        let base = "/admin/v1/tenants/{tenant}/push-credentials"
        router.get(RouterPath(base)) { request, context in
            let (_, tenant) = try await guardian.tenant(request, context, holding: .pushCredentialsManage)
            return try JSON.response(Page(items: try await credentials.list(tenant: tenant), nextCursor: nil))
        }
        router.put(RouterPath(base + "/apns-certificates/{client_app_key}")) { request, context in
            let (key, tenant) = try await guardian.tenant(request, context, holding: .pushCredentialsManage)
            let fields = try await request.decodeJSON(APNsCertificateFields.self, limit: maximumBodySize)
            let upload = try PushCredentialService.APNsCertificateUpload(
                clientAppKey: try context.parameters.require("client_app_key"), certificate: fields.certificate,
                password: fields.password, topic: fields.topic, environment: fields.environment, names: .rest)
            let credential = try await credentials.setAPNsCertificate(upload, tenant: tenant, actor: "admin-key:\(key.id)")
            return try JSON.response(PushCredentialRecord(credential: credential, active: true))
        }
        router.delete(RouterPath(base + "/apns-certificates/{client_app_key}")) { request, context in
            let (key, tenant) = try await guardian.tenant(request, context, holding: .pushCredentialsManage)
            try await credentials.delete(
                .apnsCertificate,
                clientAppKey: try PushCredentialService.clientAppKey(try context.parameters.require("client_app_key")),
                tenant: tenant, actor: "admin-key:\(key.id)")
            return Response(status: .noContent)
        }
        router.put(RouterPath(base + "/apns-token")) { request, context in
            let (key, tenant) = try await guardian.tenant(request, context, holding: .pushCredentialsManage)
            let fields = try await request.decodeJSON(APNsTokenFields.self, limit: maximumBodySize)
            guard let keyID = fields.keyID else { throw AdminError.missingField("key_id") }
            guard let teamID = fields.teamID else { throw AdminError.missingField("team_id") }
            guard let pem = fields.privateKey else { throw AdminError.missingField("private_key") }
            let credential = try await credentials.setAPNsToken(
                keyID: keyID, teamID: teamID, privateKeyPEM: pem, topic: try APNsTopic.parse(fields.topic),
                environment: try PushCredentialService.environment(fields.environment), tenant: tenant,
                actor: "admin-key:\(key.id)")
            return try JSON.response(PushCredentialRecord(credential: credential, active: true))
        }
        router.put(RouterPath(base + "/fcm")) { request, context in
            let (key, tenant) = try await guardian.tenant(request, context, holding: .pushCredentialsManage)
            let fields = try await request.decodeJSON(FCMFields.self, limit: maximumBodySize)
            guard let account = fields.serviceAccount else { throw AdminError.missingField("service_account") }
            let credential = try await credentials.setFCM(serviceAccountJSON: account, tenant: tenant, actor: "admin-key:\(key.id)")
            return try JSON.response(PushCredentialRecord(credential: credential, active: true))
        }
        for (path, kind) in [("apns-token", PushCredential.Kind.apnsToken), ("fcm", .fcm)] {
            router.delete(RouterPath(base + "/" + path)) { request, context in
                let (key, tenant) = try await guardian.tenant(request, context, holding: .pushCredentialsManage)
                try await credentials.delete(kind, tenant: tenant, actor: "admin-key:\(key.id)")
                return Response(status: .noContent)
            }
        }
    }
}

/// A service-account key file pasted as a JSON object rather than a string: every member of
/// such a file is a string, so it is read as one map and written back as text.
struct JSONObjectText: Decodable {
    let text: String

    init(from decoder: any Decoder) throws {
        let members = try [String: String](from: decoder)
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        text = String(decoding: try encoder.encode(members), as: UTF8.self)
    }
}
