import CountersignCore
import CountersignKit
import CountersignWebAuthn
import Foundation
import Synchronization

/// Options and stand-ins the passkey tests share.
enum PasskeyFixtures {
    static let origin = "https://example.org"
    static let challenge = Array("a challenge of thirty-two bytes!".utf8)
    /// 2025-03-14 09:26:53 UTC.
    static let firstCreation = Date(timeIntervalSince1970: 1_741_944_413)

    static func creationOptions(
        rpID: String? = "example.org", userHandle: [UInt8] = [0xA1, 0xB2, 0xC3, 0xD4], name: String = "alice",
        displayName: String = "Alice Liddell", algorithms: [COSEAlgorithm] = [.edDSA, .es256, .rs256], attestation: String = "none",
        exclude: [[UInt8]] = [], userVerification: String? = nil, extensions: [String: JSONValue]? = nil
    ) -> PublicKeyCredentialCreationOptionsJSON {
        PublicKeyCredentialCreationOptionsJSON(
            rp: RelyingPartyEntity(id: rpID, name: "Example"),
            user: UserEntity(id: Base64URLBytes(userHandle), name: name, displayName: displayName),
            challenge: Base64URLBytes(challenge), pubKeyCredParams: algorithms.map(CredentialParameters.init(alg:)),
            excludeCredentials: exclude.map { CredentialDescriptor(id: $0) },
            authenticatorSelection: AuthenticatorSelection(residentKey: "required", requireResidentKey: true, userVerification: userVerification),
            attestation: attestation, extensions: extensions)
    }

    static func requestOptions(
        rpID: String? = "example.org", allow: [[UInt8]] = [], userVerification: String = "preferred"
    ) -> PublicKeyCredentialRequestOptionsJSON {
        PublicKeyCredentialRequestOptionsJSON(
            challenge: Base64URLBytes(challenge), rpId: rpID, allowCredentials: allow.map { CredentialDescriptor(id: $0) },
            userVerification: userVerification)
    }
}

/// A clock that moves a minute forward each time it is read, from `PasskeyFixtures.firstCreation`.
final class SteppingClock: Sendable {
    private let next = Mutex(PasskeyFixtures.firstCreation)

    func now() -> Date {
        next.withLock { date in
            defer { date = date.addingTimeInterval(60) }
            return date
        }
    }
}

/// A selector that records what it was offered and answers as told.
final class RecordingSelector: PasskeyCredentialSelector {
    private let answer: @Sendable ([String]) -> String?
    private let offered = Mutex<[[String]]>([])

    init(answer: @escaping @Sendable ([String]) -> String?) {
        self.answer = answer
    }

    var offers: [[String]] { offered.withLock { $0 } }

    func selectCredential(keyNames: [String]) async -> String? {
        offered.withLock { $0.append(keyNames) }
        return answer(keyNames)
    }
}

/// A verifier that answers as told and counts how often it was asked.
final class StubVerifier: PasskeyUserVerifier {
    private let result: PasskeyUserVerification
    private let asked = Mutex(0)

    init(_ result: PasskeyUserVerification) {
        self.result = result
    }

    var timesAsked: Int { asked.withLock { $0 } }

    func verifyUser(_ request: PasskeyVerificationRequest) async -> PasskeyUserVerification {
        asked.withLock { $0 += 1 }
        return result
    }
}

/// Runs `body` with a file store in a fresh temporary directory.
@discardableResult
func withPasskeyStore<Result>(_ body: (FilePasskeyStore) async throws -> Result) async throws -> Result {
    try await withTemporaryRoot { root in try await body(FilePasskeyStore(root: root)) }
}
