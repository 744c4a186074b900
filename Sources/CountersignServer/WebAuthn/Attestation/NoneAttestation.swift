import CountersignCBOR
import CountersignWebAuthn
import Foundation

/// `none` (WebAuthn Level 3 §8.7): the authenticator, or the client on the user's behalf,
/// gives no attestation. The statement is the empty map; anything in it means a client that
/// replaced a statement without saying so, or a confused authenticator.
struct NoneAttestation: AttestationStatementFormat {
    let identifier = "none"

    func verify(
        statement: CBORMap, authenticatorData: AuthenticatorData, clientDataHash: [UInt8], at date: Date
    ) throws(AttestationFailure) -> VerifiedAttestation {
        try Self.isEmpty(statement)
        return VerifiedAttestation(format: identifier, kind: .none, certificateChain: [])
    }

    static func isEmpty(_ statement: CBORMap) throws(AttestationFailure) {
        guard statement.entries.isEmpty else { throw AttestationFailure("a none attestation statement must be empty") }
    }
}
