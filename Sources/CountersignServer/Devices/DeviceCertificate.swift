import CountersignCore
import Foundation

/// A short statement, signed with the tenant's token-signing key (ES256, the key its JWKS
/// publishes), that a device's keys belong to a user of the tenant: so that an approval receipt
/// proves who approved with the JWKS alone, not only with the server's word. It binds the device
/// key (`cnf.jwk`, RFC 7800), the device, the user (`sub`, as in the tenant's ID tokens), the
/// tenant, and the factor keys the device had when it was issued.
///
/// It is issued at enrollment and again when the device's factors change (the stored one is
/// dropped then, and the next receipt issues a new one), and when the key that signed it is no
/// longer published.
///
/// ```json
/// {"cnf":{"jwk":{…}},"device_id":"dev_…","enrolled_at":1772442000,"factor_keys":{"pin":{…}},"iat":1772442000,"iss":"https://auth.example.com","sub":"usr_…","tenant":"default"}
/// ```
struct DeviceCertificate: Sendable {
    static let type = "countersign-device+jwt"

    /// The claims for `device` of `tenant`, as `issuer` states them at `date`.
    static func claims(for device: Device, tenant: Tenant, issuer: String, at date: Date) throws -> [String: JSONValue] {
        var factorKeys: [String: JSONValue] = [:]
        if let pin = device.pinKey { factorKeys[Factor.pin.rawValue] = try JSONValue(encoding: pin) }
        if let biometric = device.biometricKey { factorKeys[Factor.biometric.rawValue] = try JSONValue(encoding: biometric) }
        return [
            "iss": .string(issuer), "sub": .string(device.userID), "iat": .integer(Int64(date.timeIntervalSince1970.rounded(.down))),
            "tenant": .string(tenant.slug), "device_id": .string(device.id),
            "enrolled_at": .integer(Int64(device.createdAt.timeIntervalSince1970.rounded(.down))),
            "cnf": .object(["jwk": try JSONValue(encoding: device.signingKey)]), "factor_keys": .object(factorKeys),
        ]
    }
}

/// Issues device certificates with the tenant's current ES256 token-signing key and keeps the
/// newest on the device's row.
struct DeviceCertificates: Sendable {
    let keys: TokenSigningKeys
    let origin: PublicOrigin
    let now: @Sendable () -> Date

    /// A new certificate for `device`.
    func issue(for device: Device, tenant: Tenant) async throws -> String {
        let keySet = try await keys.keySet(for: tenant)
        let claims = try DeviceCertificate.claims(
            for: device, tenant: tenant, issuer: Issuer(tenant: tenant, origin: origin).identifier, at: now())
        return try await keySet.sign(claims, type: DeviceCertificate.type, with: try keySet.current(.es256))
    }

    /// The certificate stored for `device` while the key that signed it is still published;
    /// otherwise a new one, which `store` keeps.
    func current(for device: Device, tenant: Tenant, store: (String) async throws -> Void) async throws -> String {
        if let stored = device.certificate, let keyID = TenantJWTHeader(of: stored)?.keyID,
           try await keys.keySet(for: tenant).key(id: keyID) != nil {
            return stored
        }
        let issued = try await issue(for: device, tenant: tenant)
        try await store(issued)
        return issued
    }
}
