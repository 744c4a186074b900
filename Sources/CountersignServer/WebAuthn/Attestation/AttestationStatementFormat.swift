import CountersignCBOR
import CountersignWebAuthn
import Foundation

/// What verifying an attestation statement established (WebAuthn Level 3 §6.5.3): its
/// attestation type and, for the types that have one, the certificate path to judge.
struct VerifiedAttestation: Sendable, Equatable {
    enum Kind: String, Sendable {
        case none
        case `self`
        case basic
        case attestationCA = "attca"
        case anonymizationCA = "anonca"
    }

    var format: String
    var kind: Kind
    /// `x5c`, leaf first, as DER; empty for `none` and self attestation.
    var certificateChain: [[UInt8]]
}

/// Why an attestation statement did not verify; `reason` names the rule, for the
/// ceremony's error and the audit log.
struct AttestationFailure: Error, Sendable, Equatable {
    let reason: String

    init(_ reason: String) {
        self.reason = reason
    }
}

/// One attestation statement format's verification procedure (§8.x): given the statement, the
/// authenticator data and the hash of the client data, it checks the statement's syntax and
/// signature and returns the attestation type. Whether the certificate path is trusted is
/// decided afterwards, by `AttestationTrust`, from the tenant's roots.
protocol AttestationStatementFormat: Sendable {
    /// The `fmt` value, compared case-sensitively.
    var identifier: String { get }

    func verify(
        statement: CBORMap, authenticatorData: AuthenticatorData, clientDataHash: [UInt8], at date: Date
    ) throws(AttestationFailure) -> VerifiedAttestation
}

/// The formats Countersign verifies, by identifier.
enum AttestationFormats {
    static let all: [String: any AttestationStatementFormat] = Dictionary(
        uniqueKeysWithValues: ([
            NoneAttestation(), PackedAttestation(), FIDOU2FAttestation(), AppleAttestation(), TPMAttestation(),
        ] as [any AttestationStatementFormat]).map { ($0.identifier, $0) })
}

/// The statement members and checks that `packed`, `tpm`, `fido-u2f` and `apple` share, each
/// failing with the reason a tampered or ill-typed member gives.
enum AttestationStatementMembers {
    /// `alg`: a COSE algorithm identifier Countersign verifies signatures of.
    static func algorithm(in statement: CBORMap) throws(AttestationFailure) -> COSEAlgorithm {
        guard let value = statement[text: "alg"]?.int else { throw AttestationFailure("alg is missing or not an integer") }
        guard let algorithm = COSEAlgorithm(rawValue: value) else {
            throw AttestationFailure("alg \(value) is not an algorithm Countersign verifies")
        }
        return algorithm
    }

    /// `sig`: the attestation signature, a non-empty byte string.
    static func signature(in statement: CBORMap) throws(AttestationFailure) -> [UInt8] {
        guard let signature = statement[text: "sig"]?.bytes else { throw AttestationFailure("sig is missing or not a byte string") }
        guard !signature.isEmpty else { throw AttestationFailure("sig is empty") }
        return signature
    }

    /// Attestation is about a new credential, so the authenticator data must carry one.
    static func attestedCredential(_ data: AuthenticatorData) throws(AttestationFailure) -> AttestedCredentialData {
        guard let credential = data.attestedCredentialData else {
            throw AttestationFailure("the authenticator data carries no attested credential")
        }
        return credential
    }

    /// The attestation signature verifies over `data` with `key` and `algorithm`.
    static func signature(
        _ signature: [UInt8], over data: [UInt8], verifiedBy key: SignatureVerifier, algorithm: COSEAlgorithm, signer: String
    ) throws(AttestationFailure) {
        guard key.isValid(signature, for: data, algorithm: algorithm) else {
            throw AttestationFailure("sig does not verify with the \(signer) key and \(algorithm.name)")
        }
    }
}
