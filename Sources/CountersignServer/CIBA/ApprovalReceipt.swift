import CountersignCore
import Foundation

/// `POST /bc-authorize/receipt` (Countersign's own endpoint, client-authenticated like the
/// token endpoint, form parameter `auth_req_id`): the evidence of a decided request, so that a
/// relying party can check for itself what the user saw and signed, without trusting the
/// server's word. `details` is the exact canonical JSON sealed to the device, `response` the
/// device's signed answer over its SHA-256, `device_key` the public key to verify it with, and
/// `device_certificate` the tenant's signed statement (`DeviceCertificate`) that this key is
/// the user's: with it the receipt verifies against the tenant's JWKS alone
/// ([`integrating.md` §6.6](../../docs/integrating.md)).
///
/// An undecided request answers `authorization_pending` (or `expired_token` once it expired);
/// an unknown one, or another client's, `invalid_grant`.
struct ApprovalReceipt: Encodable, Sendable {
    let authReqIDStatus: String
    let details: String
    let detailsSHA256: String
    let response: String
    let deviceID: String
    let deviceKey: ECPublicJWK
    let deviceCertificate: String
    let factors: [String]
    let decidedAt: Date

    enum CodingKeys: String, CodingKey {
        case details, response, factors
        case authReqIDStatus = "auth_req_id_status"
        case detailsSHA256 = "details_sha256"
        case deviceID = "device_id"
        case deviceKey = "device_key"
        case deviceCertificate = "device_certificate"
        case decidedAt = "decided_at"
    }

    static func of(_ form: FormParameters, client: Client, issuer: Issuer, requests: any CIBAGrantStore,
                   certificates: DeviceCertificates, at now: Date) async throws -> ApprovalReceipt {
        let transaction = try await CIBAGrant.transaction(form, client: client, store: requests)
        guard transaction.status != .pending else {
            throw transaction.isExpired(at: now) ? TokenRequestError.expired : TokenRequestError.pending
        }
        guard let response = transaction.response, let deviceID = transaction.decidedByDevice,
              let decidedAt = transaction.decidedAt else {
            throw StorageError.corrupt("approval \(transaction.id) is decided but lacks its receipt")
        }
        // A removed device keeps its row; only deleting the user takes it away.
        guard let device = try await requests.device(id: deviceID) else {
            throw TokenRequestError.userUnavailable
        }
        let certificate = try await certificates.current(for: device, tenant: issuer.tenant) { issued in
            try await requests.setCertificate(deviceID: device.id, issued)
        }
        return ApprovalReceipt(
            authReqIDStatus: transaction.status.rawValue, details: transaction.details,
            detailsSHA256: transaction.detailsDigest, response: response, deviceID: deviceID,
            deviceKey: device.signingKey, deviceCertificate: certificate, factors: transaction.factors ?? [],
            decidedAt: decidedAt)
    }
}
