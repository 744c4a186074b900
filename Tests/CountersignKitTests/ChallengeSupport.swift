import CountersignCore
import Crypto
import Foundation
import Synchronization
import Testing
@testable import CountersignKit
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Answers in turn: the first request gets the first reply, and so on; the last reply answers
/// every request after it.
final class Replies: Sendable {
    typealias Reply = @Sendable (URLRequest) -> FakeServer.Answer

    private let queue: Mutex<[Reply]>

    init(_ replies: [Reply]) {
        self.queue = Mutex(replies)
    }

    func next(_ request: URLRequest) -> FakeServer.Answer {
        let reply = queue.withLock { queue in queue.count > 1 ? queue.removeFirst() : queue[0] }
        return reply(request)
    }

    static func acknowledgement(_ status: String, reason: DenyReason? = nil) -> Reply {
        let member = reason.map { #","reason":"\#($0.rawValue)""# } ?? ""
        return { _ in
            .json(200, #"{"request_id":"txn_1","status":"\#(status)","decided_at":"2027-01-15T08:00:30.000Z"\#(member)}"#)
        }
    }

    static func refusal(_ status: Int, _ code: String, attemptsRemaining: Int? = nil) -> Reply {
        let member = attemptsRemaining.map { #","attempts_remaining":\#($0)"# } ?? ""
        return { _ in .json(status, #"{"error":"\#(code)"\#(member)}"#) }
    }

    /// A 401 with a deregistration notice signed for the request it answers.
    static func deregistered(_ reason: DeregistrationNotice.Reason?, code: String = "device_deregistered") -> Reply {
        { request in
            let signature = try! DeviceRequestSignature.parse(
                authorizationHeader: request.value(forHTTPHeaderField: "Authorization"))
            let notice = try! DeregistrationNotice(
                deviceID: "dev_1", status: .deleted, requestNonce: signature.nonce, issuedAt: 1_800_000_030, reason: reason
            ).sign(with: ApprovalTests.serverKey)
            return .json(401, #"{"error":"\#(code)","deregistration":"\#(notice)"}"#)
        }
    }
}

extension FakeServer {
    convenience init(_ replies: [Replies.Reply]) {
        let queue = Replies(replies)
        self.init { queue.next($0) }
    }

    /// The answers the device posted, in order.
    var submissions: [ApprovalSubmission] {
        requests.filter { $0.url!.path.hasSuffix("/response") }.map {
            try! JSONDecoder().decode(ApprovalSubmission.self, from: $0.httpBody!)
        }
    }
}

/// A handler that gives the answers it was made with, one PIN after another, and remembers
/// every challenge it was put.
final class ScriptedHandler: ChallengeHandler {
    private let confirmation: ConfirmationAnswer
    private let number: NumberMatchAnswer
    private let biometric: BiometricAnswer
    private let custom: CustomAnswer
    private let pins: Mutex<[PINAnswer]>
    private let asked = Mutex<[String]>([])
    private let pinChallenges = Mutex<[PINChallenge]>([])
    private let numberChallenges = Mutex<[NumberMatchChallenge]>([])

    init(confirmation: ConfirmationAnswer = .confirm, number: NumberMatchAnswer = .cancel, pins: [PINAnswer] = [],
         biometric: BiometricAnswer = .defaultPrompt, custom: CustomAnswer = .cancel) {
        self.confirmation = confirmation
        self.number = number
        self.biometric = biometric
        self.custom = custom
        self.pins = Mutex(pins)
    }

    /// The challenges put, by name, in order.
    var challenges: [String] { asked.withLock { $0 } }
    var pinsAsked: [PINChallenge] { pinChallenges.withLock { $0 } }
    var numbersAsked: [NumberMatchChallenge] { numberChallenges.withLock { $0 } }

    func confirm(_ challenge: ConfirmationChallenge) async -> ConfirmationAnswer {
        asked.withLock { $0.append("confirm") }
        return confirmation
    }

    func matchNumber(_ challenge: NumberMatchChallenge) async -> NumberMatchAnswer {
        asked.withLock { $0.append("number") }
        numberChallenges.withLock { $0.append(challenge) }
        return number
    }

    func enterPIN(_ challenge: PINChallenge) async -> PINAnswer {
        asked.withLock { $0.append("pin") }
        pinChallenges.withLock { $0.append(challenge) }
        return pins.withLock { $0.isEmpty ? .cancel : $0.removeFirst() }
    }

    func verifyBiometric(_ challenge: BiometricChallenge) async -> BiometricAnswer {
        asked.withLock { $0.append("biometric") }
        return biometric
    }

    func provideCustomData(_ challenge: CustomChallenge) async -> CustomAnswer {
        asked.withLock { $0.append("custom") }
        return custom
    }
}

/// An enrollment with the factors a request may ask for, and requests that ask for them.
struct FactorDevice {
    static let pin = "4921"

    let device: ApprovalTests.Device
    let biometricKeys: SoftwareBiometricKeys
    /// The public key of the biometric key, when one was made.
    let biometricKey: P256.Signing.PublicKey?

    /// - Parameters:
    ///   - withPIN: keep a PIN salt, as an enrollment with a PIN does.
    ///   - withBiometric: keep a biometric key.
    ///   - verification: what the stand-in's check concludes.
    static func make(
        in root: URL, withPIN: Bool = true, withBiometric: Bool = false,
        verification: SoftwareBiometricKeys.Verification = .verified
    ) async throws -> FactorDevice {
        let device = try await ApprovalTests.device(in: root)
        if withPIN {
            try await device.store.setFactorMaterial(PINTests.salt, as: .pinSalt, for: device.enrollment.id)
        }
        let keys = SoftwareBiometricKeys { _ in verification }
        var biometricKey: P256.Signing.PublicKey?
        if withBiometric {
            let key = try await keys.createKey()
            try await device.store.setFactorMaterial(key.handle, as: .biometricKey, for: device.enrollment.id)
            biometricKey = key.publicKey
        }
        return FactorDevice(device: device, biometricKeys: keys, biometricKey: biometricKey)
    }

    func authenticator(_ server: FakeServer) -> CountersignAuthenticator {
        CountersignAuthenticator(
            keyStore: device.store, transport: server, biometricKeys: biometricKeys, now: { ApprovalTests.now })
    }

    /// The opened details of `txn_1`, requiring `verification`.
    func details(
        _ verification: TransactionDetails.Verification?, with authenticator: CountersignAuthenticator
    ) async throws -> RequestDetails {
        var details = ApprovalTests.details()
        details.verification = verification
        let envelope = try ApprovalTests.envelope(to: device, details: details)
        return try await authenticator.details(for: ApprovalRequest(enrollmentID: device.enrollment.id, envelope: envelope))
    }

    /// The signed response of a submission, checked against the device key.
    func response(of submission: ApprovalSubmission) throws -> ApprovalResponse {
        try ApprovalResponse.verified(submission.response, key: device.keys.signer.publicKey, deviceID: "dev_1").response
    }
}

/// The PIN key of `FactorDevice.pin`, derived once for every test that checks a PIN signature.
enum PINTests {
    static let salt = Data((0..<32).map { UInt8(255 - $0) })
    static let key = try! PINKey(pin: FactorDevice.pin, salt: salt)

    static func isValid(_ signature: String?, over response: String, factor: Factor = .pin) -> Bool {
        guard let signature else { return false }
        return FactorProof.isValid(signature, of: FactorProof.message(factor: factor, response: response), by: key.publicKey)
    }
}
