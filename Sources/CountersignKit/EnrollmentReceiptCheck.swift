import CountersignCore
import Crypto
import Foundation

/// The rules an enrollment receipt must pass before the device trusts the enrollment, one check
/// each, in the order the protocol lists them. Together they say: this receipt was signed by the
/// server the QR code named (by its key's thumbprint), for the server URL the QR code named, in
/// answer to exactly the request this device sent.
struct EnrollmentReceiptCheck: Sendable {
    /// The URI's `fp`: the RFC 7638 thumbprint of the server's signing key.
    let pinnedThumbprint: String
    /// The URI's server URL, as text.
    let server: String
    /// The enrollment request JWS exactly as sent.
    let sentRequest: String

    /// A receipt that passed every check, with the server key that signed it.
    struct Accepted: Sendable {
        let receipt: EnrollmentReceipt
        let serverKey: ECPublicJWK
    }

    func verify(_ text: String) throws(CountersignError) -> Accepted {
        let jws = try parse(text)
        try checkType(of: jws)
        let serverKey = try pinnedKey(of: jws)
        try checkSignature(of: jws, with: serverKey)
        let receipt = try decodeReceipt(of: jws)
        try checkAnswersSentRequest(receipt)
        try checkServer(receipt)
        return Accepted(receipt: receipt, serverKey: serverKey)
    }

    private func parse(_ text: String) throws(CountersignError) -> CompactJWS {
        do { return try CompactJWS(parsing: text) } catch {
            throw .invalidServerResponse("the enrollment receipt is not an ES256 compact JWS (\(error.description))")
        }
    }

    private func checkType(of jws: CompactJWS) throws(CountersignError) {
        guard jws.type == EnrollmentReceipt.type else {
            throw .invalidServerResponse("the enrollment receipt's typ is not \(EnrollmentReceipt.type)")
        }
    }

    /// The key in the header is only trusted because its thumbprint is the one the URI carried;
    /// a receipt signed by any other key may come from an impostor.
    private func pinnedKey(of jws: CompactJWS) throws(CountersignError) -> ECPublicJWK {
        guard let member = jws.header["jwk"], let jwk = try? member.decode(as: ECPublicJWK.self) else {
            throw .invalidServerResponse("the enrollment receipt's header carries no jwk")
        }
        guard jwk.thumbprint == pinnedThumbprint else { throw .serverKeyMismatch }
        return jwk
    }

    private func checkSignature(of jws: CompactJWS, with jwk: ECPublicJWK) throws(CountersignError) {
        guard let key = try? jwk.signingKey() else {
            throw .invalidServerResponse("the server key is not a P-256 public key")
        }
        guard jws.isValid(for: key) else {
            throw .invalidServerResponse("the enrollment receipt's signature does not verify")
        }
    }

    private func decodeReceipt(of jws: CompactJWS) throws(CountersignError) -> EnrollmentReceipt {
        guard !JSONValue.hasDuplicateMemberNames(jws.payload),
              let receipt = try? JSONDecoder().decode(EnrollmentReceipt.self, from: jws.payload) else {
            throw .invalidServerResponse("the enrollment receipt's payload is not an enrollment receipt")
        }
        return receipt
    }

    /// Binds the receipt to this request, so that a receipt for another device's enrollment
    /// cannot be replayed to this one.
    private func checkAnswersSentRequest(_ receipt: EnrollmentReceipt) throws(CountersignError) {
        let digest = Data(SHA256.hash(data: Data(sentRequest.utf8))).base64URLEncodedString
        guard receipt.requestDigest == digest else {
            throw .invalidServerResponse("the enrollment receipt answers a different enrollment request")
        }
    }

    private func checkServer(_ receipt: EnrollmentReceipt) throws(CountersignError) {
        guard receipt.server == server else {
            throw .invalidServerResponse("the enrollment receipt names another server (\(receipt.server))")
        }
    }
}
