import CountersignCore
import Foundation

/// The checks of a device's answer (`POST /device/v1/requests/{id}/response`, docs/protocol.md),
/// one rule each, in the order they run. The caller has found the request pending and
/// unexpired among those sealed for this device (`ApprovalService.answerable`); after these
/// checks the factors are evaluated (`AnswerCheck`), and the decision is recorded in one
/// conditional update that checks state and expiry again, so the first valid answer wins.
/// Each failure is one `ApprovalError`, which names what was wrong.
struct AnswerCeremony: Sendable {
    /// How far a device's clock may be from the server's when it dates its answer.
    static let clockSkew: TimeInterval = 300

    /// The signed response of `submission`, checked against `transaction` for `device` at `now`.
    static func verify(_ submission: ApprovalSubmission, of transaction: ApprovalTransaction, by device: Device, at now: Date)
        throws -> ApprovalResponse
    {
        let response = try signature(of: submission, by: device)
        try names(response, transaction)
        try repeatsChallenge(response, of: transaction)
        try signsDetails(response, of: transaction)
        try namesFactors(response)
        try issuedAt(response.issuedAt, of: transaction, now: now)
        return response
    }

    /// The response is a JWS signed by the device's key, naming the device.
    static func signature(of submission: ApprovalSubmission, by device: Device) throws -> ApprovalResponse {
        let key = try device.signingKey.signingKey()
        do {
            return try ApprovalResponse.verified(submission.response, key: key, deviceID: device.id).response
        } catch {
            throw ApprovalError.invalidResponse(error.description)
        }
    }

    /// It answers this request, not another one sent to the same device.
    static func names(_ response: ApprovalResponse, _ transaction: ApprovalTransaction) throws(ApprovalError) {
        guard response.requestID == transaction.id else {
            throw .challengeMismatch("the response names request \(response.requestID), not \(transaction.id)")
        }
    }

    /// It repeats the request's challenge (compared in constant time).
    static func repeatsChallenge(_ response: ApprovalResponse, of transaction: ApprovalTransaction) throws(ApprovalError) {
        guard Secrets.constantTimeEqual(Data(response.challenge.utf8), Data(transaction.challenge.utf8)) else {
            throw .challengeMismatch("the response does not repeat this request's challenge")
        }
    }

    /// It signs the digest of exactly the details sealed for the devices: what was shown.
    static func signsDetails(_ response: ApprovalResponse, of transaction: ApprovalTransaction) throws(ApprovalError) {
        guard response.detailsDigest == transaction.detailsDigest else { throw .detailsMismatch }
    }

    /// It says how the user was verified: one or more short lowercase factor names
    /// (`confirm`, `pin`, `biometric`, …).
    static func namesFactors(_ response: ApprovalResponse) throws(ApprovalError) {
        guard !response.factors.isEmpty, response.factors.allSatisfy(isFactorName) else {
            throw .invalidResponse("factors must list how the user was verified, e.g. [\"confirm\"]")
        }
    }

    /// The response is kept as the receipt of the decision, so its `iat` must be a time at which
    /// it could have been signed: not before the request existed, not after now (each give or
    /// take `clockSkew`).
    static func issuedAt(_ issuedAt: Int64, of transaction: ApprovalTransaction, now: Date) throws(ApprovalError) {
        let earliest = Int64(transaction.createdAt.timeIntervalSince1970 - clockSkew)
        let latest = Int64(now.timeIntervalSince1970 + clockSkew)
        guard issuedAt >= earliest else {
            throw .invalidResponse(
                "iat is before this request was made (the device's clock is more than \(Int(clockSkew)) seconds behind?)")
        }
        guard issuedAt <= latest else {
            throw .invalidResponse(
                "iat is in the future (the device's clock is more than \(Int(clockSkew)) seconds ahead?)")
        }
    }

    private static func isFactorName(_ name: String) -> Bool {
        (1...32).contains(name.utf8.count) && name.utf8.allSatisfy { (0x61...0x7a).contains($0) || $0 == 0x5f }
    }
}

/// The nonce of the device call that carries an answer, and its one rule: whatever the outcome,
/// the call cannot be played again, and playing it again changes nothing (`replayed`). The
/// signature check leaves it unrecorded (`DeviceAuthenticator.authenticateDeferringNonce`), and
/// it is recorded exactly once:
///
/// - in the commit that records the decision (`forCommit`, `ApprovalStore.decide`), when
///   nothing before that commit changed anything;
/// - before the factor checks, when the answer names a factor whose check changes something or
///   calls out (a PIN attempt counts, the custom verifier is asked): `beforeFactors`;
/// - by itself, when the answer is refused, its body cannot be read, or the decision's commit
///   failed (a replay among the reasons): `afterRefusal`.
struct AnswerNonce: Sendable {
    /// Factors whose check changes something or calls out.
    static let factorsThatAct: Set<String> = [Factor.pin.rawValue, Factor.custom.rawValue]

    private(set) var unrecorded: DeviceNonce?
    private let ledger: DeviceAuthenticator

    init(_ nonce: DeviceNonce, ledger: DeviceAuthenticator) {
        unrecorded = nonce
        self.ledger = ledger
    }

    /// Records the nonce now if `factors` name one that acts.
    mutating func beforeFactors(_ factors: [String]) async throws {
        guard let nonce = unrecorded, factors.contains(where: Self.factorsThatAct.contains) else { return }
        try await ledger.record(nonce)
        unrecorded = nil
    }

    /// The nonce for the decision's commit to record, if nothing recorded it yet.
    var forCommit: DeviceNonce? { unrecorded }

    /// Records the nonce by itself if nothing did: after a refusal or a failed commit.
    /// `replayed` if the device used it already.
    func afterRefusal() async throws {
        if let unrecorded { try await ledger.record(unrecorded) }
    }
}
