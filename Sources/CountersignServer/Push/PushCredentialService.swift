import CountersignCore
import Foundation

/// Sets, lists and deletes a tenant's push credentials. Every credential is checked before it
/// is stored (a certificate that does not open, has no key or has expired is refused), sealed
/// under the master key, and audited.
struct PushCredentialService: Sendable {
    let store: any PushCredentialStore
    /// Seals each secret under the master key before it is stored.
    let sealer: SecretSealer
    let now: @Sendable () -> Date

    /// An APNs certificate as uploaded, parsed from the raw fields of either API.
    struct APNsCertificateUpload: Sendable {
        /// How the caller's API spells each field, for error messages.
        struct FieldNames: Sendable {
            var clientAppKey = "client_app_key"
            var certificate = "certificate"
            var password = "password"
            var topic = "topic"
            var environment = "environment"

            static let rest = FieldNames()
            static let cyberArk = FieldNames(
                clientAppKey: "ClientAppKey", certificate: "APNSCert", password: "APNSPass", topic: "APNSTopic",
                environment: "APNSEnvironment")
        }

        var clientAppKey: String
        var pkcs12: Data
        var password: String
        var topic: String
        var environment: PushCredential.Environment
        var names: FieldNames

        init(clientAppKey: String?, certificate: String?, password: String?, topic: String?, environment: String?,
             names: FieldNames) throws(AdminError) {
            self.clientAppKey = try PushCredentialService.clientAppKey(clientAppKey, field: names.clientAppKey)
            self.pkcs12 = try PushCredentialService.pkcs12(certificate, field: names.certificate)
            self.password = password ?? ""
            self.topic = try APNsTopic.parse(topic, field: names.topic)
            self.environment = try PushCredentialService.environment(environment, field: names.environment)
            self.names = names
        }
    }

    func setAPNsCertificate(_ upload: APNsCertificateUpload, tenant: Tenant, actor: String) async throws -> PushCredential {
        let file = try APNsCertificateFile.open(
            upload.pkcs12, password: upload.password, at: now(), field: upload.names.certificate,
            passwordField: upload.names.password)
        var summary = PushCredentialSummary()
        summary.certificateSubject = file.subject
        summary.certificateNotBefore = file.notBefore
        summary.certificateNotAfter = file.notAfter
        return try await store(
            .apnsCertificate, clientAppKey: upload.clientAppKey, environment: upload.environment, topic: upload.topic,
            summary: summary, secret: .apnsCertificate(pkcs12: upload.pkcs12, password: upload.password),
            tenant: tenant, actor: actor)
    }

    func setAPNsToken(keyID: String, teamID: String, privateKeyPEM: String, topic: String,
                      environment: PushCredential.Environment, tenant: Tenant, actor: String) async throws -> PushCredential {
        let key = try APNsSigningKey(keyID: keyID, teamID: teamID, pem: privateKeyPEM)
        var summary = PushCredentialSummary()
        summary.keyID = key.keyID
        summary.teamID = key.teamID
        return try await store(
            .apnsToken, clientAppKey: "", environment: environment, topic: topic, summary: summary,
            secret: .apnsToken(privateKeyPEM: privateKeyPEM), tenant: tenant, actor: actor)
    }

    func setFCM(serviceAccountJSON: String, tenant: Tenant, actor: String) async throws -> PushCredential {
        let account = try FCMServiceAccount(json: serviceAccountJSON)
        var summary = PushCredentialSummary()
        summary.projectID = account.projectID
        summary.clientEmail = account.clientEmail
        summary.privateKeyID = account.privateKeyID
        return try await store(
            .fcm, clientAppKey: "", environment: nil, topic: nil, summary: summary,
            secret: .fcm(serviceAccountJSON: serviceAccountJSON), tenant: tenant, actor: actor)
    }

    /// Every credential of the tenant, the ones it sends with marked active.
    func list(tenant: Tenant) async throws -> [PushCredentialRecord] {
        let stored = try await store.list(tenantID: tenant.id)
        var seen = Set<PushRegistration.Provider>()
        // Listed newest first per provider: the first of each provider is the active one.
        return stored.map { credential in
            PushCredentialRecord(credential: credential, active: seen.insert(credential.kind.provider).inserted)
        }
    }

    func delete(_ kind: PushCredential.Kind, clientAppKey: String = "", tenant: Tenant, actor: String) async throws {
        guard try await store.delete(
            tenantID: tenant.id, kind: kind, clientAppKey: clientAppKey, actor: actor, at: now(),
            auditDetails: Self.auditDetails) != nil else {
            throw AdminError.notFound(clientAppKey.isEmpty
                ? "\(kind.rawValue) credential" : "APNs certificate for client app key \(clientAppKey)")
        }
    }

    private func store(_ kind: PushCredential.Kind, clientAppKey: String, environment: PushCredential.Environment?,
                       topic: String?, summary: PushCredentialSummary, secret: PushSecret, tenant: Tenant,
                       actor: String) async throws -> PushCredential {
        let date = now()
        let plaintext = try JSONEncoder().encode(secret)
        let sealer = sealer
        return try await store.put(
            tenantID: tenant.id, kind: kind, clientAppKey: clientAppKey,
            make: { existing in
                PushCredential(
                    id: existing?.id ?? Identifier.make("psh", at: date), tenantID: tenant.id, kind: kind,
                    clientAppKey: clientAppKey, environment: environment, topic: topic, summary: summary,
                    createdAt: existing?.createdAt ?? date, updatedAt: date)
            },
            // The sealed secret names its row, so a replacement keeps the row's id.
            seal: { credential in try sealer.seal(plaintext, context: credential.sealingContext) },
            auditDetails: Self.auditDetails, actor: actor, at: date)
    }

    private static func auditDetails(_ credential: PushCredential) -> [String: String] {
        var details = ["kind": credential.kind.rawValue]
        if !credential.clientAppKey.isEmpty { details["client_app_key"] = credential.clientAppKey }
        if let environment = credential.environment { details["environment"] = environment.rawValue }
        return details
    }

    /// A client app key: what CyberArk tenants name their apps by.
    static func clientAppKey(_ raw: String?, field: String = "client_app_key") throws(AdminError) -> String {
        guard let raw, !raw.isEmpty else { throw .missingField(field) }
        // Characters that need no escaping in a URL path, so the key can name a resource.
        guard raw.utf8.count <= 128, raw.utf8.allSatisfy({
            (0x30...0x39).contains($0) || (0x41...0x5A).contains($0) || (0x61...0x7A).contains($0) || "-._~:".utf8.contains($0)
        }) else {
            throw .invalidField(field, "1 to 128 letters, digits and - . _ ~ :")
        }
        return raw
    }

    static func environment(_ raw: String?, field: String = "environment") throws(AdminError) -> PushCredential.Environment {
        guard let raw else { return .production }
        guard let environment = PushCredential.Environment(rawValue: raw) else {
            throw .invalidField(field, "must be sandbox or production")
        }
        return environment
    }

    /// A PKCS#12 file sent as base64 (standard or base64url, with or without padding).
    static func pkcs12(_ raw: String?, field: String) throws(AdminError) -> Data {
        guard let raw, !raw.isEmpty else { throw .missingField(field) }
        let compact = raw.filter { !$0.isWhitespace }
        if let data = Data(base64Encoded: compact) { return data }
        if let data = Data(base64URLEncoded: Substring(compact)) { return data }
        throw .invalidField(field, "must be the PKCS#12 file in base64")
    }
}
