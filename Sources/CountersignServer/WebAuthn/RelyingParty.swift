import Crypto
import CountersignWebAuthn
import Foundation
import X509

/// `userVerification` (WebAuthn Level 3 §5.8.6).
enum UserVerificationRequirement: String, Sendable, Codable, CaseIterable {
    case required, preferred, discouraged
}

/// `attestation` conveyance (§5.4.7). `enterprise` is not offered: it identifies individual
/// authenticators, which only managed fleets want and Countersign does not configure.
enum AttestationConveyance: String, Sendable, Codable, CaseIterable {
    case none, indirect, direct
}

/// What a relying party does when a credential's signature counter does not increase
/// (§6.1.1): the specification leaves it to the relying party.
enum SignCountRegressionAction: String, Sendable, Codable, CaseIterable {
    /// Fail the sign-in and mark the credential as possibly cloned.
    case reject
    /// Let the sign-in through, mark the credential and record it in the audit log.
    case flag
}

/// One tenant's WebAuthn relying party, resolved from its `PasskeySettings` and the server's
/// public origin: the RP ID and name, the origins a ceremony may run at, and the rules the
/// ceremonies apply.
struct RelyingParty: Sendable {
    /// The RP ID: a registrable domain suffix of the origins' hosts (§5.1.5).
    var id: String
    var name: String
    /// Exact `C.origin` values accepted: web origins, and app origins such as
    /// `android:apk-key-hash:…` (an iOS app with associated domains uses the web origin).
    var origins: Set<String>
    /// Top-level origins under which a ceremony may run in an iframe; empty: never.
    var topOrigins: Set<String>
    var userVerification: UserVerificationRequirement
    var attestation: AttestationConveyance
    /// Whether `none`, self, and untrusted attestation are accepted.
    var allowUnattested: Bool
    var signCountRegression: SignCountRegressionAction
    /// `pubKeyCredParams`, in the order of preference.
    var algorithms: [COSEAlgorithm] = [.es256, .edDSA, .rs256]
    /// Roots that attestation certificate paths may end at.
    var attestationRoots: [Certificate] = []
    /// How long a ceremony's challenge stays usable (the recommended default of §15.1).
    var timeout: Duration = .seconds(300)

    var idHash: [UInt8] { Array(SHA256.hash(data: Array(id.utf8))) }
}
